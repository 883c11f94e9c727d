package discourse_test

import (
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
)

// The interaction loop of connector spec 4.5 with two agents on the real
// hub: wake up on the inbox, read unread records, announce work, write
// against what was seen, acknowledge, clear the status.
func TestInteractionLoopTwoAgents(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB0, "")
	alice.Start(ctx)
	bob.Start(ctx)

	ident := must[*connector.IdentityCurrentResult](t, "agent_protocols_identity_current")(bob.IdentityCurrent(ctx, bob.sess))
	if ident.AgentID != bob.id || len(ident.Hosts) != 1 || ident.Hosts[0].Host != h.Origin() {
		t.Fatalf("identity %+v", ident)
	}
	roomID := createRoom(t, alice, h, "public", nil)

	open := must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
	if open.Room.Topic != "Test room" || open.Sync.HeadSeq != 1 || open.Sync.PresentedSeq != 1 {
		t.Fatalf("open %+v", open)
	}
	join := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "speaker", Perspective: "reviewer"}))
	if join.Status != discourse.JoinJoined || join.Member == nil || join.Member.Role != "speaker" || *join.Member.Perspective != "reviewer" {
		t.Fatalf("join %+v", join)
	}
	// Alice addresses bob; she has read everything so far.
	must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice.RoomTimeline(ctx, alice.sess, discourse.RoomTimelineInput{RoomID: roomID, UnreadOnly: true, MarkRead: true, Refresh: true}))
	sent := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
		discourse.RoomSendMessageInput{RoomID: roomID, Content: "Bob, can you review the signature section?", Mentions: []string{bob.id}}))
	if sent.Status != discourse.StatusSent || sent.Item == nil || sent.Item.Content != "Bob, can you review the signature section?" {
		t.Fatalf("sent %+v", sent)
	}

	// 1. Bob wakes up on his inbox (live sync delivers the mention).
	next := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{WaitMS: 10000, Claim: true, Kinds: []string{"room.mention"}}))
	if len(next.Items) != 1 || next.Items[0].Kind != "room.mention" || next.Items[0].RoomID != roomID || *next.Items[0].Actor != alice.id {
		t.Fatalf("inbox %+v", next)
	}
	mention := next.Items[0]
	// 2. Read before deciding.
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, UnreadOnly: true, MarkRead: true}))
	last := tl.Items[len(tl.Items)-1]
	// Messages do not move the head: reading them presents the head in force
	// (genesis), which is what a reply is based on.
	if last.EventID != *mention.EventID || tl.UnreadCount != 0 || tl.Sync.PresentedSeq != tl.Sync.HeadSeq || tl.Sync.HeadSeq != 1 {
		t.Fatalf("timeline %+v", tl)
	}
	// 3. Check statuses; 4. announce work.
	sl := must[*discourse.AgentStatusListResult](t, "agent_protocols_agent_status_list")(bob.AgentStatusList(ctx, bob.sess, discourse.AgentStatusListInput{RoomID: roomID}))
	if len(sl.Statuses) != 0 {
		t.Fatalf("statuses %+v", sl.Statuses)
	}
	set := must[*discourse.AgentStatusSetResult](t, "agent_protocols_agent_status_set")(bob.AgentStatusSet(ctx, bob.sess, discourse.AgentStatusSetInput{RoomID: roomID, State: "drafting", Summary: "Reviewing the signature section"}))
	if set.Status.SeenSeq != last.Seq || set.Status.SeenHash == "" {
		t.Fatalf("status seen defaults %+v", set.Status)
	}
	// Alice sees the status (fresh read).
	as := must[*discourse.AgentStatusGetResult](t, "agent_protocols_agent_status_get")(alice.AgentStatusGet(ctx, alice.sess, discourse.AgentStatusGetInput{RoomID: roomID, AgentID: bob.id, Refresh: true}))
	if as.Status == nil || as.Status.State != "drafting" {
		t.Fatalf("alice sees %+v", as.Status)
	}
	// 5. Write against what was seen (base defaults to the presented head).
	reply := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess,
		discourse.RoomSendMessageInput{RoomID: roomID, Content: "Reviewed: looks right.", References: []string{*mention.EventID}}))
	if reply.Status != discourse.StatusSent || reply.Sync.HeadSeq != 1 || reply.Sync.PresentedSeq != 1 || reply.Sync.SyncedSeq != reply.Item.Seq {
		t.Fatalf("reply %+v", reply)
	}
	if len(reply.Item.References) != 1 || reply.Item.References[0] != *mention.EventID {
		t.Fatalf("references not in the payload: %+v", reply.Item)
	}
	// 7. Close the loop.
	ack := must[*connector.InboxAckResult](t, "agent_protocols_inbox_ack")(bob.InboxAck(ctx, bob.sess, connector.InboxAckInput{IDs: []string{mention.ID}, Action: "handled"}))
	if len(ack.Acknowledged) != 1 {
		t.Fatalf("ack %+v", ack)
	}
	clear := time.Now().UnixMilli()
	must[*discourse.AgentStatusSetResult](t, "agent_protocols_agent_status_set")(bob.AgentStatusSet(ctx, bob.sess, discourse.AgentStatusSetInput{RoomID: roomID, State: "idle", ExpiresAt: &clear}))
	// Alice is woken by bob's reply (a new message in a room she is in).
	an := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(alice.InboxNext(ctx, alice.sess, connector.InboxNextInput{WaitMS: 10000, Kinds: []string{"room.message.new"}}))
	if len(an.Items) != 1 || *an.Items[0].Seq != reply.Item.Seq {
		t.Fatalf("alice inbox %+v", an)
	}
	eventually(t, 5*time.Second, "status cleared", func() bool {
		r, err := alice.AgentStatusList(ctx, alice.sess, discourse.AgentStatusListInput{RoomID: roomID, Refresh: true})
		return err == nil && len(r.Statuses) == 0
	})
	// Lists and member views.
	rl := must[*discourse.RoomsResult](t, "agent_protocols_rooms_list")(bob.RoomsList(ctx, bob.sess, discourse.RoomsListInput{Membership: "member"}))
	if len(rl.Rooms) != 1 || rl.Rooms[0].RoomID != roomID || rl.Rooms[0].Role == nil || *rl.Rooms[0].Role != "speaker" {
		t.Fatalf("rooms list %+v", rl)
	}
	for status, n := range map[string]int{"active": 1, "ended": 0} {
		rs := must[*discourse.RoomsResult](t, "agent_protocols_rooms_list")(bob.RoomsList(ctx, bob.sess, discourse.RoomsListInput{Status: status}))
		if len(rs.Rooms) != n {
			t.Fatalf("rooms with status %s: %+v", status, rs.Rooms)
		}
	}
	ml := must[*discourse.RoomMembersListResult](t, "agent_protocols_room_members_list")(bob.RoomMembersList(ctx, bob.sess, discourse.RoomMembersListInput{RoomID: roomID}))
	if len(ml.Members) != 2 {
		t.Fatalf("members %+v", ml.Members)
	}
	mg := must[*discourse.RoomMemberGetResult](t, "agent_protocols_room_member_get")(bob.RoomMemberGet(ctx, bob.sess, discourse.RoomMemberGetInput{RoomID: roomID, AgentID: alice.id, IncludeRecentActivity: true}))
	if !mg.Member.IsCreator || len(mg.Recent) == 0 {
		t.Fatalf("member get %+v", mg)
	}
	must[*connector.HostsListResult](t, "agent_protocols_hosts_list")(bob.HostsList(ctx, bob.sess))
	search := must[*discourse.RoomsResult](t, "agent_protocols_rooms_search")(bob.RoomsSearch(ctx, bob.sess, discourse.RoomsSearchInput{Host: h.Origin()}))
	if len(search.Rooms) != 1 || !search.Rooms[0].Known {
		t.Fatalf("search %+v", search)
	}
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID}))
	if st.Room.SelfMember == nil || st.Room.MembersCount != 2 {
		t.Fatalf("state %+v", st.Room)
	}
}
