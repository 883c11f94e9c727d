package discourse_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// sseMsg is one parsed SSE message: an event with data, or a comment.
type sseMsg struct {
	Event, Data, Comment string
}

// stream is a live subscription read in the background.
type stream struct {
	msgs   chan sseMsg
	closed chan struct{} // closed when the server ends the stream
	cancel context.CancelFunc
}

// subscribe opens the live stream of a room as agent a and waits until the
// hub has confirmed the subscription (its first comment).
func (f *fx) subscribe(a *hubtest.Agent, roomID string) *stream {
	f.t.Helper()
	s, r := f.trySubscribe(a, roomID)
	if r != nil {
		f.t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	select {
	case m := <-s.msgs:
		if m.Comment != "subscribed" {
			f.t.Fatalf("first stream message %+v", m)
		}
	case <-time.After(10 * time.Second):
		f.t.Fatal("no subscription confirmation")
	}
	return s
}

// trySubscribe opens a stream; a refusal is returned as a response.
func (f *fx) trySubscribe(a *hubtest.Agent, roomID string) (*stream, *hubtest.Response) {
	f.t.Helper()
	return f.trySubscribeWith(f.h.AuthHeader(f.t, a), roomID)
}

// trySubscribeWith opens a stream with the given headers.
func (f *fx) trySubscribeWith(header http.Header, roomID string) (*stream, *hubtest.Response) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.h.URL("/v1/rooms/"+roomID+"/events/live?last_seq=1"), nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	client := *f.h.Client
	client.Timeout = 0
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		f.t.Fatalf("subscribe: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		defer cancel()
		var buf strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&buf)
		return nil, &hubtest.Response{Status: resp.StatusCode, Header: resp.Header, Body: []byte(buf.String())}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		f.t.Fatalf("stream Content-Type %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		f.t.Fatalf("stream Cache-Control %q", cc)
	}
	s := &stream{msgs: make(chan sseMsg, 1024), closed: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.closed)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var m sseMsg
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if m != (sseMsg{}) {
					s.msgs <- m
				}
				m = sseMsg{}
			case strings.HasPrefix(line, ":"):
				m.Comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "event: "):
				m.Event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				m.Data += line[len("data: "):]
			}
		}
	}()
	f.t.Cleanup(cancel)
	return s, nil
}

// next returns the next event (skipping comments unless wantComment).
func (s *stream) next(t testing.TB, timeout time.Duration) (sseMsg, bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m := <-s.msgs:
			if m.Comment != "" && m.Event == "" {
				continue
			}
			return m, true
		case <-s.closed:
			select {
			case m := <-s.msgs:
				if m.Event != "" {
					return m, true
				}
			default:
			}
			return sseMsg{}, false
		case <-deadline:
			t.Fatal("timed out waiting for a stream event")
		}
	}
}

// wantEnded waits for the server to end the stream, failing if it delivers
// another event first.
func (s *stream) wantEnded(t testing.TB) {
	t.Helper()
	for {
		select {
		case m := <-s.msgs:
			if m.Event != "" {
				t.Fatalf("delivered %s after membership ended: %s", m.Event, m.Data)
			}
		case <-s.closed:
			return
		case <-time.After(10 * time.Second):
			t.Fatal("the stream was not closed")
		}
	}
}

// TestLiveStreamAccess: JWT-authenticated, active members only — public
// rooms included (ADP 16.1).
func TestLiveStreamAccess(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	as := agents(120, 3)
	creator, outsider := as[0], as[1]
	id := f.create(creator, nil)
	private := f.create(creator, obj{"visibility": "private"})
	_, r := f.trySubscribe(outsider, id)
	wantError(t, r, http.StatusForbidden, adp.CodeMembershipRequired)
	_, r = f.trySubscribe(nil, id)
	wantError(t, r, http.StatusUnauthorized, identity.CodeInvalidToken)
	_, r = f.trySubscribe(outsider, private)
	wantError(t, r, http.StatusNotFound, adp.CodeRoomNotFound)
	_, r = f.trySubscribe(outsider, "nosuchroom0000000000")
	wantError(t, r, http.StatusNotFound, adp.CodeRoomNotFound)
	closed := f.create(creator, nil)
	f.must(creator, closed, adp.TypeRoomClose, obj{})
	_, r = f.trySubscribe(creator, closed)
	wantError(t, r, http.StatusConflict, adp.CodeRoomNotActive)
}

// TestLiveStreamDelivery: records accepted after the subscription arrive as
// room.event with the server record (never earlier ones: no replay), agent
// status and join request notices arrive as non-record items, and idle
// streams get heartbeat comments.
func TestLiveStreamDelivery(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.HeartbeatInterval = 40 * time.Millisecond }))
	as := agents(125, 4)
	creator, sp, applicant := as[0], as[1], as[2]
	id := f.create(creator, obj{"visibility": "restricted", "policy": obj{"invites": obj{sp.ID: "speaker"}}})
	f.join(sp, id, adp.RoleSpeaker)
	wantStatus(t, f.message(sp, id, "before the subscription"), 200)

	modStream := f.subscribe(creator, id)
	spStream := f.subscribe(sp, id)

	t.Run("heartbeats", func(t *testing.T) {
		deadline := time.After(5 * time.Second)
		for {
			select {
			case m := <-spStream.msgs:
				if m.Comment == "heartbeat" {
					return
				}
				t.Fatalf("unexpected %+v before any write", m)
			case <-deadline:
				t.Fatal("no heartbeat")
			}
		}
	})
	t.Run("records, no replay", func(t *testing.T) {
		r := f.message(sp, id, "after the subscription")
		wantStatus(t, r, 200)
		for _, s := range []*stream{modStream, spStream} {
			m, ok := s.next(t, 5*time.Second)
			if !ok || m.Event != "room.event" {
				t.Fatalf("got %+v", m)
			}
			wantShape(t, "serverRecord", []byte(m.Data))
			if !jsonEq(t, json.RawMessage(m.Data), json.RawMessage(r.Body)) {
				t.Fatalf("streamed %s, accepted %s", m.Data, r.Body)
			}
		}
	})
	t.Run("agent status", func(t *testing.T) {
		r := f.h.Do(http.MethodPut, "/v1/rooms/"+id+"/agent-status", obj{"state": "drafting", "seen_seq": 3}, f.h.AuthHeader(t, sp))
		wantStatus(t, r, 200)
		for _, s := range []*stream{modStream, spStream} {
			m, _ := s.next(t, 5*time.Second)
			if m.Event != "room.agent_status" {
				t.Fatalf("got %+v", m)
			}
			d := decodeJSON(t, []byte(m.Data))
			for _, k := range []string{"seq", "pre_hash", "hash", "envelope"} {
				if _, ok := d[k]; ok {
					t.Fatalf("room.agent_status carries %q: %s", k, m.Data)
				}
			}
			if d["agent_id"] != sp.ID || d["state"] != "drafting" || d["room_id"] != id {
				t.Fatalf("status item %s", m.Data)
			}
		}
	})
	t.Run("join requests go to reviewers only", func(t *testing.T) {
		j := f.submitRequest(applicant, id, adp.RoleSpeaker)
		m, _ := modStream.next(t, 5*time.Second)
		if m.Event != "room.join_request" {
			t.Fatalf("reviewer got %+v", m)
		}
		d := decodeJSON(t, []byte(m.Data))
		if d["request_id"] != j.ID || d["applicant"] != applicant.ID || d["role"] != "speaker" || d["room_id"] != id ||
			d["expires_at"] != float64(j.ExpiresAt) {
			t.Fatalf("join request item %s", m.Data)
		}
		for _, k := range []string{"seq", "pre_hash", "hash", "envelope"} {
			if _, ok := d[k]; ok {
				t.Fatalf("room.join_request carries %q", k)
			}
		}
		// The speaker's next item is the next record, not the notice.
		wantStatus(t, f.message(creator, id, "next"), 200)
		m, _ = spStream.next(t, 5*time.Second)
		if m.Event != "room.event" {
			t.Fatalf("speaker got %+v", m)
		}
		m, _ = modStream.next(t, 5*time.Second)
		if m.Event != "room.event" {
			t.Fatalf("reviewer got %+v", m)
		}
	})
}

// TestLiveStreamEndsWithMembership: leaving, removal and a ban each end
// delivery and close the stream (ADP 16.1); closing the room and shutting
// the hub down end streams too.
func TestLiveStreamEndsWithMembership(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	as := agents(130, 6)
	creator, leaver, removed, banned, stayer := as[0], as[1], as[2], as[3], as[4]
	id := f.create(creator, nil)
	for _, a := range []*hubtest.Agent{leaver, removed, banned, stayer} {
		f.join(a, id, adp.RoleSpeaker)
	}
	streams := map[*hubtest.Agent]*stream{}
	for _, a := range []*hubtest.Agent{leaver, removed, banned, stayer} {
		streams[a] = f.subscribe(a, id)
	}
	drain := func(s *stream, n int) {
		for i := 0; i < n; i++ {
			if m, ok := s.next(t, 5*time.Second); !ok || m.Event != "room.event" {
				t.Fatalf("want a record, got %+v (open %v)", m, ok)
			}
		}
	}
	// Each stream receives the records accepted while its agent is a
	// member, and nothing from the record that ends the membership on.
	f.must(leaver, id, adp.TypeRoomLeave, obj{})
	streams[leaver].wantEnded(t)
	drain(streams[removed], 1)
	f.must(creator, id, adp.TypeMemberRemove, obj{"member": removed.ID})
	streams[removed].wantEnded(t)
	drain(streams[banned], 2)
	f.must(creator, id, adp.TypeMemberRemove, obj{"member": banned.ID, "ban": true})
	streams[banned].wantEnded(t)
	drain(streams[stayer], 3)
	wantStatus(t, f.message(stayer, id, "still here"), 200)
	drain(streams[stayer], 1)

	// A resubscription after leaving is refused.
	_, r := f.trySubscribe(leaver, id)
	wantError(t, r, http.StatusForbidden, adp.CodeMembershipRequired)

	// Closing the room delivers the close record, then ends the stream.
	f.must(creator, id, adp.TypeRoomClose, obj{})
	drain(streams[stayer], 1)
	streams[stayer].wantEnded(t)

	// Shutting the hub down ends open streams.
	other := f.create(creator, nil)
	s := f.subscribe(creator, other)
	go f.h.Close()
	s.wantEnded(t)
}

// TestLiveStreamEndsWhenRoomEndsByTime: the housekeeping loop ends streams
// of rooms whose end_time passed (no record marks it).
func TestLiveStreamEndsWhenRoomEndsByTime(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.MaintenanceInterval = 20 * time.Millisecond }))
	creator := hubtest.NewAgent(140)
	now := f.clock.Now().UnixMilli()
	id := f.create(creator, obj{"start_time": now - 1000, "end_time": now + 11*60_000})
	s := f.subscribe(creator, id)
	f.clock.Advance(12 * time.Minute)
	s.wantEnded(t)
}

// TestLiveStreamEndsAtTokenExpiry (D-26): a stream closes, with a comment
// and cleanly, when its request JWT expires or MaxStreamLifetime passes,
// whichever comes first.
func TestLiveStreamEndsAtTokenExpiry(t *testing.T) {
	t.Parallel()
	f := newFx(t, withLimits(func(l *hub.Limits) { l.Discourse.MaxStreamLifetime = 3 * time.Second }))
	creator := agents(130, 1)[0]
	id := f.create(creator, nil)
	open := func(exp time.Duration) (*stream, time.Time) {
		t.Helper()
		// iat is backdated so that exp - iat stays 300 s.
		tok := creator.Token(t, f.h.Origin(), f.h.Now().Add(exp-300*time.Second), 300*time.Second)
		s, r := f.trySubscribeWith(hubtest.Bearer(tok), id)
		if r != nil {
			t.Fatalf("subscribe: %d %s", r.Status, r.Body)
		}
		return s, time.Now()
	}
	ended := func(s *stream, opened time.Time, min, max time.Duration) {
		t.Helper()
		last := ""
		for {
			select {
			case m := <-s.msgs:
				if m.Event != "" {
					t.Fatalf("unexpected event %+v", m)
				}
				last = m.Comment
				continue
			case <-s.closed:
			case <-time.After(10 * time.Second):
				t.Fatal("the stream was not closed")
			}
			break
		}
		if d := time.Since(opened); d < min || d > max {
			t.Fatalf("the stream lasted %s, want %s to %s", d, min, max)
		}
		if !strings.Contains(last, "reconnect with a fresh request JWT") {
			t.Fatalf("last comment %q", last)
		}
	}
	s, opened := open(time.Second) // exp in 1 s: before the 3 s lifetime
	ended(s, opened, 500*time.Millisecond, 2500*time.Millisecond)
	s, opened = open(time.Minute) // the lifetime comes first
	ended(s, opened, 2500*time.Millisecond, 6*time.Second)
}
