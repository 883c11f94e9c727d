package discourse_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"apconnect/host/connector/discourse"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
)

// hubRoom reads the room resource from the hub directly.
func hubRoom(t testing.TB, h *hubtest.Hub, roomID string) (seq int64, head int64) {
	t.Helper()
	r := h.Do(http.MethodGet, "/v1/rooms/"+roomID, nil, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("room read: %d %s", r.Status, r.Body)
	}
	var res struct {
		Seq  int64 `json:"seq"`
		Head struct {
			Seq int64 `json:"seq"`
		} `json:"head"`
	}
	if err := json.Unmarshal(r.Body, &res); err != nil {
		t.Fatal(err)
	}
	return res.Seq, res.Head.Seq
}

// pair is a room of alice (creator) with bob as a speaker. bob's connector
// has no background sync, so its local state lags behind the hub until it
// reads: a write of bob after alice moved the head meets the host's head
// check.
func pair(t *testing.T) (*hubtest.Hub, *agent, *agent, string) {
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB0, "")
	roomID := createRoom(t, alice, h, "public", func(in *discourse.RoomCreateInput) {
		in.Types = []map[string]any{{"use": "adp:reactions/1.0"}}
	})
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	return h, alice, bob, roomID
}

// race makes bob read the room (presenting its head), then alice move the
// head: a room.update of the agenda, a head-advancing record. (Messages
// never move the head, so they never race: see
// TestConcurrentMessagesAreSent.)
func race(t *testing.T, alice, bob *agent, roomID string, n int) {
	t.Helper()
	must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Refresh: true, UnreadOnly: true, MarkRead: true}))
	for i := 0; i < n; i++ {
		// alice writes on her latest head (send_anyway: she does not care).
		res := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess,
			discourse.RoomSubmitEventInput{RoomID: roomID, Type: "room.update", Payload: map[string]any{"agenda": fmt.Sprintf("agenda %d", i)}, OnHeadMismatch: "send_anyway"}))
		if res.Status != discourse.StatusSent || res.Sync.HeadSeq != res.Item.Seq {
			t.Fatalf("alice's room.update: %s, head %d", res.Status, res.Sync.HeadSeq)
		}
	}
}

func heldMessage(t *testing.T, bob *agent, roomID, text string) *discourse.WriteResult {
	t.Helper()
	res := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: text}))
	if res.Status != discourse.StatusHeld || res.Draft == nil || res.Reason != "room_head_mismatch" {
		t.Fatalf("want held, got %+v", res)
	}
	if len(res.Changes) == 0 || res.Changes[len(res.Changes)-1].Seq != res.Sync.HeadSeq || res.Sync.PresentedSeq != res.Sync.HeadSeq {
		t.Fatalf("held without the changes or the head presented: %+v", res)
	}
	if res.Draft.Draft["content"] != text || res.Draft.Kind != "message" || len(res.Draft.Options) != 4 {
		t.Fatalf("draft %+v", res.Draft)
	}
	return res
}

// A held draft from a real race (the host refuses the stale head, the
// connector syncs and holds), then each of the four actions.
func TestHeldDraftActions(t *testing.T) {
	t.Parallel()
	h, alice, bob, roomID := pair(t)

	// revise
	race(t, alice, bob, roomID, 1)
	held := heldMessage(t, bob, roomID, "first take")
	list := must[*discourse.DraftsListResult](t, "agent_protocols_drafts_list")(bob.DraftsList(ctx, bob.sess, discourse.DraftsListInput{RoomID: roomID}))
	if len(list.Drafts) != 1 || list.Drafts[0].ID != held.Draft.ID {
		t.Fatalf("drafts %+v", list)
	}
	got := must[*discourse.DraftGetResult](t, "agent_protocols_draft_get")(bob.DraftGet(ctx, bob.sess, discourse.DraftGetInput{DraftID: held.Draft.ID}))
	// Everything after the base: bob's own join (a signal record, which did
	// not move the head he saw) and alice's room.update.
	if len(got.Changes) != 2 || got.Changes[1].Type != "room.update" {
		t.Fatalf("changes %+v", got.Changes)
	}
	revised := "revised take"
	res := must[*discourse.WriteResult](t, "agent_protocols_draft_commit")(bob.DraftCommit(ctx, bob.sess, discourse.DraftCommitInput{DraftID: held.Draft.ID, Action: "revise", Content: &revised}))
	if res.Status != discourse.StatusSent || res.Item.Content != revised {
		t.Fatalf("revise %+v", res)
	}
	if l := must[*discourse.DraftsListResult](t, "agent_protocols_drafts_list")(bob.DraftsList(ctx, bob.sess, discourse.DraftsListInput{})); len(l.Drafts) != 0 {
		t.Fatalf("draft kept after send: %+v", l)
	}

	// send_as_is
	race(t, alice, bob, roomID, 1)
	held = heldMessage(t, bob, roomID, "as is")
	res = must[*discourse.WriteResult](t, "agent_protocols_draft_commit")(bob.DraftCommit(ctx, bob.sess, discourse.DraftCommitInput{DraftID: held.Draft.ID, Action: "send_as_is"}))
	if res.Status != discourse.StatusSent || res.Item.Content != "as is" {
		t.Fatalf("send_as_is %+v", res)
	}

	// stay_silent: nothing reaches the host.
	race(t, alice, bob, roomID, 1)
	held = heldMessage(t, bob, roomID, "never mind")
	before, _ := hubRoom(t, h, roomID)
	res = must[*discourse.WriteResult](t, "agent_protocols_draft_commit")(bob.DraftCommit(ctx, bob.sess, discourse.DraftCommitInput{DraftID: held.Draft.ID, Action: "stay_silent"}))
	if res.Status != discourse.StatusDropped || res.DraftID != held.Draft.ID || *res.PendingCount != 0 {
		t.Fatalf("stay_silent %+v", res)
	}
	if after, _ := hubRoom(t, h, roomID); after != before {
		t.Fatal("stay_silent sent something")
	}
	if _, err := bob.DraftGet(ctx, bob.sess, discourse.DraftGetInput{DraftID: held.Draft.ID}); code(err) != discourse.CodeDraftNotFound {
		t.Fatalf("dropped draft still there: %v", err)
	}
	if _, err := bob.DraftCommit(ctx, bob.sess, discourse.DraftCommitInput{DraftID: held.Draft.ID, Action: "send_as_is"}); code(err) != discourse.CodeDraftNotFound {
		t.Fatalf("commit of a dropped draft: %v", err)
	}

	// send_anyway: the room moves again after the hold; the draft is
	// re-signed on the latest head.
	race(t, alice, bob, roomID, 1)
	held = heldMessage(t, bob, roomID, "anyway")
	race2 := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess,
		discourse.RoomSubmitEventInput{RoomID: roomID, Type: "room.update", Payload: map[string]any{"agenda": "again"}, OnHeadMismatch: "send_anyway"}))
	res = must[*discourse.WriteResult](t, "agent_protocols_draft_commit")(bob.DraftCommit(ctx, bob.sess, discourse.DraftCommitInput{DraftID: held.Draft.ID, Action: "send_anyway"}))
	if res.Status != discourse.StatusSent || res.Item.Content != "anyway" || res.Item.Seq != race2.Item.Seq+1 {
		t.Fatalf("send_anyway %+v", res)
	}
	// The agent never saw alice's last room.update, and a message never
	// becomes the head: the presented head does not jump to its record.
	if res.Sync.PresentedSeq == res.Item.Seq {
		t.Fatalf("send_anyway presented records the agent never read: %+v", res.Sync)
	}
}

// reject and send_anyway as on_head_mismatch of the write itself; a stale
// explicit base is held locally without signing (no nonce used).
func TestHeadMismatchPolicies(t *testing.T) {
	t.Parallel()
	h, alice, bob, roomID := pair(t)
	race(t, alice, bob, roomID, 1)
	res := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess,
		discourse.RoomSendMessageInput{RoomID: roomID, Content: "x", OnHeadMismatch: "reject"}))
	if res.Status != discourse.StatusRejected || res.Draft != nil || res.Changes[len(res.Changes)-1].Type != "room.update" {
		t.Fatalf("reject %+v", res)
	}
	race(t, alice, bob, roomID, 1)
	res = must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess,
		discourse.RoomSendMessageInput{RoomID: roomID, Content: "forced", OnHeadMismatch: "send_anyway"}))
	if res.Status != discourse.StatusSent {
		t.Fatalf("send_anyway %+v", res)
	}
	// Stale explicit base, detected locally: nothing signed.
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	last, _ := bob.Store.Read().LastNonce(ctx)
	seqBefore, _ := hubRoom(t, h, roomID)
	base, hash := int64(1), st.Sync.HeadHash
	if _, err := bob.RoomSendMessage(ctx, bob.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "stale", BaseSeq: &base}); code(err) != engine.CodeInvalidInput {
		t.Fatalf("half a base accepted: %v", err)
	}
	first := bob.firstHash(t, roomID)
	res = must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess,
		discourse.RoomSendMessageInput{RoomID: roomID, Content: "stale", BaseSeq: &base, BaseHash: &first}))
	_ = hash
	if res.Status != discourse.StatusHeld {
		t.Fatalf("stale base not held: %+v", res)
	}
	if now, _ := bob.Store.Read().LastNonce(ctx); now != last {
		t.Fatalf("a held write used a nonce: %d -> %d", last, now)
	}
	if after, _ := hubRoom(t, h, roomID); after != seqBefore {
		t.Fatal("a held write reached the host")
	}
}

// firstHash returns the record hash of the room's genesis record.
func (a *agent) firstHash(t *testing.T, roomID string) string {
	t.Helper()
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(a.RoomTimeline(ctx, "other-session", discourse.RoomTimelineInput{RoomID: roomID, Limit: 1, IncludeRecords: true}))
	var rec struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(tl.Items[0].Record, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Hash
}

// Signal writes (reactions, membership events) are never held, whatever
// on_head_mismatch says; contract writes are checked like messages.
func TestSignalWritesNeverHeld(t *testing.T) {
	t.Parallel()
	_, alice, bob, roomID := pair(t)
	race(t, alice, bob, roomID, 2)
	target := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice.RoomTimeline(ctx, alice.sess, discourse.RoomTimelineInput{RoomID: roomID, Refresh: true}))
	ev := target.Items[len(target.Items)-1].EventID
	// bob's presented head is two head-advancing records behind.
	res := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(bob.RoomSubmitEvent(ctx, bob.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "reaction.create", Payload: map[string]any{"event_id": ev, "reaction": "agree"}, OnHeadMismatch: "reject"}))
	if res.Status != discourse.StatusSent || res.Item.Kind != "signal" {
		t.Fatalf("signal write %+v", res)
	}
	// The reaction did not move the head.
	if res.Sync.HeadSeq == res.Item.Seq {
		t.Fatal("a signal record moved the head")
	}
	// A contract write on a stale presented head is held like a message
	// (a local protection: a host would take it as an anchor): alice's
	// other session moved the head, which this session has not read.
	must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice.RoomTimeline(ctx, alice.sess, discourse.RoomTimelineInput{RoomID: roomID, UnreadOnly: true}))
	must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, "alice-other-session", discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "room.update", Payload: map[string]any{"agenda": "moved elsewhere"}}))
	upd := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "room.update", Payload: map[string]any{"guidance": "Be brief"}}))
	if upd.Status != discourse.StatusHeld || upd.Draft.Kind != "event" || upd.Draft.Draft["type"] != "room.update" {
		t.Fatalf("contract write on a stale head: %+v", upd)
	}
	res = must[*discourse.WriteResult](t, "agent_protocols_draft_commit")(alice.DraftCommit(ctx, alice.sess, discourse.DraftCommitInput{DraftID: upd.Draft.ID, Action: "send_as_is"}))
	if res.Status != discourse.StatusSent || res.Item.Kind != "contract" || res.Sync.HeadSeq != res.Item.Seq {
		t.Fatalf("contract write %+v", res)
	}
	// Leaving is a membership (signal) write: never held.
	race(t, alice, bob, roomID, 1)
	leave := must[*discourse.RecordResult](t, "agent_protocols_room_leave")(bob.RoomLeave(ctx, bob.sess, discourse.RoomLeaveInput{RoomID: roomID, Reason: "done"}))
	if leave.Sync.HeadSeq == 0 {
		t.Fatalf("leave %+v", leave)
	}
	// A local check refuses a payload against the schema before signing.
	last, _ := alice.Store.Read().LastNonce(ctx)
	_, err := alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{RoomID: roomID, Type: "reaction.create", Payload: map[string]any{"reaction": 5}})
	var ce *engine.Error
	if code(err) != engine.CodeInvalidEvent || !asErr(err, &ce) || ce.Data["errors"] == nil {
		t.Fatalf("schema violation: %v", err)
	}
	if now, _ := alice.Store.Read().LastNonce(ctx); now != last {
		t.Fatal("a refused write used a nonce")
	}
}

// TestConcurrentMessagesAreSent is H-5 of design/PROTOCOL-0.12.md: messages
// never move the head, so a message sent while others were posted is simply
// sent on the presented head, and consecutive own messages share it.
func TestConcurrentMessagesAreSent(t *testing.T) {
	t.Parallel()
	_, alice, bob, roomID := pair(t)
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	head := st.Sync.HeadSeq
	for i := 0; i < 2; i++ {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
			discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprintf("alice %d", i), OnHeadMismatch: "reject"}))
	}
	var seqs []int64
	for _, text := range []string{"first", "second"} {
		res := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess,
			discourse.RoomSendMessageInput{RoomID: roomID, Content: text, OnHeadMismatch: "reject"}))
		if res.Status != discourse.StatusSent {
			t.Fatalf("%s: %+v", text, res)
		}
		var rec struct {
			Envelope struct {
				Event struct {
					BaseSeq int64 `json:"base_seq"`
				} `json:"event"`
			} `json:"envelope"`
		}
		if err := json.Unmarshal(res.Record, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Envelope.Event.BaseSeq != head || res.Sync.HeadSeq != head || res.Sync.PresentedSeq != head || res.Sync.SyncedSeq != res.Item.Seq {
			t.Fatalf("%s: base %d, sync %+v; want every base and head at %d", text, rec.Envelope.Event.BaseSeq, res.Sync, head)
		}
		seqs = append(seqs, res.Item.Seq)
	}
	if seqs[1] != seqs[0]+1 {
		t.Fatalf("seqs %v", seqs)
	}
}

// A write of a type defined since the agent's last sync (the room is not
// followed live) syncs once before it is refused as type_not_defined.
func TestWriteOfANewlyDefinedType(t *testing.T) {
	t.Parallel()
	_, alice, bob, roomID := pair(t)
	must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "type.define", Payload: map[string]any{"type": "x.note", "kind": "signal", "title": "Note", "schema": map[string]any{"type": "object"}}}))
	res := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(bob.RoomSubmitEvent(ctx, bob.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "x.note", Payload: map[string]any{"n": 1}}))
	if res.Status != discourse.StatusSent || res.Item.Type != "x.note" {
		t.Fatalf("write of the new type: %+v", res)
	}
	if _, err := bob.RoomSubmitEvent(ctx, bob.sess, discourse.RoomSubmitEventInput{RoomID: roomID, Type: "x.never", Payload: map[string]any{}}); code(err) != "type_not_defined" {
		t.Fatalf("an undefined type: %v", err)
	}
}

// room_open of a known room brings it up to date from its host (a process
// that does not follow the room live would otherwise answer from an old
// copy).
func TestRoomOpenOfAKnownRoomSyncs(t *testing.T) {
	t.Parallel()
	h, alice, bob, roomID := pair(t)
	first := must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
	sent := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "news"}))
	again := must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
	if again.Sync.SyncedSeq != sent.Item.Seq || again.Sync.SyncedSeq <= first.Sync.SyncedSeq {
		t.Fatalf("room_open of a known room: synced %d, want %d", again.Sync.SyncedSeq, sent.Item.Seq)
	}
}
