package opview_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/opview"
)

// sseEvent is one parsed event of the stream.
type sseEvent struct {
	id, name string
	data     map[string]any
}

// stream is an open event stream.
type stream struct {
	resp   *http.Response
	events chan sseEvent
	raw    chan string // every line, for framing checks
}

func (f *fixture) stream(t *testing.T, c *http.Client, lastID string) *stream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+f.addr+opview.EventsPath, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	sc := *c
	sc.Timeout = 0
	resp, err := sc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &stream{resp: resp, events: make(chan sseEvent, 64), raw: make(chan string, 256)}
	if resp.StatusCode != http.StatusOK {
		return s
	}
	go func() {
		defer close(s.events)
		r := bufio.NewReader(resp.Body)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			select {
			case s.raw <- line:
			default:
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if ev.name != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			}
		}
	}()
	return s
}

// next waits for the next event named name (skipping others).
func (s *stream) next(t *testing.T, name string, within time.Duration) sseEvent {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("the stream ended waiting for %q", name)
			}
			if ev.name == name {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no %q event within %s", name, within)
		}
	}
}

func topics(ev sseEvent) []string {
	var out []string
	list, _ := ev.data["topics"].([]any)
	for _, v := range list {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// The stream's framing, its change events for another agent's message,
// pings, and resumption with Last-Event-ID.
func TestEventStream(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{Ping: 300 * time.Millisecond, Poll: 100 * time.Millisecond})
	if s := f.stream(t, browser(t), ""); s.resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a stream without a session: %d", s.resp.StatusCode)
	}
	c := f.login(t, browser(t))
	s := f.stream(t, c, "")
	if ct := s.resp.Header.Get("Content-Type"); ct != "text/event-stream" || s.resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("stream headers %v", s.resp.Header)
	}
	if first := <-s.raw; first != "retry: 2000\n" {
		t.Fatalf("first line %q", first)
	}
	hello := s.next(t, "hello", 5*time.Second)
	if !strings.Contains(hello.id, "-") || hello.data["ping_ms"] != float64(300) {
		t.Fatalf("hello %+v", hello)
	}
	if ping := s.next(t, "ping", 5*time.Second); ping.id != "" || ping.data["at"] == nil {
		t.Fatalf("ping %+v", ping)
	}
	// Another agent's message reaches alice live; the view says so.
	start := time.Now()
	f.post(t, "a new message", true)
	change := s.next(t, "change", 10*time.Second)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the change took %s", d)
	}
	if change.id == hello.id || !slices.Contains(topics(change), opview.TopicRooms) {
		t.Fatalf("change %+v after hello %s", change, hello.id)
	}
	// Resuming at the latest id sends no change; an older id, or one of
	// another process, one change of every topic at once.
	quiet := time.NewTimer(time.Second)
	for settled := false; !settled; {
		select {
		case ev := <-s.events:
			if ev.name == "change" {
				change = ev
				quiet.Reset(time.Second)
			}
		case <-quiet.C:
			settled = true
		}
	}
	same := f.stream(t, c, change.id)
	if ev := same.next(t, "hello", 5*time.Second); ev.id != change.id {
		t.Fatalf("resumed at the latest id: %+v", ev)
	}
	for _, old := range []string{hello.id, "0-1", "garbage"} {
		r := f.stream(t, c, old)
		ev := r.next(t, "change", 5*time.Second)
		if ev.data["resumed"] != true || !slices.Equal(topics(ev), opview.Topics()) || ev.id != change.id {
			t.Fatalf("resumed from %q: %+v", old, ev)
		}
	}
}
