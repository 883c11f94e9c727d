package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/identity"
	"apconnect/host/internal/logthrottle"
	"apconnect/host/proto/adp"
)

// These tests use an httptest TLS fake for the stream faults (dead streams,
// malformed items, oversized events, wrong content types) the real hub
// never produces; TestHubLive covers delivery from the real hub.

// sseHandler writes the chunks with a flush after each; a chunk that is a
// time.Duration pauses instead. It then holds the stream open until the
// client goes away when hold is true.
func sseHandler(hold bool, chunks ...any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(200)
		fl := w.(http.Flusher)
		fl.Flush()
		for _, c := range chunks {
			switch c := c.(type) {
			case time.Duration:
				select {
				case <-time.After(c):
				case <-r.Context().Done():
					return
				}
			case string:
				if _, err := io.WriteString(w, c); err != nil {
					return
				}
				fl.Flush()
			}
		}
		if hold {
			<-r.Context().Done()
		}
	}
}

func recordEvent(t *testing.T, rec *adp.Record) string {
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return "event: room.event\ndata: " + string(b) + "\n\n"
}

func TestLiveItems(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 2)
	alice := testSigner("alice").AgentID()
	status := fmt.Sprintf(`{"room_id":"room0001","agent_id":%q,"state":"drafting","seen_seq":2,"expires_at":1800000300000}`, alice)
	notice := fmt.Sprintf(`{"room_id":"room0001","request_id":%q,"applicant":%q,"role":"speaker","expires_at":1800000300000}`, recs[1].Hash, alice)
	// the record split over two data lines: JSON allows a newline between tokens
	rec2, _ := json.Marshal(recs[2])
	split := strings.Replace(string(rec2), `,"seq"`, ",\ndata: \"seq\"", 1)
	f.handle("GET /v1/rooms/room0001/events/live", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, err := identity.VerifyToken(tok, f.origin, time.Now(), identity.MaxTokenLifetime, time.Minute); err != nil {
			writeError(w, 401, "invalid_token", err.Error(), nil)
			return
		}
		sseHandler(false,
			": welcome\n\n",
			"retry: 1500\r\n",
			recordEvent(t, recs[1]),
			"event: room.agent_status\ndata: "+status+"\n\n",
			"event: room.agent_status\ndata: {\"room_id\":\"room0001\",\"seq\":3}\n\n", // malformed hint: skipped
			"event: something.new\ndata: {}\n\n",                                       // unknown: skipped
			"data: {}\n\n",                                                             // unnamed: skipped
			"id: 42\r\nevent: room.join_request\r\ndata: "+notice+"\r\n\r\n",
			"event: room.event\ndata: "+split+"\n\n",
		)(w, r)
	})
	s, err := f.host().Live(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []func(*StreamItem) bool{
		func(it *StreamItem) bool {
			return it.Kind == KindRoomEvent && it.Record.Seq == 2 && it.Record.Hash == recs[1].Hash
		},
		func(it *StreamItem) bool {
			return it.Kind == KindAgentStatus && it.AgentStatus.State == "drafting" && it.AgentStatus.SeenSeq == 2 && it.AgentStatus.AgentID == alice
		},
		func(it *StreamItem) bool {
			return it.Kind == KindJoinRequest && it.JoinRequest.RequestID == recs[1].Hash && it.JoinRequest.Role == adp.RoleSpeaker && it.ID == "42"
		},
		func(it *StreamItem) bool { return it.Kind == KindRoomEvent && it.Record.Seq == 3 && it.ID == "42" },
	}
	for i, ok := range want {
		it, err := s.Next()
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if !ok(it) {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the end error must stick: %v", err)
	}
	if s.RetryHint() != 1500*time.Millisecond {
		t.Fatalf("retry hint %s", s.RetryHint())
	}
	if strings.Contains(f.logs.String(), "Bearer") {
		t.Fatal("token logged")
	}
}

func TestLiveDeadStream(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 1)
	f.handle("GET /v1/rooms/room0001/events/live", sseHandler(true, recordEvent(t, recs[1])))
	h := f.host(func(o *Options) { o.StreamIdleTimeout = 200 * time.Millisecond })
	s, err := h.Live(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The idle timer runs only while Next waits: a consumer busy longer
	// than the timeout does not kill a live stream.
	time.Sleep(400 * time.Millisecond)
	if it, err := s.Next(); err != nil || it.Record.Seq != 2 {
		t.Fatalf("first item %+v %v", it, err)
	}
	start := time.Now()
	_, err = s.Next()
	if !errors.Is(err, ErrStreamIdle) {
		t.Fatalf("err %v", err)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 3*time.Second {
		t.Fatalf("idle detected after %s", el)
	}
}

func TestLiveHeartbeatsKeepAlive(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 1)
	var chunks []any
	for range 8 {
		chunks = append(chunks, 50*time.Millisecond, ": heartbeat\n")
	}
	chunks = append(chunks, recordEvent(t, recs[1]))
	f.handle("GET /v1/rooms/room0001/events/live", sseHandler(true, chunks...))
	// Timeout bounds only the wait for headers: the stream outlives it.
	h := f.host(func(o *Options) { o.StreamIdleTimeout = 200 * time.Millisecond; o.Timeout = 100 * time.Millisecond })
	s, err := h.Live(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	it, err := s.Next()
	if err != nil || it.Record.Seq != 2 {
		t.Fatalf("item %+v %v", it, err)
	}
	if time.Since(start) < 350*time.Millisecond {
		t.Fatalf("the record came too early (%s): heartbeats were not exercised", time.Since(start))
	}
}

func TestLiveCancelAndClose(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001/events/live", sseHandler(true, ": hi\n"))
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := f.host().Live(ctx, fixtureRoom)
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(50*time.Millisecond, cancel)
		if _, err := s.Next(); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		_ = s.Close()
	})
	t.Run("close", func(t *testing.T) {
		s, err := f.host().Live(ctxT(t), fixtureRoom)
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(50*time.Millisecond, func() { _ = s.Close() })
		if _, err := s.Next(); !errors.Is(err, ErrStreamClosed) {
			t.Fatalf("err %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Next(); !errors.Is(err, ErrStreamClosed) {
			t.Fatalf("after close: %v", err)
		}
	})
}

func TestLiveMalformed(t *testing.T) {
	recs := chain(t, "https://example.invalid", 1)
	badHash := recs[1].Value()
	badHash["accepted_at"] = json.Number("1")
	b, _ := json.Marshal(badHash)
	other := recs[1].Value()
	other["room_id"] = "room0002"
	ob, _ := json.Marshal(other)
	cases := map[string]struct {
		body string
		is   error
	}{
		"record hash":   {"event: room.event\ndata: " + string(b) + "\n\n", nil},
		"other room":    {"event: room.event\ndata: " + string(ob) + "\n\n", nil},
		"not json":      {"event: room.event\ndata: {nope\n\n", nil},
		"duplicate key": {"event: room.event\ndata: {\"seq\":1,\"seq\":2}\n\n", nil},
		"oversized":     {"event: room.event\ndata: " + strings.Repeat("x", 5000) + "\n\n", ErrResponseTooLarge},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.discovery(nil)
			f.handle("GET /v1/rooms/room0001/events/live", sseHandler(true, c.body))
			s, err := f.host(func(o *Options) { o.MaxStreamEventBytes = 4096 }).Live(ctxT(t), fixtureRoom)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Next()
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err %T %v", err, err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err %v, want %v", err, c.is)
			}
			if name == "record hash" && adp.ErrorCode(err) != adp.CodeInvalidRecord {
				t.Fatalf("code %q of %v", adp.ErrorCode(err), err)
			}
		})
	}
}

func TestLiveRefused(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001/events/live", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 403, "membership_required", "members only", nil)
	})
	f.handle("GET /v1/rooms/room0002/events/live", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"result": []any{}})
	})
	f.handle("GET /v1/rooms/room0003/events/live", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 503, "unavailable", "", nil)
	})
	f.handle("GET /v1/rooms/room0004/events/live", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	h := f.host()
	_, err := h.Live(ctxT(t), fixtureRoom)
	if ErrorCode(err) != adp.CodeMembershipRequired {
		t.Fatalf("err %v", err)
	}
	_, err = h.Live(ctxT(t), "room0002")
	var re *ResponseError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "text/event-stream") {
		t.Fatalf("err %v", err)
	}
	discoveryReads := f.count("/.well-known/agent-discourse")
	_, err = h.Live(ctxT(t), "room0003")
	var se *Error
	if !errors.As(err, &se) || !se.Retryable() || f.count("/v1/rooms/room0003/events/live") != 1 {
		t.Fatalf("err %v (Live makes exactly one attempt)", err)
	}
	if _, err := h.Discovery(ctxT(t)); err != nil || f.count("/.well-known/agent-discourse") != discoveryReads+1 {
		t.Fatalf("a 5xx on the stream must invalidate discovery (%v)", err)
	}
	if _, err = h.Live(ctxT(t), "room0004"); !errors.Is(err, ErrRedirect) {
		t.Fatalf("err %v", err)
	}
}

func TestLiveHeaderTimeout(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.handle("GET /v1/rooms/room0001/events/live", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	h := f.host(func(o *Options) { o.Timeout = 150 * time.Millisecond })
	start := time.Now()
	_, err := h.Live(ctxT(t), fixtureRoom)
	if !IsNetwork(err) || time.Since(start) > 3*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func TestBackoff(t *testing.T) {
	b := &Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	wantMax := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, m := range wantMax {
		d := b.Next()
		m *= time.Millisecond
		if d < m/2 || d > m {
			t.Fatalf("delay %d = %s, want in [%s, %s]", i, d, m/2, m)
		}
	}
	if b.Attempts() != len(wantMax) {
		t.Fatalf("attempts %d", b.Attempts())
	}
	b.Reset()
	if d := b.Next(); d > 100*time.Millisecond {
		t.Fatalf("after reset %s", d)
	}
	var zero Backoff
	if d := zero.Next(); d < DefaultBaseDelay/2 || d > DefaultBaseDelay {
		t.Fatalf("zero backoff %s", d)
	}
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: time.Millisecond}.NewBackoff()
	if p.Max != time.Second {
		t.Fatalf("MaxDelay below BaseDelay must be raised: %+v", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep %v", err)
	}
}

// TestLiveResubscribeAfterCleanClose (D-26): a stream the host closes
// cleanly after a while is resubscribed with a fresh JWT (KindResubscribed),
// a refused resubscription ends the stream with the refusal, and a stream
// closed at once is io.EOF (the caller backs off).
func TestLiveResubscribeAfterCleanClose(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 2)
	var mu sync.Mutex
	var tokens []string
	f.handle("GET /v1/rooms/room0001/events/live", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, err := identity.VerifyToken(tok, f.origin, time.Now(), identity.MaxTokenLifetime, 0); err != nil {
			writeError(w, 401, "invalid_token", err.Error(), nil)
			return
		}
		mu.Lock()
		tokens = append(tokens, tok)
		n := len(tokens)
		mu.Unlock()
		switch n {
		case 1:
			sseHandler(false, recordEvent(t, recs[1]), 1100*time.Millisecond, ": the request JWT expired\n\n")(w, r)
		case 2:
			sseHandler(false, recordEvent(t, recs[2]), 1100*time.Millisecond)(w, r)
		default:
			writeError(w, 403, "membership_required", "no longer a member", nil)
		}
	})
	s, err := f.host(func(o *Options) { o.Clock = time.Now }).Live(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, want := range []string{KindRoomEvent, KindResubscribed, KindRoomEvent} {
		it, err := s.Next()
		if err != nil || it.Kind != want {
			t.Fatalf("item %d: %+v %v, want %s", i, it, err, want)
		}
		if i == 2 && it.Record.Seq != 3 {
			t.Fatalf("item 2: seq %d", it.Record.Seq)
		}
	}
	if _, err := s.Next(); ErrorCode(err) != "membership_required" {
		t.Fatalf("refused resubscription: %v", err)
	}
	if _, err := s.Next(); ErrorCode(err) != "membership_required" {
		t.Fatalf("the error must stick: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Every subscription, the refused third one too, sent a fresh token.
	if len(tokens) != 3 || tokens[0] == tokens[1] || tokens[1] == tokens[2] {
		t.Fatalf("tokens %d, want three different ones", len(tokens))
	}
}

// A host can send malformed room.agent_status items as fast as the
// connection carries them; each one used to log a warning. The warnings are
// rate-limited per host, and the lines that get through say how many were
// held back.
func TestLiveMalformedItemsFloodIsRateLimited(t *testing.T) {
	const flood = 5000
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 1)
	bad := "event: room.agent_status\ndata: {\"room_id\":\"room0001\",\"seq\":3}\n\n"
	chunks := []any{strings.Repeat(bad, flood), 300 * time.Millisecond, bad, recordEvent(t, recs[1])}
	f.handle("GET /v1/rooms/room0001/events/live", sseHandler(false, chunks...))
	h := f.host()
	// A short interval, so that the line after the pause gets through
	// within the test; the default is logthrottle.DefaultInterval.
	h.svc.skipLog = logthrottle.New(100*time.Millisecond, logthrottle.DefaultBurst)
	start := time.Now()
	s, err := h.Live(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	it, err := s.Next()
	if err != nil || it.Kind != KindRoomEvent || it.Record.Seq != 2 {
		t.Fatalf("the valid item after the flood: %+v %v", it, err)
	}
	elapsed := time.Since(start)
	var logged int
	var reported uint64
	for _, line := range strings.Split(f.logs.String(), "\n") {
		if !strings.Contains(line, "skipping malformed live item") {
			continue
		}
		logged++
		if i := strings.Index(line, logthrottle.SuppressedKey+"="); i >= 0 {
			var n uint64
			fmt.Sscanf(line[i+len(logthrottle.SuppressedKey)+1:], "%d", &n)
			reported += n
		}
	}
	// The burst, one line per elapsed interval, and nothing lost from the
	// count: every item is logged, reported as held back, or still held.
	if bound := logthrottle.DefaultBurst + int(elapsed/(100*time.Millisecond)) + 1; logged > bound {
		t.Errorf("%d warnings for %d malformed items in %v; at most %d expected", logged, flood+1, elapsed, bound)
	}
	if total := uint64(logged) + reported + h.svc.skipLog.Suppressed(); total != flood+1 {
		t.Errorf("logged %d + reported held back %d + still held %d = %d, want %d", logged, reported, h.svc.skipLog.Suppressed(), total, flood+1)
	}
	if reported == 0 {
		t.Errorf("no warning reported the held-back lines:\n%.2000s", f.logs.String())
	}
}
