package catalogcheck

import (
	"strings"
	"time"
)

// runMail exercises the six Agent Mail tools (issue 21): Bob and Alice
// open mailboxes on the hub's relay, resolve each other's cards (by
// address, card URL and profile), exchange a letter and a threaded reply,
// sync, list and page; every result is checked against both catalogs.
func runMail(r *runner, env Env) {
	t := r.t
	t.Helper()
	A, B := env.Alice, env.Bob
	H := env.Host
	now := time.Now().UnixMilli()

	r.empty(A, "mail_mailboxes_list")
	r.empty(B, "mail_mailbox_publish")
	bob := r.required(B, "mail_mailbox_publish", obj{"routes": []any{H}})
	bobID, bobAddr := str(bob, "mailbox", "mailbox_id"), str(bob, "mailbox", "address")
	if len(list(bob, "published")) != 1 || str(bob, "mailbox", "status") != "open" || get(bob, "mailbox", "key_available") != true {
		t.Errorf("mail_mailbox_publish: %v", bob)
	}
	rotated := r.call(B, "mail_mailbox_publish", obj{"mailbox_id": bobID, "routes": []any{H}, "rotate_key": true})
	if str(rotated, "mailbox", "card_hash") == str(bob, "mailbox", "card_hash") || str(rotated, "mailbox", "address") != bobAddr {
		t.Errorf("mail_mailbox_publish rotate_key: %v", rotated)
	}
	alice := r.call(A, "mail_mailbox_publish", obj{"routes": []any{H}, "expires_at": now + 20*86_400_000,
		"receive_until": now + 40*86_400_000, "max_packet_bytes": 65536})
	aliceID := str(alice, "mailbox", "mailbox_id")
	spare := r.call(A, "mail_mailbox_publish", obj{"routes": []any{H}})
	closed := r.call(A, "mail_mailbox_publish", obj{"mailbox_id": str(spare, "mailbox", "mailbox_id"), "routes": []any{}})
	if str(closed, "mailbox", "status") != "closed" {
		t.Errorf("closing a mailbox: %v", closed)
	}

	// Resolving Bob: by address, by card URL, by his profile.
	r.empty(A, "mail_resolve")
	if res := r.required(A, "mail_resolve", obj{"agent_id": B.ID}); len(list(res, "mailboxes")) != 0 {
		t.Errorf("mail_resolve before any read: %v", res)
	}
	res := r.call(A, "mail_resolve", obj{"agent_id": B.ID, "address": bobAddr})
	if len(list(res, "mailboxes")) != 1 || get(res, "mailboxes", "0", "usable") != true || str(res, "mailboxes", "0", "card", "hash") != str(rotated, "mailbox", "card_hash") {
		t.Errorf("mail_resolve address: %v", res)
	}
	cardURL := H + "/v1/mailboxes/" + bobID + "/card"
	if res := r.call(A, "mail_resolve", obj{"agent_id": B.ID, "card_url": cardURL}); len(list(res, "mailboxes")) != 1 {
		t.Errorf("mail_resolve card_url: %v", res)
	}
	r.call(B, "profile_update", obj{"profile_service": H, "profile": obj{"name": "Bob", "service_endpoints": []any{
		obj{"type": "agent-mail", "url": cardURL, "protocols": []any{"agent-mail/1.0"}},
		obj{"type": "agent-mail", "url": H + "/not-a-card"}}}})
	res = r.call(A, "mail_resolve", obj{"agent_id": B.ID, "profile_service": H})
	if len(list(res, "mailboxes")) != 1 || len(list(res, "errors")) != 1 || str(res, "errors", "0", "code") != "invalid_url" {
		t.Errorf("mail_resolve profile_service: %v", res)
	}

	// A letter to Bob with every input; then his sync, list and reply.
	if e := r.fail(A, "mail_send", obj{}, "invalid_input"); !strings.Contains(e.Message, "to or in_reply_to") {
		t.Errorf("mail_send {}: %v", e)
	}
	// mail_send requires nothing in either catalog's schema but needs to or
	// in_reply_to: {} is refused (above), and a letter needs one of them.
	r.emptyDone["mail_send"], r.requiredOK["mail_send"] = true, true
	sent := r.call(A, "mail_send", obj{"to": bobAddr, "subject": "Hello", "text": "Hi Bob", "expires_at": now + 86_400_000,
		"parts": []any{obj{"media_type": "application/octet-stream", "data": "AAEC", "name": "blob.bin"}}, "reply_mailbox_id": aliceID})
	if str(sent, "status") != "delivered" || str(sent, "message", "delivery", "status") != "delivered" {
		t.Errorf("mail_send: %v", sent)
	}
	msgID, thread := str(sent, "message", "message_id"), str(sent, "message", "thread_id")
	sync := r.empty(B, "mail_sync")
	if len(list(sync, "received")) != 1 || str(sync, "received", "0", "message_id") != msgID {
		t.Errorf("mail_sync: %v", sync)
	}
	if again := r.call(B, "mail_sync", obj{"mailbox_id": bobID}); len(list(again, "received")) != 0 {
		t.Errorf("mail_sync again: %v", again)
	}
	r.fail(B, "mail_sync", obj{"mailbox_id": aliceID}, "invalid_input")
	in := r.call(B, "inbox_next", obj{"kinds": []any{"mail.received"}})
	if str(in, "items", "0", "id") != "mail.received:"+A.ID+":"+msgID || str(in, "items", "0", "message", "summary") != "Hello" {
		t.Errorf("the letter's inbox item: %v", in)
	}
	if l := r.empty(B, "mail_list"); len(list(l, "messages")) != 1 || num(l, "unread_count") != 1 {
		t.Errorf("mail_list {}: %v", l)
	}
	read := r.call(B, "mail_list", obj{"direction": "received", "mailbox_id": bobID, "from": A.ID, "thread_id": thread, "message_id": msgID,
		"unread_only": true, "mark_read": true, "include_data": true, "limit": 5, "cursor": "0"})
	if len(list(read, "messages")) != 1 || num(read, "unread_count") != 0 || str(read, "messages", "0", "parts", "1", "data") != "AAEC" ||
		str(read, "messages", "0", "parts", "0", "text") != "Hi Bob" || !strings.Contains(str(read, "messages", "0", "reply_address"), aliceID) {
		t.Errorf("mail_list: %v", read)
	}
	reply := r.call(B, "mail_send", obj{"in_reply_to": msgID, "text": "Hi Alice"})
	if str(reply, "message", "thread_id") != thread || str(reply, "message", "in_reply_to") != msgID || str(reply, "message", "mailbox_id") != aliceID {
		t.Errorf("mail_send reply: %v", reply)
	}
	if got := r.call(A, "mail_sync", obj{}); len(list(got, "received")) != 1 || str(got, "received", "0", "in_reply_to") != msgID {
		t.Errorf("Alice's mail_sync: %v", got)
	}

	// Alice's cards as the relay holds them, in pages.
	page := r.call(A, "mail_mailboxes_list", obj{"host": H, "limit": 1})
	cur := str(page, "next_cursor")
	if len(list(page, "mailboxes")) != 1 || cur == "" {
		t.Fatalf("mail_mailboxes_list page 1: %v", page)
	}
	if p2 := r.call(A, "mail_mailboxes_list", obj{"host": H, "limit": 1, "cursor": cur}); len(list(p2, "mailboxes")) != 1 {
		t.Errorf("mail_mailboxes_list page 2: %v", p2)
	}
}
