package discourse_test

import (
	"context"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
	"apconnect/host/room"
)

func pollRoom(t *testing.T, a *agent, h interface{ Origin() string }) (string, string) {
	t.Helper()
	now := time.Now().UnixMilli()
	in := discourse.RoomCreateInput{Host: h.Origin(), Topic: "Poll", Visibility: "public", StartTime: now - 1000, EndTime: now + 3600_000,
		Policy: map[string]any{"open_roles": []any{"speaker", "observer"}},
		Types:  []map[string]any{{"use": "adp:deliberation/1.0"}}}
	res := must[*discourse.RoomCreateResult](t, "agent_protocols_room_create")(a.RoomCreate(ctx, a.sess, in))
	roomID := res.Room.RoomID
	poll := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(a.RoomSubmitEvent(ctx, a.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "poll.create", Payload: map[string]any{"poll_id": "p", "question": "A or B?",
			"options": []any{map[string]any{"id": "a", "label": "A"}, map[string]any{"id": "b", "label": "B"}}}}))
	return roomID, poll.Item.EventID
}

func customItems(t *testing.T, a *agent) []connector.InboxItem {
	t.Helper()
	res := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(a.InboxNext(ctx, a.sess, connector.InboxNextInput{Kinds: []string{room.KindEventCustom}}))
	return res.Items
}

// room_watch: a watched custom type of a room the agent never joined is
// followed in the background (the hub streams only to members, so its
// history is polled) and each new record of it by another agent becomes a
// room.event.custom item; the watch survives a restart; [] removes it.
func TestRoomWatchFollowsWithoutJoining(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB2, "")
	dave := newAgent(t, h, 0xD4, "")
	roomID, pollID := pollRoom(t, alice, h)
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "speaker"}))

	// Reading before any watch, then a watch of a type the room lacks.
	w := must[*discourse.RoomWatchResult](t, "agent_protocols_room_watch")(dave.RoomWatch(ctx, dave.sess, discourse.RoomWatchInput{RoomID: roomID}))
	if len(w.Types) != 0 || w.Sync.SyncedSeq < 2 {
		t.Fatalf("read: %+v", w)
	}
	for _, bad := range []string{"message.create", "no.such"} {
		types := []string{bad}
		if _, err := dave.RoomWatch(ctx, dave.sess, discourse.RoomWatchInput{RoomID: roomID, Types: &types}); code(err) != discourse.CodeTypeNotDefined {
			t.Fatalf("watching %s: %v", bad, err)
		}
	}
	types := []string{"poll.vote", "poll.vote"}
	w = must[*discourse.RoomWatchResult](t, "agent_protocols_room_watch")(dave.RoomWatch(ctx, dave.sess, discourse.RoomWatchInput{RoomID: roomID, Types: &types}))
	if len(w.Types) != 1 || w.Types[0] != "poll.vote" {
		t.Fatalf("set: %+v", w)
	}

	bg, cancel := context.WithCancel(ctx)
	defer cancel()
	dave.Start(bg)
	vote := func(a *agent, option string) string {
		t.Helper()
		r := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(a.RoomSubmitEvent(ctx, a.sess, discourse.RoomSubmitEventInput{
			RoomID: roomID, Type: "poll.vote", Payload: map[string]any{"poll_event_id": pollID, "option_ids": []any{option}}}))
		return r.Item.EventID
	}
	v1 := vote(bob, "a")
	eventually(t, 10*time.Second, "the watched vote in dave's inbox, without a refresh", func() bool {
		items := customItems(t, dave)
		return len(items) == 1 && *items[0].EventID == v1 && items[0].Reason == "watched_type" && items[0].Priority == room.PriorityNormal
	})
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(dave.RoomState(ctx, dave.sess, discourse.RoomStateInput{RoomID: roomID}))
	if st.Room.SelfMember != nil {
		t.Fatalf("dave is a member: %+v", st.Room.SelfMember)
	}
	if streams, polled := dave.Following(); streams+polled != 1 {
		t.Fatalf("dave follows %d streams and %d polled rooms, want the watched room", streams, polled)
	}

	// A restart keeps the watch.
	cancel()
	dave = dave.reopen()
	w = must[*discourse.RoomWatchResult](t, "agent_protocols_room_watch")(dave.RoomWatch(ctx, dave.sess, discourse.RoomWatchInput{RoomID: roomID}))
	if len(w.Types) != 1 {
		t.Fatalf("after a restart: %+v", w)
	}
	v2 := vote(alice, "b")
	must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(dave.RoomTimeline(ctx, dave.sess, discourse.RoomTimelineInput{RoomID: roomID, Refresh: true}))
	items := customItems(t, dave)
	if len(items) != 2 || *items[1].EventID != v2 {
		t.Fatalf("after a restart: %+v", items)
	}
	// Dave's own votes make no item; [] stops the watch.
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(dave.RoomJoin(ctx, dave.sess, discourse.RoomJoinInput{RoomID: roomID, Role: "speaker"}))
	vote(dave, "a")
	none := []string{}
	if w := must[*discourse.RoomWatchResult](t, "agent_protocols_room_watch")(dave.RoomWatch(ctx, dave.sess, discourse.RoomWatchInput{RoomID: roomID, Types: &none})); len(w.Types) != 0 {
		t.Fatalf("cleared: %+v", w)
	}
	vote(bob, "b")
	must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(dave.RoomTimeline(ctx, dave.sess, discourse.RoomTimelineInput{RoomID: roomID, Refresh: true}))
	if items := customItems(t, dave); len(items) != 2 {
		t.Fatalf("own vote or unwatched vote made an item: %+v", items)
	}
}

// room_timeline with source remote verifies the host's whole history from
// genesis and stores nothing: a tampered record fails the call, the local
// state and read cursor stay as they were.
func TestRemoteTimelineVerifies(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	roomID, _ := pollRoom(t, alice, h)
	for i := 0; i < 3; i++ {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "m"}))
	}
	p := connectortest.NewProxy(t, h)
	bob := newAgent(t, h, 0xB2, "", withHTTP(p.Client))
	got := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{
		RoomID: roomID, Source: discourse.SourceRemote, AfterSeq: 2, Limit: 2, IncludeRecords: true}))
	if len(got.Items) != 2 || got.Items[0].Seq != 3 || got.NextAfterSeq == nil || got.History.Source != "remote" || got.History.FirstSeq != 1 ||
		got.History.LastSeq != 5 || got.History.Truncated || got.Items[0].Record == nil || got.Sync.HeadSeq != 1 || got.Sync.SyncedSeq != 5 {
		t.Fatalf("remote: %+v", got)
	}
	if row, err := bob.Store.Read().RoomAt(ctx, h.Origin(), roomID); err == nil {
		t.Fatalf("a remote read stored the room: %+v", row)
	}
	p.SetTamper(func(recs []map[string]any) []map[string]any {
		for _, r := range recs {
			if connectortest.SeqOf(r) == 4 {
				env := r["envelope"].(map[string]any)
				sig := []byte(env["signature"].(string))
				sig[3] ^= 1
				env["signature"] = string(sig)
			}
		}
		return recs
	})
	_, err := bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Source: discourse.SourceRemote})
	var ce *engine.Error
	if !asErr(err, &ce) || ce.Code != discourse.CodeVerificationFailed || ce.Data["seq"] != int64(4) {
		t.Fatalf("a tampered history: %v (%+v)", err, ce)
	}
	if _, err := bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Source: discourse.SourceRemote, MarkRead: true}); code(err) != engine.CodeInvalidInput {
		t.Fatalf("remote with mark_read: %v", err)
	}
}

// rooms_list scopes: known filters local state (by host too), public reads
// the host's directory, mine the host's rooms of the agent; the filters of
// one scope are refused in another.
func TestRoomsListScopes(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB2, "")
	pub := createRoom(t, alice, h, "public", func(in *discourse.RoomCreateInput) { in.Tags = []string{"ops"} })
	createRoom(t, alice, h, "restricted", nil)
	known := must[*discourse.RoomsResult](t, "agent_protocols_rooms_list")(bob.RoomsList(ctx, bob.sess, discourse.RoomsListInput{}))
	if len(known.Rooms) != 0 {
		t.Fatalf("bob knows %+v", known)
	}
	public := must[*discourse.RoomsResult](t, "agent_protocols_rooms_list")(bob.RoomsList(ctx, bob.sess, discourse.RoomsListInput{Scope: "public", Host: h.Origin(), Tag: "ops"}))
	if len(public.Rooms) != 1 || public.Rooms[0].RoomID != pub || public.Rooms[0].Known {
		t.Fatalf("public: %+v", public)
	}
	mine := must[*discourse.RoomsResult](t, "agent_protocols_rooms_list")(alice.RoomsList(ctx, alice.sess, discourse.RoomsListInput{Scope: "mine", Host: h.Origin()}))
	if len(mine.Rooms) != 2 || mine.Rooms[0].Membership == "" || mine.Rooms[0].Role == nil {
		t.Fatalf("mine: %+v", mine)
	}
	byHost := must[*discourse.RoomsResult](t, "agent_protocols_rooms_list")(alice.RoomsList(ctx, alice.sess, discourse.RoomsListInput{Scope: "known", Host: h.Origin()}))
	if len(byHost.Rooms) != 2 {
		t.Fatalf("known on the host: %+v", byHost)
	}
	for _, in := range []discourse.RoomsListInput{
		{Scope: "public"},
		{Scope: "mine"},
		{Scope: "public", Host: h.Origin(), Membership: "member"},
		{Tag: "ops"},
		{Scope: "mine", Host: h.Origin(), Keyword: "x"},
		{Membership: "left"},
		{Scope: "everywhere"},
	} {
		if _, err := alice.RoomsList(ctx, alice.sess, in); code(err) != engine.CodeInvalidInput {
			t.Errorf("%+v: %v, want invalid_input", in, err)
		}
	}
	if _, err := alice.RoomsList(ctx, alice.sess, discourse.RoomsListInput{Host: "https://elsewhere.example"}); code(err) != engine.CodeHostNotAllowed {
		t.Errorf("an unknown host: %v", err)
	}
}
