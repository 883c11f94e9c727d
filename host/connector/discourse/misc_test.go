package discourse_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/profile"
	"apconnect/host/engine"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// A room id known on two hosts needs a host; an unknown host is refused.
func TestRoomResolution(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	roomID := createRoom(t, alice, h, "public", nil)
	if _, err := alice.RoomOpen(ctx, alice.sess, discourse.RoomOpenInput{Host: "https://elsewhere.example", RoomID: roomID}); code(err) != engine.CodeHostNotAllowed {
		t.Fatalf("unknown host: %v", err)
	}
	if _, err := alice.RoomsSearch(ctx, alice.sess, discourse.RoomsSearchInput{Host: "https://elsewhere.example"}); code(err) != engine.CodeHostNotAllowed {
		t.Fatalf("search on an unknown host: %v", err)
	}
	// The same room id on a second configured host.
	h2 := startHub(t)
	alice.cfg.Hosts = append(alice.cfg.Hosts, alice.cfg.Hosts[0])
	alice.cfg.Hosts[1].URL, alice.cfg.Hosts[1].Label, alice.cfg.Hosts[1].CAFile = h2.Origin(), "hub2", h2.CAFile()
	a2 := alice.reopen()
	if err := a2.Store.Write(ctx, func(tx *store.Tx) error { _, err := tx.EnsureRoom(ctx, h2.Origin(), roomID, 1); return err }); err != nil {
		t.Fatal(err)
	}
	_, err := a2.RoomState(ctx, a2.sess, discourse.RoomStateInput{RoomID: roomID})
	var ce *engine.Error
	if code(err) != discourse.CodeAmbiguousRoom || !asErr(err, &ce) || len(ce.Data["hosts"].([]string)) != 2 {
		t.Fatalf("ambiguous room: %v", err)
	}
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(a2.RoomState(ctx, a2.sess, discourse.RoomStateInput{RoomID: roomID, Host: h.Origin() + "/"}))
	if st.Sync.Host != h.Origin() {
		t.Fatalf("host %s", st.Sync.Host)
	}
	if _, err := a2.RoomState(ctx, a2.sess, discourse.RoomStateInput{RoomID: "bad room"}); code(err) != engine.CodeInvalidInput {
		t.Fatalf("bad room id: %v", err)
	}
}

// Local write backpressure mirrors the host quota: rate_limited with
// retry_after_ms, before anything is signed.
func TestWriteBackpressure(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "", func(o *connector.Options) { o.WriteLimits = &adp.Limits{MessageRate: 2} })
	roomID := createRoom(t, alice, h, "public", nil)
	for i := 0; i < 2; i++ {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "x", OnHeadMismatch: "send_anyway"}))
	}
	last, _ := alice.Store.Read().LastNonce(ctx)
	_, err := alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "x", OnHeadMismatch: "send_anyway"})
	var ce *engine.Error
	// Two a minute refill one every 30 s: the next is due within 30 s.
	if code(err) != engine.CodeRateLimited || !asErr(err, &ce) || ce.Data["retry_after_ms"].(int64) <= 0 || ce.Data["retry_after_ms"].(int64) > 30_000 {
		t.Fatalf("rate limit: %v", err)
	}
	if now, _ := alice.Store.Read().LastNonce(ctx); now != last {
		t.Fatal("a rate-limited write used a nonce")
	}
}

// inbox_next long-polls until a live record arrives; defer, dismiss and
// the read cursor.
func TestInboxLongPollAndLifecycle(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB0, "")
	bob.Start(ctx)
	roomID := createRoom(t, alice, h, "public", nil)
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	eventually(t, 5*time.Second, "a live stream", func() bool { s, _ := bob.Following(); return s == 1 })
	time.Sleep(200 * time.Millisecond)
	go func() {
		time.Sleep(300 * time.Millisecond)
		alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "wake up", Mentions: []string{bob.id}, OnHeadMismatch: "send_anyway"})
	}()
	start := time.Now()
	res := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{WaitMS: 20000, Kinds: []string{"room.mention"}}))
	if len(res.Items) != 1 || time.Since(start) > 10*time.Second {
		t.Fatalf("long poll: %+v after %v", res, time.Since(start))
	}
	id := res.Items[0].ID
	// Defer into the future: gone until then.
	future := time.Now().Add(time.Hour).UnixMilli()
	must[*connector.InboxAckResult](t, "agent_protocols_inbox_ack")(bob.InboxAck(ctx, bob.sess, connector.InboxAckInput{IDs: []string{id}, Action: "defer", DeferUntil: &future}))
	if r := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.mention"}})); len(r.Items) != 0 {
		t.Fatalf("deferred item returned %+v", r.Items)
	}
	// Defer without a time: back at once.
	must[*connector.InboxAckResult](t, "agent_protocols_inbox_ack")(bob.InboxAck(ctx, bob.sess, connector.InboxAckInput{IDs: []string{id}, Action: "defer"}))
	if r := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.mention"}})); len(r.Items) != 1 {
		t.Fatalf("re-deferred item missing %+v", r.Items)
	}
	ack := must[*connector.InboxAckResult](t, "agent_protocols_inbox_ack")(bob.InboxAck(ctx, bob.sess, connector.InboxAckInput{IDs: []string{id, "inbox_unknown"}, Action: "dismissed"}))
	if len(ack.Acknowledged) != 1 || ack.Acknowledged[0] != id {
		t.Fatalf("ack %+v", ack)
	}
	// A new message by someone else, then mark_read resolves its
	// room.message.new item.
	alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "just chatting", OnHeadMismatch: "send_anyway"})
	r := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{WaitMS: 10000, Kinds: []string{"room.message.new"}}))
	if len(r.Items) != 1 {
		t.Fatalf("message.new %+v", r)
	}
	mr := must[*discourse.RoomMarkReadResult](t, "agent_protocols_room_mark_read")(bob.RoomMarkRead(ctx, bob.sess, discourse.RoomMarkReadInput{RoomID: roomID, ThroughSeq: *r.Items[0].Seq}))
	if mr.UnreadCount != 0 || mr.ReadSeq != *r.Items[0].Seq {
		t.Fatalf("mark read %+v", mr)
	}
	if r := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{})); len(r.Items) != 0 || r.PendingCount != 0 {
		t.Fatalf("inbox after reading %+v", r)
	}
	// Claims expire: the lease ends and the item comes back.
	alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "again", Mentions: []string{bob.id}, OnHeadMismatch: "send_anyway"})
	c1 := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, "s-a", connector.InboxNextInput{WaitMS: 10000, Claim: true, Kinds: []string{"room.mention"}}))
	if len(c1.Items) != 1 {
		t.Fatalf("claim %+v", c1)
	}
	if c2 := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, "s-b", connector.InboxNextInput{Claim: true, Kinds: []string{"room.mention"}})); len(c2.Items) != 0 {
		t.Fatalf("claimed twice %+v", c2)
	}
	// The agent status seen through the live stream (no refresh).
	must[*discourse.AgentStatusSetResult](t, "agent_protocols_agent_status_set")(alice.AgentStatusSet(ctx, alice.sess, discourse.AgentStatusSetInput{RoomID: roomID, State: "working", ClaimID: "ticket-1"}))
	eventually(t, 5*time.Second, "the live status", func() bool {
		r, err := bob.AgentStatusGet(ctx, bob.sess, discourse.AgentStatusGetInput{RoomID: roomID, AgentID: alice.id})
		return err == nil && r.Status != nil && r.Status.ClaimID == "ticket-1"
	})
}

// profile_update enforces the Agent ID; profile reads are verified against
// the signed history and pinned to the greatest nonce: a rollback is
// refused.
func TestProfilesPinnedAndUpdateEnforced(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	var offset atomic.Int64
	p := connectortest.NewProxy(t, h)
	alice := newAgent(t, h, 0xA1, "", withHTTP(p.Client), func(o *connector.Options) {
		o.Clock = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	bob := newAgent(t, h, 0xB0, "")
	if _, err := bob.ProfileUpdate(ctx, bob.sess, profile.ProfileUpdateInput{ProfileService: h.Origin(), Profile: map[string]any{"id": alice.id, "name": "Impostor"}}); code(err) != engine.CodeInvalidInput {
		t.Fatalf("foreign id: %v", err)
	}
	if _, err := bob.ProfileUpdate(ctx, bob.sess, profile.ProfileUpdateInput{ProfileService: "https://profiles.elsewhere.example", Profile: map[string]any{"name": "x"}}); code(err) != engine.CodeHostNotAllowed {
		t.Fatalf("unconfigured service: %v", err)
	}
	v1 := must[*profile.ProfileUpdateResult](t, "agent_protocols_profile_update")(bob.ProfileUpdate(ctx, bob.sess, profile.ProfileUpdateInput{ProfileService: h.Origin(), Profile: map[string]any{"name": "Bob v1", "description": "first"}}))
	if v1.Profile["id"] != bob.id || v1.Envelope["event"].(map[string]any)["payload"].(map[string]any)["id"] != bob.id {
		t.Fatalf("profile %+v", v1)
	}
	must[*profile.ProfileUpdateResult](t, "agent_protocols_profile_update")(bob.ProfileUpdate(ctx, bob.sess, profile.ProfileUpdateInput{ProfileService: h.Origin(), Profile: map[string]any{"name": "Bob v2"}}))

	roomID := createRoom(t, alice, h, "public", nil)
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(alice.RoomState(ctx, alice.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	mg := must[*discourse.RoomMemberGetResult](t, "agent_protocols_room_member_get")(alice.RoomMemberGet(ctx, alice.sess, discourse.RoomMemberGetInput{RoomID: roomID, AgentID: bob.id, IncludeProfile: true}))
	if mg.Member.Profile == nil || mg.Member.Profile.Name != "Bob v2" {
		t.Fatalf("profile %+v", mg.Member.Profile)
	}
	// The service now serves the older, validly signed update.
	env, _ := json.Marshal(v1.Envelope)
	var served atomic.Int64
	p.Lock()
	p.Rewrite = func(path string, body []byte) []byte {
		if strings.HasPrefix(path, "/v1/profiles/") && strings.HasSuffix(path, "/events") {
			served.Add(1)
			return []byte(`{"result":[` + string(env) + `]}`)
		}
		return body
	}
	p.Unlock()
	offset.Store(int64(11 * time.Minute))
	ml := must[*discourse.RoomMembersListResult](t, "agent_protocols_room_members_list")(alice.RoomMembersList(ctx, alice.sess, discourse.RoomMembersListInput{RoomID: roomID, IncludeProfiles: true}))
	for _, m := range ml.Members {
		if m.AgentID == bob.id && (m.Profile == nil || m.Profile.Name != "Bob v2") {
			t.Fatalf("rollback accepted: %+v", m.Profile)
		}
	}
	if served.Load() == 0 {
		t.Fatal("the stale profile was never read")
	}
	pinned, err := alice.Store.Read().Profile(ctx, bob.id)
	if err != nil || !strings.Contains(string(pinned.Document), "Bob v2") {
		t.Fatalf("pinned %v %v", pinned, err)
	}
}

// draft_drop discards without sending.
func TestDraftDrop(t *testing.T) {
	t.Parallel()
	h, alice, bob, roomID := pair(t)
	_ = h
	race(t, alice, bob, roomID, 1)
	held := heldMessage(t, bob, roomID, "drop me")
	res := must[*discourse.DraftDropResult](t, "agent_protocols_draft_drop")(bob.DraftDrop(ctx, bob.sess, discourse.DraftDropInput{DraftID: held.Draft.ID}))
	if res.Status != "dropped" || res.PendingCount != 0 {
		t.Fatalf("drop %+v", res)
	}
	if _, err := bob.DraftDrop(ctx, bob.sess, discourse.DraftDropInput{DraftID: held.Draft.ID}); code(err) != discourse.CodeDraftNotFound {
		t.Fatalf("second drop: %v", err)
	}
}
