package discourse_test

import (
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/engine"
)

// Join approval across two agents: a restricted room, a join request
// (never submitted twice), the reviewer's inbox item, an approval with
// another role than requested, the role mismatch and the completion.
func TestJoinApprovalAcrossAgents(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB0, "")
	alice.Start(ctx)
	roomID := createRoom(t, alice, h, "restricted", nil)

	r1 := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{
		Host: h.Origin(), RoomID: roomID, Role: "speaker", Perspective: "security reviewer", Reason: "I review signatures"}))
	if r1.Status != discourse.JoinApprovalRequired || r1.JoinRequest["status"] != "pending" {
		t.Fatalf("first join %+v", r1)
	}
	reqID, _ := r1.JoinRequest["id"].(string)
	r2 := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "speaker"}))
	if r2.Status != discourse.JoinApprovalRequired || r2.JoinRequest["id"] != reqID {
		t.Fatalf("second join %+v", r2)
	}
	rooms := must[*discourse.RoomsResult](t, "agent_protocols_rooms_list")(bob.RoomsList(ctx, bob.sess, discourse.RoomsListInput{Membership: "pending"}))
	if len(rooms.Rooms) != 1 {
		t.Fatalf("pending rooms %+v", rooms)
	}

	// The reviewer is told (live room.join_request notice or poll).
	in := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(alice.InboxNext(ctx, alice.sess, connector.InboxNextInput{Kinds: []string{"room.join.requested"}, WaitMS: 10000}))
	if len(in.Items) != 1 || *in.Items[0].EventID != reqID || *in.Items[0].Actor != bob.id {
		t.Fatalf("reviewer inbox %+v", in)
	}
	list := must[*discourse.JoinRequestsListResult](t, "agent_protocols_join_requests_list")(alice.JoinRequestsList(ctx, alice.sess, discourse.JoinRequestsListInput{RoomID: roomID, Status: "pending"}))
	if len(list.JoinRequests) != 1 || list.JoinRequests[0]["id"] != reqID {
		t.Fatalf("one request expected (never resubmitted): %+v", list.JoinRequests)
	}
	if _, err := alice.JoinRequestReview(ctx, alice.sess, discourse.JoinRequestReviewInput{RoomID: roomID, RequestID: reqID, Decision: "approve"}); code(err) != engine.CodeInvalidInput {
		t.Fatalf("approval without a role: %v", err)
	}
	rev := must[*discourse.RecordResult](t, "agent_protocols_join_request_review")(alice.JoinRequestReview(ctx, alice.sess, discourse.JoinRequestReviewInput{
		RoomID: roomID, RequestID: reqID, Decision: "approve", Role: "observer", Reason: "start by listening"}))
	if rev.Sync.SyncedSeq != 2 {
		t.Fatalf("review %+v", rev)
	}
	after := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(alice.InboxNext(ctx, alice.sess, connector.InboxNextInput{Kinds: []string{"room.join.requested"}}))
	if len(after.Items) != 0 {
		t.Fatalf("reviewed request still in the inbox: %+v", after.Items)
	}

	// Completion: the approved role only.
	_, err := bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "speaker"})
	var ce *engine.Error
	if code(err) != discourse.CodeRoleMismatch || !asErr(err, &ce) || ce.Data["approved_role"] != "observer" {
		t.Fatalf("role mismatch: %v", err)
	}
	done := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "observer"}))
	if done.Status != discourse.JoinJoined || done.Member.Role != "observer" || done.Member.Status != "active" || *done.Member.Perspective != "security reviewer" || len(done.Record) == 0 {
		t.Fatalf("completion %+v", done)
	}
	approved := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.join.approved"}}))
	if len(approved.Items) != 1 {
		t.Fatalf("approval inbox %+v", approved)
	}
	again := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "observer"}))
	if again.Status != discourse.JoinJoined {
		t.Fatalf("join of a member %+v", again)
	}
	// An observer may not write discussion content: refused locally.
	last, _ := bob.Store.Read().LastNonce(ctx)
	if _, err := bob.RoomSendMessage(ctx, bob.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "hi"}); code(err) == "" || code(err) == engine.CodeInternal {
		t.Fatalf("observer message: %v", err)
	}
	if now, _ := bob.Store.Read().LastNonce(ctx); now != last {
		t.Fatal("a refused write used a nonce")
	}
}

// Removal and ban, as the moderator and the removed agents see them.
func TestRemovalAndBanInMemberViews(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB0, "")
	carol := newAgent(t, h, 0xC0, "")
	roomID := createRoom(t, alice, h, "public", nil)
	for _, a := range []*agent{bob, carol} {
		must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(a.RoomJoin(ctx, a.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	}
	must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(alice.RoomState(ctx, alice.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	for _, p := range []map[string]any{{"member": carol.id, "reason": "off topic"}, {"member": bob.id, "ban": true}} {
		res := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{
			RoomID: roomID, Type: "room.member.remove", Payload: p}))
		if res.Status != discourse.StatusSent {
			t.Fatalf("remove %+v", res)
		}
	}
	want := map[string]int{"banned": 1, "removed": 1, "active": 1, "all": 3}
	for status, n := range want {
		ml := must[*discourse.RoomMembersListResult](t, "agent_protocols_room_members_list")(alice.RoomMembersList(ctx, alice.sess, discourse.RoomMembersListInput{RoomID: roomID, Status: status}))
		if len(ml.Members) != n {
			t.Fatalf("status %s: %d members (%+v)", status, len(ml.Members), ml.Members)
		}
	}
	mg := must[*discourse.RoomMemberGetResult](t, "agent_protocols_room_member_get")(alice.RoomMemberGet(ctx, alice.sess, discourse.RoomMemberGetInput{RoomID: roomID, AgentID: bob.id}))
	if mg.Member.Status != "banned" || mg.Member.LeftSeq == nil {
		t.Fatalf("banned member %+v", mg.Member)
	}
	// The banned agent learns it from the verified history.
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	if st.Room.SelfMember == nil || st.Room.SelfMember.Status != "banned" {
		t.Fatalf("bob's view of himself %+v", st.Room.SelfMember)
	}
	in := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.member.removed"}}))
	if len(in.Items) != 1 || in.Items[0].Reason != "member_banned" {
		t.Fatalf("bob's inbox %+v", in)
	}
	// A banned agent cannot join directly; it may ask.
	rj := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "speaker"}))
	if rj.Status != discourse.JoinApprovalRequired {
		t.Fatalf("banned join %+v", rj)
	}
	cs := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(carol.RoomState(ctx, carol.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	if cs.Room.SelfMember.Status != "removed" {
		t.Fatalf("carol %+v", cs.Room.SelfMember)
	}
}

// An approval reaches the applicant by itself: the background sync re-reads
// pending own join requests, applies the approving review (membership and a
// room.join.approved item) without a second room_join, and a follower that
// was waiting for membership (the room was opened with subscribe) starts its
// live stream at once instead of after the slow poll interval.
func TestApprovalArrivesWithoutAsking(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	slowPoll := func(o *connector.Options) { o.PollInterval = time.Minute; o.JoinPollInterval = 100 * time.Millisecond }
	bob := newAgent(t, h, 0xB0, "", slowPoll)
	alice.Start(ctx)
	bob.Start(ctx)
	// Public, so bob can read it before joining, but nobody joins openly.
	roomID := createRoom(t, alice, h, "public", func(in *discourse.RoomCreateInput) {
		in.Policy = map[string]any{"open_roles": []any{}}
	})

	must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID, Subscribe: ptr(true)}))
	r1 := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "speaker"}))
	if r1.Status != discourse.JoinApprovalRequired {
		t.Fatalf("join %+v", r1)
	}
	reqID, _ := r1.JoinRequest["id"].(string)
	must[*discourse.RecordResult](t, "agent_protocols_join_request_review")(alice.JoinRequestReview(ctx, alice.sess, discourse.JoinRequestReviewInput{
		RoomID: roomID, RequestID: reqID, Decision: "approve", Role: "speaker"}))

	approved := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.join.approved"}, WaitMS: 10000}))
	if len(approved.Items) != 1 {
		t.Fatalf("no room.join.approved without asking: %+v", approved)
	}
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID}))
	if st.Room.SelfMember == nil || st.Room.SelfMember.Status != "active" || st.Room.SelfMember.Role != "speaker" {
		t.Fatalf("bob is not an active speaker locally: %+v", st.Room.SelfMember)
	}

	// The live stream is up well before the one-minute poll would run.
	eventually(t, 10*time.Second, "bob's live stream", func() bool { n, _ := bob.Following(); return n == 1 })
	must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{
		RoomID: roomID, Content: "Welcome, Bob.", Mentions: []string{bob.id}}))
	in := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.mention"}, WaitMS: 10000}))
	if len(in.Items) != 1 {
		t.Fatalf("mention not delivered live: %+v", in)
	}
}
func ptr[T any](v T) *T { return &v }
