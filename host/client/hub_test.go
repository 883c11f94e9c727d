package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// End-to-end tests against the real local hub (host/hub/hubtest): HTTPS with
// the hub's own CA, the real ADP host and its live streams.

// e2eAgent is a test agent with its own Host and clock-derived nonces.
type e2eAgent struct {
	*hubtest.Agent
	host  *Host
	clock *hubtest.Clock
	last  int64
}

func newE2EAgent(t *testing.T, h *hubtest.Hub, hc *http.Client, b byte) *e2eAgent {
	t.Helper()
	a := hubtest.NewAgent(b)
	host, err := NewHost(h.Origin(), hc, a.Signer, Options{Clock: h.Clock.Now, Retry: fastRetry, StreamIdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &e2eAgent{Agent: a, host: host, clock: h.Clock}
}

// sign signs an ADP event now, with the next nonce.
func (a *e2eAgent) sign(t *testing.T, ev identity.Event) *identity.Envelope {
	t.Helper()
	now := a.clock.Now().UnixMilli()
	n, err := identity.NextNonce(a.last, now)
	if err != nil {
		t.Fatal(err)
	}
	a.last = n
	ev.Protocol, ev.CreatedAt, ev.Nonce = adp.Protocol, now, n
	return a.Sign(t, ev)
}

// roomEvent signs an event of a room based on base.
func (a *e2eAgent) roomEvent(t *testing.T, roomID, typ string, base adp.Link, payload map[string]any) *identity.Envelope {
	t.Helper()
	seq, hash := base.Seq, base.Hash
	return a.sign(t, identity.Event{Type: typ, Payload: jsonValue(t, payload), Fields: adp.Fields{RoomID: roomID, Base: &adp.Link{Seq: seq, Hash: hash}}.Map()})
}

// createRoom creates a room with the given visibility (and extra payload
// members), one hour long from now. A public room given no policy opens
// the speaker and observer roles (0.12.6 opens only observer by default).
func (a *e2eAgent) createRoom(t *testing.T, visibility string, extra map[string]any) (*CreateRoomResult, *adp.Record) {
	t.Helper()
	now := a.clock.Now().UnixMilli()
	p := map[string]any{"host": a.host.Origin(), "topic": "client e2e " + visibility, "visibility": visibility,
		"start_time": now, "end_time": now + 3_600_000, "tags": []string{"e2e"}}
	for k, v := range extra {
		p[k] = v
	}
	if _, set := extra["policy"]; !set && visibility == "public" {
		p["policy"] = map[string]any{"open_roles": []string{"speaker", "observer"}}
	}
	env := a.sign(t, identity.Event{Type: adp.TypeRoomCreate, Payload: jsonValue(t, p)})
	res, err := a.host.CreateRoom(ctxT(t), env)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := res.Record(env)
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

func message(text string) map[string]any {
	return map[string]any{"content_type": "text/plain", "content": text}
}

func startHub(t *testing.T) (*hubtest.Hub, *http.Client) {
	t.Helper()
	return realHub(t, hubtest.WithClock(hubtest.NewClock(time.Now().Truncate(time.Millisecond))))
}

func TestHubRoomLifecycle(t *testing.T) {
	h, hc := startHub(t)
	alice, bob := newE2EAgent(t, h, hc, 31), newE2EAgent(t, h, hc, 32)
	ctx := ctxT(t)

	d, err := alice.host.Discovery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Endpoint("rooms") != h.Origin()+"/v1/rooms" || !d.Has("sse-event-stream") || len(d.RegisteredPacks) == 0 {
		t.Fatalf("discovery %+v", d)
	}

	// create, and resubmit the exact envelope: the same room
	created, genesis := alice.createRoom(t, "public", nil)
	if created.Seq != 1 || created.MaxSeenNonce != itoa64(alice.last) || created.URL != h.Origin()+"/v1/rooms/"+created.ID {
		t.Fatalf("created %+v", created)
	}
	again, err := alice.host.CreateRoom(ctx, genesis.Envelope)
	if err != nil || again.ID != created.ID || again.Hash != created.Hash {
		t.Fatalf("resubmitted create %+v %v", again, err)
	}
	roomID := created.ID

	// a message on the head, resubmitted: one record
	m1 := alice.roomEvent(t, roomID, adp.TypeMessageCreate, genesis.Link(), message("hello"))
	r1, err := alice.host.Submit(ctx, roomID, m1)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Record.Seq != 2 || r1.Record.PreHash != genesis.Hash || r1.MaxSeenNonce != itoa64(alice.last) {
		t.Fatalf("record %+v, max seen %q", r1.Record, r1.MaxSeenNonce)
	}
	if r1b, err := alice.host.Submit(ctx, roomID, m1); err != nil || r1b.Record.Hash != r1.Record.Hash {
		t.Fatalf("resubmission %+v %v", r1b, err)
	}

	// a replayed nonce: nonce_not_greater with Max-Seen-Nonce
	var se *Error
	replay := alice.Sign(t, identity.Event{Protocol: adp.Protocol, Type: adp.TypeMessageCreate, CreatedAt: alice.clock.Now().UnixMilli(),
		Nonce: alice.last - 1, Payload: jsonValue(t, message("replay")), Fields: adp.Fields{RoomID: roomID, Base: &adp.Link{Seq: r1.Record.Seq, Hash: r1.Record.Hash}}.Map()})
	_, err = alice.host.Submit(ctx, roomID, replay)
	if !errors.As(err, &se) || se.Code != identity.CodeNonceNotGreater || se.MaxSeenNonce == "" {
		t.Fatalf("replayed nonce: %v", err)
	}
	if next, err := identity.ApplyMaxSeenNonce(1, alice.clock.Now().UnixMilli(), se.MaxSeenNonce); err != nil || next <= alice.last-1 {
		t.Fatalf("ApplyMaxSeenNonce %d %v", next, err)
	}

	// bob joins directly (public room)
	j, err := bob.host.Submit(ctx, roomID, bob.roomEvent(t, roomID, adp.TypeRoomJoin, r1.Record.Link(), map[string]any{"role": "speaker"}))
	if err != nil || j.Record.Seq != 3 {
		t.Fatalf("join %+v %v", j, err)
	}
	m2, err := bob.host.Submit(ctx, roomID, bob.roomEvent(t, roomID, adp.TypeMessageCreate, r1.Record.Link(), message("hi alice")))
	if err != nil || m2.Record.Seq != 4 {
		t.Fatalf("bob's message %+v %v", m2, err)
	}

	// history in pages, then verified as a whole chain
	var all []*adp.Record
	q := EventsQuery{Limit: 3}
	for {
		page, err := bob.host.Events(ctx, roomID, q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Items...)
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
		q.AfterSeq = page.Items[len(page.Items)-1].Seq
	}
	if len(all) != 4 || all[3].Hash != m2.Record.Hash {
		t.Fatalf("history %d records", len(all))
	}
	if rep := adp.Replay(&adp.Rules{HostOrigin: h.Origin()}, all); !rep.OK() {
		t.Fatalf("history does not verify: %+v", rep.Problems)
	}
	tail, err := bob.host.Events(ctx, roomID, EventsQuery{AfterSeq: 3})
	if err != nil || len(tail.Items) != 1 || tail.Items[0].Seq != 4 {
		t.Fatalf("after_seq 3: %+v %v", tail, err)
	}

	// the room resource, authenticated and anonymous
	room, err := bob.host.Room(ctx, roomID)
	if err != nil {
		t.Fatal(err)
	}
	// Messages do not move the head (0.12.6): it is still the genesis.
	if room.Seq != 4 || room.Head != genesis.Link() || room.Hash != m2.Record.Hash || room.Creator != alice.ID || room.Status != adp.RoomActive ||
		room.Visibility != adp.VisibilityPublic || room.Raw["topic"] != "client e2e public" {
		t.Fatalf("room %+v", room)
	}
	// a contract write moves the head; a message on the old head is then
	// room_head_mismatch with its data preserved
	upd, err := alice.host.Submit(ctx, roomID, alice.roomEvent(t, roomID, adp.TypeRoomUpdate, genesis.Link(), map[string]any{"agenda": "now"}))
	if err != nil || upd.Record.Seq != 5 {
		t.Fatalf("room.update %+v %v", upd, err)
	}
	stale := alice.roomEvent(t, roomID, adp.TypeMessageCreate, m2.Record.Link(), message("late"))
	_, err = alice.host.Submit(ctx, roomID, stale)
	if !errors.As(err, &se) || se.Code != adp.CodeRoomHeadMismatch || se.Data == nil || se.Status/100 != 4 || se.Data["current_seq"] != json.Number("5") {
		t.Fatalf("stale write: %v %v", err, se)
	}
	anon, err := NewHost(h.Origin(), hc, nil, Options{Clock: h.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := anon.Room(ctx, roomID); err != nil || r.ID != roomID {
		t.Fatalf("anonymous read of a public room: %v", err)
	}
	if _, err := anon.Room(ctx, "zzzzzzzzzzzzzzzzzzzz"); ErrorCode(err) != adp.CodeRoomNotFound {
		t.Fatalf("unknown room: %v", err)
	}

	// public discovery and /v1/me/rooms
	pub, err := anon.PublicRooms(ctx, PublicRoomQuery{Tag: "e2e", Status: "active"})
	if err != nil || len(pub.Items) != 1 || pub.Items[0].ID != roomID {
		t.Fatalf("public rooms %+v %v", pub, err)
	}
	mine, err := bob.host.MyRooms(ctx, MyRoomsQuery{Membership: "member"})
	if err != nil || len(mine.Items) != 1 || mine.Items[0].ID != roomID || mine.Items[0].Role != adp.RoleSpeaker || mine.Items[0].Membership != "active" {
		t.Fatalf("bob's rooms %+v %v", mine, err)
	}
	// D-05: the item is the room resource, as GET {rooms}/{id} returns it.
	if full, err := bob.host.Room(ctx, roomID); err != nil || mine.Items[0].Hash != full.Hash || mine.Items[0].AcceptedAt != full.AcceptedAt ||
		mine.Items[0].Seq != full.Seq || mine.Items[0].Head != full.Head || len(mine.Items[0].Types) != len(full.Types) || mine.Items[0].URL != full.URL {
		t.Fatalf("bob's room item %+v, room %+v %v", mine.Items[0].RoomResource, full, err)
	}
	created2, _ := alice.createRoom(t, "private", nil)
	mineA, err := alice.host.MyRooms(ctx, MyRoomsQuery{Limit: 1})
	if err != nil || len(mineA.Items) != 1 || mineA.NextCursor == "" {
		t.Fatalf("alice's first page %+v %v", mineA, err)
	}
	mineB, err := alice.host.MyRooms(ctx, MyRoomsQuery{Limit: 1, Cursor: mineA.NextCursor})
	if err != nil || len(mineB.Items) != 1 || mineB.Items[0].ID == mineA.Items[0].ID || !mineB.Items[0].IsCreator {
		t.Fatalf("alice's second page %+v %v", mineB, err)
	}
	if _, err := bob.host.Room(ctx, created2.ID); ErrorCode(err) != adp.CodeRoomNotFound {
		t.Fatalf("a private room read by a stranger: %v", err)
	}
	if _, err := anon.MyRooms(ctx, MyRoomsQuery{}); !errors.Is(err, ErrNoSigner) {
		t.Fatalf("anonymous me/rooms: %v", err)
	}

	// agent status
	st, err := bob.host.PutAgentStatus(ctx, roomID, AgentStatusInput{State: "drafting", Summary: "a reply", SeenSeq: 4, SeenHash: m2.Record.Hash})
	if err != nil || st.AgentID != bob.ID || st.State != "drafting" || st.ExpiresAt <= h.Clock.Now().UnixMilli() {
		t.Fatalf("put status %+v %v", st, err)
	}
	list, err := alice.host.AgentStatuses(ctx, roomID)
	if err != nil || len(list) != 1 || list[0].SeenHash != m2.Record.Hash {
		t.Fatalf("statuses %+v %v", list, err)
	}
	if got, err := alice.host.AgentStatus(ctx, roomID, bob.ID); err != nil || got.Summary != "a reply" {
		t.Fatalf("status %+v %v", got, err)
	}
	if _, err := bob.host.AgentStatus(ctx, roomID, alice.ID); ErrorCode(err) != adp.CodeAgentStatusNotFound {
		t.Fatalf("missing status: %v", err)
	}

	// the archive once the room has ended: complete and verifiable
	h.Clock.Advance(2 * time.Hour)
	a, err := bob.host.DownloadArchive(ctx, roomID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := adp.VerifyArchive(a.Manifest, a.Records, a.Packs, nil)
	if err != nil || !rep.OK() || rep.Records != 5 || rep.LastHash != upd.Record.Hash || rep.Status != adp.RoomEnded {
		t.Fatalf("archive report %+v %v", rep, err)
	}
	if _, err := alice.host.Submit(ctx, roomID, alice.roomEvent(t, roomID, adp.TypeMessageCreate, m2.Record.Link(), message("too late"))); err == nil {
		t.Fatal("a write to an ended room was accepted")
	}
}

func TestHubLive(t *testing.T) {
	h, hc := startHub(t)
	alice, bob, carol := newE2EAgent(t, h, hc, 41), newE2EAgent(t, h, hc, 42), newE2EAgent(t, h, hc, 43)
	ctx := ctxT(t)
	created, genesis := alice.createRoom(t, "restricted", map[string]any{"policy": map[string]any{"invites": map[string]any{bob.ID: "speaker"}}})
	roomID := created.ID

	// a non-member may not subscribe
	if _, err := carol.host.Live(ctx, roomID); ErrorCode(err) != adp.CodeMembershipRequired {
		t.Fatalf("non-member subscription: %v", err)
	}

	join, err := bob.host.Submit(ctx, roomID, bob.roomEvent(t, roomID, adp.TypeRoomJoin, genesis.Link(), map[string]any{"role": "speaker"}))
	if err != nil {
		t.Fatal(err)
	}
	bobLive, err := bob.host.Live(ctx, roomID)
	if err != nil {
		t.Fatal(err)
	}
	defer bobLive.Close()
	aliceLive, err := alice.host.Live(ctx, roomID)
	if err != nil {
		t.Fatal(err)
	}
	defer aliceLive.Close()

	// records written after the subscription arrive live, in order
	m1, err := alice.host.Submit(ctx, roomID, alice.roomEvent(t, roomID, adp.TypeMessageCreate, genesis.Link(), message("live one")))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := bob.host.Submit(ctx, roomID, bob.roomEvent(t, roomID, adp.TypeMessageCreate, m1.Record.Link(), message("live two")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*adp.Record{m1.Record, m2.Record} {
		it, err := bobLive.Next()
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind != KindRoomEvent || it.Record.Hash != want.Hash || it.Record.Seq != want.Seq {
			t.Fatalf("item %+v, want seq %d", it, want.Seq)
		}
		if err := it.Record.Envelope.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	if join.Record.Seq != 2 || m2.Record.Seq != 4 {
		t.Fatalf("seqs %d %d", join.Record.Seq, m2.Record.Seq)
	}

	// a transient status reaches the other member as room.agent_status
	if _, err := alice.host.PutAgentStatus(ctx, roomID, AgentStatusInput{State: "reading", SeenSeq: m2.Record.Seq}); err != nil {
		t.Fatal(err)
	}
	it := nextOf(t, bobLive, KindAgentStatus)
	if it.AgentStatus.AgentID != alice.ID || it.AgentStatus.State != "reading" || it.AgentStatus.RoomID != roomID {
		t.Fatalf("status item %+v", it.AgentStatus)
	}

	// carol asks to join; the reviewer's stream gets room.join_request
	req := carol.sign(t, identity.Event{Type: adp.TypeJoinRequest,
		Payload: jsonValue(t, map[string]any{"role": "observer", "perspective": "tester", "reason": "curious"}), Fields: adp.Fields{RoomID: roomID}.Map()})
	jr, err := carol.host.SubmitJoinRequest(ctx, roomID, req)
	if err != nil {
		t.Fatal(err)
	}
	if jr.JoinRequest.ID != req.Hash || jr.JoinRequest.Status != adp.JoinPending || jr.MaxSeenNonce != itoa64(carol.last) {
		t.Fatalf("join request %+v %q", jr.JoinRequest, jr.MaxSeenNonce)
	}
	it = nextOf(t, aliceLive, KindJoinRequest)
	if it.JoinRequest.RequestID != req.Hash || it.JoinRequest.Applicant != carol.ID || it.JoinRequest.Role != adp.RoleObserver {
		t.Fatalf("notice %+v", it.JoinRequest)
	}
	pending, err := alice.host.JoinRequests(ctx, roomID, JoinRequestQuery{Status: "pending"})
	if err != nil || len(pending.Items) != 1 || pending.Items[0].ID != req.Hash {
		t.Fatalf("pending %+v %v", pending, err)
	}
	if _, err := bob.host.JoinRequests(ctx, roomID, JoinRequestQuery{}); err == nil {
		t.Fatal("a speaker listed join requests")
	}
	own, err := carol.host.JoinRequest(ctx, roomID, req.Hash)
	if err != nil || own.Status != adp.JoinPending {
		t.Fatalf("own request %+v %v", own, err)
	}
	if mine, err := carol.host.MyRooms(ctx, MyRoomsQuery{Membership: "pending"}); err != nil || len(mine.Items) != 1 ||
		mine.Items[0].JoinRequest == nil || mine.Items[0].JoinRequest.ID != req.Hash {
		t.Fatalf("carol's pending rooms %+v %v", mine, err)
	}

	// alice approves: the review record arrives live, the request is approved
	review, err := alice.host.Submit(ctx, roomID, alice.roomEvent(t, roomID, adp.TypeJoinReview, m2.Record.Link(),
		map[string]any{"request": req.Value(), "decision": "approve", "role": "observer"}))
	if err != nil {
		t.Fatal(err)
	}
	it = nextOf(t, bobLive, KindRoomEvent)
	if it.Record.Hash != review.Record.Hash {
		t.Fatalf("review item %+v", it.Record)
	}
	done, err := carol.host.JoinRequest(ctx, roomID, req.Hash)
	if err != nil || done.Status != adp.JoinApproved || done.ReviewedBy != alice.ID || done.ReviewEventID != review.Record.EnvelopeHash() {
		t.Fatalf("reviewed request %+v %v", done, err)
	}

	// leaving ends bob's stream
	if _, err := bob.host.Submit(ctx, roomID, bob.roomEvent(t, roomID, adp.TypeRoomLeave, review.Record.Link(), map[string]any{})); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := bobLive.Next()
		if err == nil {
			continue // the leave record itself may still be delivered
		}
		if !errors.Is(err, io.EOF) {
			t.Fatalf("stream end: %v", err)
		}
		break
	}

	// cancelling the context ends a stream
	cctx, cancel := contextWithCancel(t)
	s, err := alice.host.Live(cctx, roomID)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
}

// nextOf returns the next item of kind, skipping others.
func nextOf(t *testing.T, s *Stream, kind string) *StreamItem {
	t.Helper()
	for {
		it, err := s.Next()
		if err != nil {
			t.Fatalf("waiting for %s: %v", kind, err)
		}
		if it.Kind == kind {
			return it
		}
	}
}

// TestHubLiveResubscribes (D-26): the hub closes a stream when its request
// JWT expires; the client takes that clean close as "subscribe again with a
// fresh JWT", reports KindResubscribed, and goes on delivering records.
func TestHubLiveResubscribes(t *testing.T) {
	h, hc := startHub(t)
	alice := newE2EAgent(t, h, hc, 44)
	host, err := NewHost(h.Origin(), hc, alice.Signer, Options{Clock: h.Clock.Now, Retry: fastRetry,
		StreamIdleTimeout: 30 * time.Second, StreamTokenLifetime: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	_, genesis := alice.createRoom(t, "public", nil)
	roomID := genesis.RoomID
	live, err := host.Live(ctx, roomID)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	start := time.Now()
	it, err := live.Next()
	if err != nil || it.Kind != KindResubscribed {
		t.Fatalf("first item %+v %v, want %s", it, err, KindResubscribed)
	}
	if d := time.Since(start); d < 1500*time.Millisecond || d > 10*time.Second {
		t.Fatalf("resubscribed after %s; the JWT lived 2 to 3 s", d)
	}
	m, err := alice.host.Submit(ctx, roomID, alice.roomEvent(t, roomID, adp.TypeMessageCreate, genesis.Link(), message("after the new JWT")))
	if err != nil {
		t.Fatal(err)
	}
	it, err = live.Next()
	if err != nil || it.Kind != KindRoomEvent || it.Record.Hash != m.Record.Hash {
		t.Fatalf("item %+v %v", it, err)
	}
}

// TestHubArchiveCurrentLayout (D-21): a restricted room that imported an
// external pack, archived by the real hub and read over HTTPS with request
// JWTs: the records-only jsonl and the pack document served at its
// manifest.packs URL verify; anonymous reads are refused.
func TestHubArchiveCurrentLayout(t *testing.T) {
	var doc []byte
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}))
	defer srv.Close()
	packURL := srv.URL + "/p.json"
	doc, digest := packDoc(t, packURL)
	h, hc := realHub(t, hubtest.WithClock(hubtest.NewClock(time.Now().Truncate(time.Millisecond))), hubtest.WithOptions(func(o *hub.Options) {
		o.PackFetcher = &adp.HTTPSPackFetcher{Client: srv.Client(), AllowPrivateAddresses: true}
	}))
	alice := newE2EAgent(t, h, hc, 45)
	ctx := ctxT(t)
	created, genesis := alice.createRoom(t, "restricted", map[string]any{"types": []any{map[string]any{"pack": packURL, "digest": digest}}})
	roomID := created.ID
	note, err := alice.host.Submit(ctx, roomID, alice.roomEvent(t, roomID, "p.note", genesis.Link(), map[string]any{"text": "hi"}))
	if err != nil {
		t.Fatal(err)
	}
	a, err := alice.host.DownloadArchive(ctx, roomID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Layout != adp.ArchiveLayoutCurrent || len(a.Records) != 2 || !bytes.Equal(a.Packs[packURL], doc) ||
		len(a.Manifest.Packs) != 1 || a.Manifest.Packs[0].Pack != packURL || a.Manifest.Packs[0].Digest != digest {
		t.Fatalf("archive %+v", a)
	}
	rep, err := a.Verify(nil)
	if err != nil || !rep.OK() || rep.LastHash != note.Record.Hash {
		t.Fatalf("report %+v %v", rep, err)
	}
	anon, err := NewHost(h.Origin(), hc, nil, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.DownloadArchive(ctx, roomID); ErrorCode(err) != identity.CodeInvalidToken {
		t.Fatalf("anonymous archive of a restricted room: %v", err)
	}
}
