package mail_test

import (
	"strings"
	"testing"

	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/mail"
	"apconnect/host/store"
)

// A letter from Alice to Bob and Bob's threaded reply, through the hub's
// relay: delivered at once, opened by Bob's sync into a letter and an
// inbox item, its relay copy deleted, Alice's reply card pinned, and the
// reply read by Alice's sync.
func TestLetterAndReply(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	alice, bob := newAgent(t, h, 0xA1, via(p)), newAgent(t, h, 0xB1, via(p))
	bobBox := bob.mailbox(h.Origin())
	aliceBox := alice.mailbox(h.Origin())
	if !strings.HasPrefix(bobBox.Address, bob.id+"/mail/"+bobBox.MailboxID+"?route=") || !bobBox.KeyAvailable || bobBox.Status != "open" {
		t.Fatalf("mailbox %+v", bobBox)
	}
	sent := alice.send(mail.SendInput{To: bobBox.Address, Subject: ptr("Plans"), Text: ptr("Lunch on Friday?"), ReplyMailboxID: aliceBox.MailboxID})
	if sent.Status != "delivered" || sent.Message.Delivery.PacketID == "" || sent.Message.From != alice.id || sent.Message.To != bob.id {
		t.Fatalf("send: %+v", sent)
	}
	got := bob.sync()
	if len(got.Received) != 1 || got.Received[0].MessageID != sent.Message.MessageID || *got.Received[0].Parts[0].Text != "Lunch on Friday?" ||
		got.Received[0].ReplyAddress == "" || got.PendingInboxCount != 1 || len(got.Errors) != 0 {
		t.Fatalf("sync: %+v", got)
	}
	// The relay copy is gone, and a second sync finds nothing.
	if again := bob.sync(); len(again.Received) != 0 || len(again.Errors) != 0 {
		t.Fatalf("second sync: %+v", again)
	}
	items, _, err := bob.conn.Engine().PendingInbox(ctx, 10)
	if err != nil || len(items) != 1 {
		t.Fatalf("inbox %v %v", items, err)
	}
	it := items[0]
	if it.ID != "mail.received:"+alice.id+":"+sent.Message.MessageID || it.Kind != "mail.received" || it.RoomID != "" ||
		it.Message["summary"] != "Plans" || it.SuggestedTools[0] != "agent_protocols_mail_list" || *it.Actor != alice.id {
		t.Fatalf("inbox item %+v", it)
	}
	// Read with mark_read: the unread count drops.
	unread := bob.list(mail.ListInput{Direction: "received", UnreadOnly: true, MarkRead: true})
	if len(unread.Messages) != 1 || !*unread.Messages[0].Read || unread.UnreadCount != 0 {
		t.Fatalf("list: %+v", unread)
	}
	// The reply goes to the reply card and joins the thread.
	reply := bob.send(mail.SendInput{InReplyTo: sent.Message.MessageID, Text: ptr("Yes.")})
	if reply.Status != "delivered" || reply.Message.ThreadID != sent.Message.ThreadID || reply.Message.InReplyTo != sent.Message.MessageID ||
		reply.Message.MailboxID != aliceBox.MailboxID {
		t.Fatalf("reply: %+v", reply)
	}
	back := alice.sync()
	if len(back.Received) != 1 || back.Received[0].InReplyTo != sent.Message.MessageID {
		t.Fatalf("Alice's sync: %+v", back)
	}
	thread := alice.list(mail.ListInput{ThreadID: &sent.Message.ThreadID})
	if len(thread.Messages) != 2 || thread.Messages[0].Direction != "sent" || thread.Messages[1].Direction != "received" {
		t.Fatalf("thread: %+v", thread)
	}
	// Views of the mailboxes.
	boxes := must[*mail.MailboxesListResult](t, "agent_protocols_mail_mailboxes_list")(bob.MailboxesList(ctx, "s", mail.MailboxesListInput{}))
	if len(boxes.Mailboxes) != 1 || boxes.Mailboxes[0].UnreadCount != 0 {
		t.Fatalf("mailboxes %+v", boxes)
	}
	// Blank filters match nothing (as the SDK).
	if l := bob.list(mail.ListInput{MailboxID: ptr(""), ThreadID: ptr("")}); len(l.Messages) != 0 {
		t.Fatalf("blank filters: %+v", l)
	}
}

// Letters survive a restart, and a sent letter is kept with its delivery.
func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	alice, bob := newAgent(t, h, 0xA2), newAgent(t, h, 0xB2)
	box := bob.mailbox(h.Origin())
	sent := alice.send(mail.SendInput{To: box.Address, Text: ptr("one")})
	bob.sync()
	alice, bob = alice.reopen(), bob.reopen()
	if l := alice.list(mail.ListInput{Direction: "sent"}); len(l.Messages) != 1 || l.Messages[0].Delivery.Status != "delivered" {
		t.Fatalf("sent after restart: %+v", l)
	}
	if l := bob.list(mail.ListInput{Direction: "received"}); len(l.Messages) != 1 || l.Messages[0].MessageID != sent.Message.MessageID {
		t.Fatalf("received after restart: %+v", l)
	}
	// Bob's key opens what arrives after the restart.
	alice.send(mail.SendInput{To: box.Address, Text: ptr("two")})
	if got := bob.sync(); len(got.Received) != 1 || *got.Received[0].Parts[0].Text != "two" {
		t.Fatalf("after restart: %+v", got)
	}
}

// Paging and filters of mail_list, with mark_read and unread_only.
func TestListPaging(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	alice, bob := newAgent(t, h, 0xA3), newAgent(t, h, 0xB3)
	box := bob.mailbox(h.Origin())
	for i := range 5 {
		alice.send(mail.SendInput{To: box.Address, Text: ptr(strings.Repeat("x", i+1))})
	}
	if got := bob.sync(); len(got.Received) != 5 {
		t.Fatalf("sync: %+v", got)
	}
	first := bob.list(mail.ListInput{UnreadOnly: true, MarkRead: true, Limit: 2})
	if len(first.Messages) != 2 || first.NextCursor != "0" || first.UnreadCount != 3 {
		t.Fatalf("page 1: %+v", first)
	}
	second := bob.list(mail.ListInput{UnreadOnly: true, MarkRead: true, Limit: 2, Cursor: first.NextCursor})
	if len(second.Messages) != 2 || second.Messages[0].MessageID == first.Messages[0].MessageID || second.UnreadCount != 1 {
		t.Fatalf("page 2: %+v", second)
	}
	all := bob.list(mail.ListInput{Limit: 3})
	if len(all.Messages) != 3 || all.NextCursor != "3" {
		t.Fatalf("all page 1: %+v", all)
	}
	rest := bob.list(mail.ListInput{Limit: 3, Cursor: "3"})
	if len(rest.Messages) != 2 || rest.NextCursor != "" {
		t.Fatalf("all page 2: %+v", rest)
	}
	if l := bob.list(mail.ListInput{From: &alice.id, MessageID: &first.Messages[0].MessageID}); len(l.Messages) != 1 {
		t.Fatalf("by from and message_id: %+v", l)
	}
	rows, _, _ := bob.conn.Store().Read().Letters(ctx, store.LetterQuery{UnreadOnly: true})
	if len(rows) != 1 {
		t.Fatalf("%d unread rows", len(rows))
	}
}
