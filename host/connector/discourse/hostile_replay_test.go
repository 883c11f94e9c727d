package discourse_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
)

// Issue 20: a host that replays a signed envelope. Every record is chained
// and hashed by the host and every envelope is the actor's own, so only a
// reader that remembers the envelopes of the room's whole history sees it.

// hubRecords reads a room's history from the hub as parsed records.
func hubRecords(t testing.TB, h *hubtest.Hub, roomID string) []*adp.Record {
	t.Helper()
	var out []*adp.Record
	for _, m := range hubEvents(t, h, roomID) {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := adp.ParseRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// replayedHistory is recs with the records at the seqs of copies carrying
// the envelope of the record at seq src instead of their own, and the chain
// rebuilt from the first of them: a history that passes every check but
// the envelope index. It returns the records as the hub serves them
// (generic JSON maps) by seq.
func replayedHistory(t testing.TB, recs []*adp.Record, src int64, copies ...int64) map[int64]map[string]any {
	t.Helper()
	out := map[int64]map[string]any{}
	swap := map[int64]bool{}
	for _, s := range copies {
		swap[s] = true
	}
	var prev adp.Link
	for _, rec := range recs {
		r := *rec
		if swap[r.Seq] {
			r.Envelope, r.Redaction = recs[src-1].Envelope, nil
		}
		if r.Seq > 1 {
			r.PreHash = prev.Hash
		}
		h, err := r.ComputeHash()
		if err != nil {
			t.Fatal(err)
		}
		r.Hash = h
		prev = r.Link()
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out[r.Seq] = m
	}
	return out
}

// serve makes the proxy serve a rewritten history in its pages.
func serve(p *connectortest.Proxy, history map[int64]map[string]any) {
	p.SetTamper(func(recs []map[string]any) []map[string]any {
		for i, r := range recs {
			if m, ok := history[connectortest.SeqOf(r)]; ok {
				recs[i] = m
			}
		}
		return recs
	})
}

// wantReplayRefused asserts the room is marked failing at seq copy with a
// replayed_envelope reason that names both seqs, and that nothing from copy
// on was applied.
func wantReplayRefused(t *testing.T, a *agent, roomID string, first, copy int64) {
	t.Helper()
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(a.RoomState(ctx, a.sess, discourse.RoomStateInput{RoomID: roomID}))
	v := st.Sync.Verification
	if v == nil || v.Code != adp.CodeReplayedEnvelope || v.Seq != copy ||
		!strings.Contains(v.Message, fmt.Sprintf("seq %d and seq %d", first, copy)) {
		t.Fatalf("room not refused for a replay of seq %d at seq %d: %+v", first, copy, v)
	}
	if st.Sync.SyncedSeq != copy-1 {
		t.Fatalf("synced %d, want %d", st.Sync.SyncedSeq, copy-1)
	}
	if _, err := a.RoomSendMessage(ctx, a.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "x"}); code(err) != discourse.CodeVerificationFailed {
		t.Fatalf("write on a refused room: %v", err)
	}
}

// History pages: records 4, 5 and 6 carry record 3's envelope (the
// issue's room). The room is refused at seq 4 naming seq 3; the message and
// its mention appear once.
func TestReplayedEnvelopeInHistoryPages(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	p := connectortest.NewProxy(t, h)
	bob := newAgent(t, h, 0xB0, "", withHTTP(p.Client))
	roomID := createRoom(t, alice, h, "public", nil)
	for i := range 6 {
		in := discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprintf("m%d", i), OnHeadMismatch: "send_anyway"}
		if i == 1 {
			in.Mentions = []string{bob.id}
		}
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess, in))
	}
	recs := hubRecords(t, h, roomID)
	if recs[2].Envelope.Event.Type != adp.TypeMessageCreate {
		t.Fatalf("record 3 is %s", recs[2].Type())
	}
	serve(p, replayedHistory(t, recs, 3, 4, 5, 6))
	if _, err := bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}); err != nil && code(err) != discourse.CodeVerificationFailed {
		t.Fatal(err)
	}
	wantReplayRefused(t, bob, roomID, 3, 4)
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Limit: 200}))
	if len(tl.Items) != 3 || tl.Items[2].Content != "m1" {
		t.Fatalf("timeline %+v", tl.Items)
	}
	inbox := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess,
		connector.InboxNextInput{RoomID: roomID, Kinds: []string{room.KindMention}, Limit: 50}))
	if len(inbox.Items) != 1 {
		t.Fatalf("%d mention items, want 1: %+v", len(inbox.Items), inbox.Items)
	}
	// The remote timeline (verified from genesis, nothing stored) refuses
	// it too.
	if _, err := bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Source: discourse.SourceRemote}); code(err) != discourse.CodeVerificationFailed ||
		!strings.Contains(err.Error(), "seq 3 and seq 4") {
		t.Fatalf("remote timeline: %v", err)
	}
}

// History pages, long after: the first copy left bob's record window (10
// records) long ago and bob restarted since; the index in his store still
// names it.
func TestReplayedEnvelopeAfterWindowAndRestart(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	p := connectortest.NewProxy(t, h)
	small := func(o *connector.Options) { o.Config.State.RecordsPerRoom = 10; o.HistoryPage = 10 }
	bob := newAgent(t, h, 0xB0, "", withHTTP(p.Client), small)
	roomID := createRoom(t, alice, h, "public", nil)
	say := func(n int) {
		for i := range n {
			must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
				discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprintf("m%d", i), OnHeadMismatch: "send_anyway"}))
		}
	}
	say(4)
	must[*discourse.RoomOpenResult](t, "agent_protocols_room_open")(bob.RoomOpen(ctx, bob.sess, discourse.RoomOpenInput{Host: h.Origin(), RoomID: roomID}))
	say(30)
	st := must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	synced := st.Sync.SyncedSeq
	bob = bob.reopen(withHTTP(p.Client), small)
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(bob.RoomTimeline(ctx, bob.sess, discourse.RoomTimelineInput{RoomID: roomID, Limit: 200}))
	if len(tl.Items) == 0 || tl.Items[0].Seq <= 3 {
		t.Fatalf("seq 3 is still in the window: %+v", tl.Items[0])
	}
	say(3)
	recs := hubRecords(t, h, roomID)
	serve(p, replayedHistory(t, recs, 3, synced+2))
	_, _ = bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true})
	wantReplayRefused(t, bob, roomID, 3, synced+2)
}

// liveHost is a hostile host for live streams: every other request goes
// through the proxy to the hub, every live stream is its own, and carries
// the records sent on items.
type liveHost struct {
	srv   *httptest.Server
	items chan *adp.Record
}

func newLiveHost(t *testing.T, p *connectortest.Proxy) *liveHost {
	lh := &liveHost{items: make(chan *adp.Record, 4)}
	lh.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/events/live") {
			p.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case rec := <-lh.items:
				b, _ := json.Marshal(rec)
				fmt.Fprintf(w, "event: room.event\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
			case <-time.After(time.Second):
				fmt.Fprint(w, ": heartbeat\n\n")
				w.(http.Flusher).Flush()
			}
		}
	}))
	lh.srv.EnableHTTP2 = true
	lh.srv.StartTLS()
	t.Cleanup(lh.srv.Close)
	return lh
}

func (lh *liveHost) client(string, *x509.CertPool) (*http.Client, error) {
	pool := x509.NewCertPool()
	pool.AddCert(lh.srv.Certificate())
	addr := lh.srv.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
	}}, nil
}

// The live stream: the host pushes, as the next record, a copy of record
// 3's envelope, correctly linked to bob's verified position. The room is
// refused at once, naming both seqs.
func TestReplayedEnvelopeOnTheLiveStream(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	p := connectortest.NewProxy(t, h)
	lh := newLiveHost(t, p)
	bob := newAgent(t, h, 0xB0, "", withHTTP(lh.client))
	roomID := createRoom(t, alice, h, "public", nil)
	for i := range 3 {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
			discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprintf("m%d", i), OnHeadMismatch: "send_anyway"}))
	}
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	bob.Start(ctx)
	eventually(t, 5*time.Second, "a live stream", func() bool { s, _ := bob.Following(); return s == 1 })
	recs := hubRecords(t, h, roomID)
	last := recs[len(recs)-1]
	pos, err := bob.Store.Read().Position(ctx, 1)
	if err != nil || pos.SyncedSeq != last.Seq {
		t.Fatalf("bob is at %+v, the hub at %d (%v)", pos, last.Seq, err)
	}
	copyRec, err := adp.NewRecord(roomID, last.Link(), last.AcceptedAt+1000, recs[2].Envelope)
	if err != nil {
		t.Fatal(err)
	}
	lh.items <- copyRec
	eventually(t, 10*time.Second, "the room refused", func() bool {
		pos, err := bob.Store.Read().Position(ctx, 1)
		return err == nil && pos.Failed
	})
	wantReplayRefused(t, bob, roomID, 3, copyRec.Seq)
}
