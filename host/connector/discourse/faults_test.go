package discourse_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
	"apconnect/host/store"
)

// hubEvents reads a room's whole history from the hub directly.
func hubEvents(t testing.TB, h *hubtest.Hub, roomID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	after := int64(0)
	for {
		r := h.Do(http.MethodGet, fmt.Sprintf("/v1/rooms/%s/events?after_seq=%d&limit=1000", roomID, after), nil, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("events: %d %s", r.Status, r.Body)
		}
		var page struct {
			Result []map[string]any `json:"result"`
		}
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Result) == 0 {
			return out
		}
		out = append(out, page.Result...)
		after = int64(page.Result[len(page.Result)-1]["seq"].(float64))
	}
}

// SSE cut mid-stream, then refused for a while: after recovery the local
// history has no gap.
func TestLiveStreamCutRecoversGap(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	p := connectortest.NewProxy(t, h)
	bob := newAgent(t, h, 0xB0, "", withHTTP(p.Client))
	roomID := createRoom(t, alice, h, "public", nil)
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	p.CutLiveAfter.Store(1)
	bob.Start(ctx)
	eventually(t, 5*time.Second, "a live stream", func() bool { s, _ := bob.Following(); return s == 1 })
	say := func(text string) {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
			discourse.RoomSendMessageInput{RoomID: roomID, Content: text, OnHeadMismatch: "send_anyway"}))
	}
	time.Sleep(200 * time.Millisecond) // let the stream subscribe
	say("live one")                    // delivered, then the stream is cut
	p.BlockLive.Store(true)
	for i := 0; i < 5; i++ {
		say(fmt.Sprintf("while cut %d", i))
	}
	p.BlockLive.Store(false)
	p.CutLiveAfter.Store(0)
	say("after")
	want, _ := hubRoom(t, h, roomID)
	eventually(t, 20*time.Second, "recovery", func() bool {
		pos, err := bob.Store.Read().Position(ctx, 1)
		return err == nil && pos.SyncedSeq == want
	})
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Limit: 200}))
	for i, it := range tl.Items {
		if it.Seq != int64(i+1) {
			t.Fatalf("gap: item %d has seq %d", i, it.Seq)
		}
	}
	if int64(len(tl.Items)) != want {
		t.Fatalf("%d items, want %d", len(tl.Items), want)
	}
}

// A crash between signing and the POST response: the envelope is in the
// outbox with its nonce; the restarted connector resubmits it once (an
// exact resubmission) and it is recorded once.
func TestCrashBetweenSigningAndResponse(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	p := connectortest.NewProxy(t, h)
	home := t.TempDir()
	alice := newAgent(t, h, 0xA1, home, withHTTP(p.Client))
	roomID := createRoom(t, alice, h, "public", nil)
	p.DropPosts.Store(true)
	_, err := alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "lost response"})
	if code(err) != engine.CodeSubmissionPending {
		t.Fatalf("want submission_pending, got %v", err)
	}
	pending, _ := alice.Store.Read().OutboxEntries(ctx, store.OutboxPending)
	if len(pending) != 1 {
		t.Fatalf("outbox %d entries", len(pending))
	}
	// The process dies while it still holds the entry's lease.
	now := time.Now().UnixMilli()
	if err := alice.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.TouchOutbox(ctx, pending[0].ID, now, now+60_000, "crashed")
	}); err != nil {
		t.Fatal(err)
	}
	lastNonce, _ := alice.Store.Read().LastNonce(ctx)
	p.DropPosts.Store(false)
	postsBefore := p.Posts.Load()
	later := func() time.Time { return time.Now().Add(61 * time.Second) }
	alice2 := alice.reopen(withHTTP(p.Client), func(o *connector.Options) { o.Clock = later })
	alice2.Start(ctx)
	eventually(t, 10*time.Second, "the outbox to drain", func() bool {
		n, _ := alice2.Store.Read().PendingOutbox(ctx)
		return n == 0
	})
	if got := p.Posts.Load() - postsBefore; got != 1 {
		t.Fatalf("resubmitted %d times", got)
	}
	count := 0
	for _, r := range hubEvents(t, h, roomID) {
		env := r["envelope"].(map[string]any)
		if env["event"].(map[string]any)["payload"].(map[string]any)["content"] == "lost response" {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("recorded %d times", count)
	}
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice2.RoomTimeline(ctx, alice2.sess, discourse.RoomTimelineInput{RoomID: roomID}))
	local := 0
	for _, it := range tl.Items {
		if it.Content == "lost response" {
			local++
		}
	}
	if local != 1 {
		t.Fatalf("applied %d times locally", local)
	}
	done, _ := alice2.Store.Read().OutboxEntries(ctx, store.OutboxDone)
	if len(done) < 2 {
		t.Fatalf("outbox entries not closed: %+v", done)
	}
	if n, _ := alice2.Store.Read().LastNonce(ctx); n != lastNonce {
		t.Fatalf("resubmission used a new nonce: %d -> %d", lastNonce, n)
	}
}

// Restart: nonce monotonic, held drafts, inbox leases, read cursors and
// presented heads (per session) come back.
func TestRestartRestoresState(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := t.TempDir()
	alice := newAgent(t, h, 0xA1, home)
	bob := newAgent(t, h, 0xB0, "")
	roomID := createRoom(t, alice, h, "public", nil)
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	for i := 0; i < 3; i++ {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess,
			discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprintf("hi %d", i), Mentions: []string{alice.id}, OnHeadMismatch: "send_anyway"}))
	}
	// A head-advancing record after the messages.
	must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, "s0", discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "room.update", Payload: map[string]any{"agenda": "after the greetings"}}))
	// Session s1 reads three records (its head is still genesis), session s2
	// everything (through the room.update).
	s1, s2 := discourse.SessionID("s1"), discourse.SessionID("s2")
	r1 := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice.RoomTimeline(ctx, s1, discourse.RoomTimelineInput{RoomID: roomID, Refresh: true, Limit: 3, MarkRead: true}))
	r2 := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice.RoomTimeline(ctx, s2, discourse.RoomTimelineInput{RoomID: roomID}))
	if r1.Sync.PresentedSeq == r2.Sync.PresentedSeq {
		t.Fatalf("sessions share a presented head: %d", r1.Sync.PresentedSeq)
	}
	claimed := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(alice.InboxNext(ctx, s1, connector.InboxNextInput{Claim: true, Limit: 1, Kinds: []string{"room.mention"}}))
	if len(claimed.Items) != 1 || claimed.Items[0].State != "claimed" {
		t.Fatalf("claim %+v", claimed)
	}
	first := alice.firstHash(t, roomID)
	base := int64(1)
	held := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, s2, discourse.RoomSendMessageInput{RoomID: roomID, Content: "held", BaseSeq: &base, BaseHash: &first}))
	if held.Status != discourse.StatusHeld {
		t.Fatalf("held %+v", held)
	}
	nonce, _ := alice.Store.Read().LastNonce(ctx)

	alice2 := alice.reopen()
	drafts := must[*discourse.DraftsListResult](t, "agent_protocols_drafts_list")(alice2.DraftsList(ctx, s1, discourse.DraftsListInput{}))
	if len(drafts.Drafts) != 1 || drafts.Drafts[0].ID != held.Draft.ID {
		t.Fatalf("drafts after restart %+v", drafts)
	}
	// The claim still holds: another session does not get the item.
	other := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(alice2.InboxNext(ctx, s2, connector.InboxNextInput{Claim: true, Kinds: []string{"room.mention"}}))
	for _, it := range other.Items {
		if it.ID == claimed.Items[0].ID {
			t.Fatal("a claimed item was handed to another session after restart")
		}
	}
	t1 := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice2.RoomTimeline(ctx, s1, discourse.RoomTimelineInput{RoomID: roomID, Types: []string{"none.x"}}))
	t2 := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice2.RoomTimeline(ctx, s2, discourse.RoomTimelineInput{RoomID: roomID, Types: []string{"none.x"}}))
	if t1.Sync.PresentedSeq != r1.Sync.PresentedSeq || t2.Sync.PresentedSeq != held.Sync.PresentedSeq || t1.Sync.ReadSeq != r1.Items[len(r1.Items)-1].Seq {
		t.Fatalf("restored: s1 %+v s2 %+v", t1.Sync, t2.Sync)
	}
	sent := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice2.RoomSendMessage(ctx, s2, discourse.RoomSendMessageInput{RoomID: roomID, Content: "after restart"}))
	var rec struct {
		Envelope struct {
			Event struct {
				Nonce int64 `json:"nonce"`
			} `json:"event"`
		} `json:"envelope"`
	}
	if err := json.Unmarshal(sent.Record, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Envelope.Event.Nonce <= nonce {
		t.Fatalf("nonce went back: %d after %d", rec.Envelope.Event.Nonce, nonce)
	}
}

// Two connector processes on one home and Agent ID (separate databases
// handles) writing at once: no nonce is used twice, every write lands.
func TestTwoProcessesOneHome(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := t.TempDir()
	a1 := newAgent(t, h, 0xA1, home)
	a2 := newAgent(t, h, 0xA1, home)
	a2.sess = "session-2"
	roomID := createRoom(t, a1, h, "public", func(in *discourse.RoomCreateInput) {
		in.Types = []map[string]any{{"use": "adp:reactions/1.0"}}
	})
	must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(a2.RoomOpen(ctx, a2.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
	genesis := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(a1.RoomTimeline(ctx, a1.sess, discourse.RoomTimelineInput{RoomID: roomID, Limit: 1})).Items[0].EventID
	const per = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*per)
	for _, a := range []*agent{a1, a2} {
		wg.Add(1)
		go func(a *agent) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				res, err := a.RoomSubmitEvent(ctx, a.sess, discourse.RoomSubmitEventInput{RoomID: roomID, Type: "reaction.create",
					Payload: map[string]any{"event_id": genesis, "reaction": fmt.Sprintf("r%d", i)}})
				if err != nil {
					errs <- err
					return
				}
				if res.Status != discourse.StatusSent {
					errs <- fmt.Errorf("status %s", res.Status)
				}
			}
		}(a)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	n := 0
	for _, r := range hubEvents(t, h, roomID) {
		ev := r["envelope"].(map[string]any)["event"].(map[string]any)
		if ev["actor"] != a1.id {
			continue
		}
		nonce := int64(ev["nonce"].(float64))
		if seen[nonce] {
			t.Fatalf("nonce %d used twice", nonce)
		}
		seen[nonce] = true
		n++
	}
	if n != 2*per+1 {
		t.Fatalf("%d records of the agent, want %d", n, 2*per+1)
	}
	l1, _ := a1.Store.Read().LastNonce(ctx)
	l2, _ := a2.Store.Read().LastNonce(ctx)
	if l1 != l2 {
		t.Fatalf("processes disagree on the nonce: %d %d", l1, l2)
	}
	// Each record was applied once, whichever process got it first.
	for _, a := range []*agent{a1, a2} {
		tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(a.RoomTimeline(ctx, a.sess, discourse.RoomTimelineInput{RoomID: roomID, Refresh: true, Limit: 200}))
		if len(tl.Items) != 2*per+1 {
			t.Fatalf("%d timeline items, want %d", len(tl.Items), 2*per+1)
		}
		for i, it := range tl.Items {
			if it.Seq != int64(i+1) {
				t.Fatalf("item %d has seq %d", i, it.Seq)
			}
		}
	}
}

// A room whose head moves faster than the agent (a room.update before each
// of its submissions): send_anyway re-signs at most three times, then holds.
func TestSendAnywayCapInFastRoom(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	p := connectortest.NewProxy(t, h)
	bob := newAgent(t, h, 0xB0, "", withHTTP(p.Client))
	roomID := createRoom(t, alice, h, "public", nil)
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	n := 0
	p.Lock()
	p.BeforePost = func() {
		n++
		must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess,
			discourse.RoomSubmitEventInput{RoomID: roomID, Type: "room.update", Payload: map[string]any{"agenda": fmt.Sprintf("faster %d", n)}, OnHeadMismatch: "send_anyway"}))
	}
	p.Unlock()
	posts := p.Posts.Load()
	res := must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(bob.RoomSendMessage(ctx, bob.sess,
		discourse.RoomSendMessageInput{RoomID: roomID, Content: "slow", OnHeadMismatch: "send_anyway"}))
	if res.Status != discourse.StatusHeld {
		t.Fatalf("want held after the cap, got %+v", res)
	}
	if got := p.Posts.Load() - posts; got != 1+discourse.MaxAutoResigns {
		t.Fatalf("%d submissions, want %d", got, 1+discourse.MaxAutoResigns)
	}
}

// An outbox entry the host no longer answers as an exact resubmission is
// resolved from the room history: found there, it is done (recorded once);
// never accepted, it failed.
func TestOutboxResolvedFromHistory(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	p := connectortest.NewProxy(t, h)
	alice := newAgent(t, h, 0xA1, "", withHTTP(p.Client))
	roomID := createRoom(t, alice, h, "public", nil)
	// Accepted, response lost.
	p.DropPosts.Store(true)
	if _, err := alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "accepted, unconfirmed"}); code(err) != engine.CodeSubmissionPending {
		t.Fatalf("want submission_pending, got %v", err)
	}
	p.DropPosts.Store(false)
	// Never reached the host.
	p.BlackholePosts.Store(true)
	if _, err := alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "never sent", OnHeadMismatch: "send_anyway"}); code(err) != engine.CodeSubmissionPending {
		t.Fatalf("want submission_pending, got %v", err)
	}
	p.BlackholePosts.Store(false)
	p.RefusePosts.Store(true)
	if n := alice.ResubmitOutbox(ctx); n != 2 {
		t.Fatalf("closed %d entries", n)
	}
	done, _ := alice.Store.Read().OutboxEntries(ctx, store.OutboxDone)
	failed, _ := alice.Store.Read().OutboxEntries(ctx, store.OutboxFailed)
	var doneIDs []string
	for _, e := range done {
		doneIDs = append(doneIDs, e.EventID)
	}
	if len(failed) != 1 || len(done) != 2 { // room.create and the accepted message
		t.Fatalf("done %v, failed %d", doneIDs, len(failed))
	}
	count := map[string]int{}
	for _, r := range hubEvents(t, h, roomID) {
		if c, ok := r["envelope"].(map[string]any)["event"].(map[string]any)["payload"].(map[string]any)["content"].(string); ok {
			count[c]++
		}
	}
	if count["accepted, unconfirmed"] != 1 || count["never sent"] != 0 {
		t.Fatalf("hub history %v", count)
	}
}

// A private room's invitee joins directly from the room resource (it cannot
// read the history before it is a member); others must ask.
func TestInviteeJoinsPrivateRoomDirectly(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB0, "")
	carol := newAgent(t, h, 0xC0, "")
	roomID := createRoom(t, alice, h, "private", func(in *discourse.RoomCreateInput) {
		in.Policy = map[string]any{"invites": map[string]any{bob.id: "speaker"}}
	})
	res := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker", Perspective: "invited"}))
	if res.Status != discourse.JoinJoined || res.Member == nil || res.Member.Role != "speaker" || res.Sync == nil || res.Sync.SyncedSeq != 2 {
		t.Fatalf("invitee join %+v", res)
	}
	other := must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(carol.RoomJoin(ctx, carol.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	if other.Status != discourse.JoinApprovalRequired {
		t.Fatalf("uninvited join %+v", other)
	}
}
