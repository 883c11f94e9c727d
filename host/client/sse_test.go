package client

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// collect parses a whole stream and returns its events, the comment count
// and the final error.
func collect(t *testing.T, r io.Reader, maxEvent int) ([]sseEvent, int, *sseParser, error) {
	t.Helper()
	p := newSSEParser(r, maxEvent)
	var evs []sseEvent
	comments := 0
	for {
		ev, err := p.next(func() { comments++ })
		if err != nil {
			return evs, comments, p, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEParser(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		want     []sseEvent
		comments int
	}{
		{"lf", "event: room.event\ndata: {\"a\":1}\n\n", []sseEvent{{name: "room.event", data: `{"a":1}`}}, 0},
		{"crlf", "event: room.event\r\ndata: x\r\n\r\n", []sseEvent{{name: "room.event", data: "x"}}, 0},
		{"cr", "event: room.event\rdata: x\r\r", []sseEvent{{name: "room.event", data: "x"}}, 0},
		{"mixed", "data: a\r\ndata: b\rdata: c\n\r\n", []sseEvent{{name: "message", data: "a\nb\nc"}}, 0},
		{"multi-line data", "data: line1\ndata: line2\ndata:\ndata:  indented\n\n", []sseEvent{{name: "message", data: "line1\nline2\n\n indented"}}, 0},
		{"no space after colon", "event:room.event\ndata:x\n\n", []sseEvent{{name: "room.event", data: "x"}}, 0},
		{"comments are heartbeats", ": heartbeat\n:\n\n: hb\ndata: x\n\n", []sseEvent{{name: "message", data: "x"}}, 3},
		{"no data, no dispatch", "event: room.event\n\ndata: y\n\n", []sseEvent{{name: "message", data: "y"}}, 0},
		{"empty data dispatches", "data\n\n", []sseEvent{{name: "message", data: ""}}, 0},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []sseEvent{{name: "message", data: "a", id: "7"}, {name: "message", data: "b", id: "7"}, {name: "message", data: "c", id: ""}}, 0},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []sseEvent{{name: "message", data: "a", id: "1"}, {name: "message", data: "b", id: "1"}}, 0},
		{"unknown field ignored", "foo: bar\ndata: a\n\n", []sseEvent{{name: "message", data: "a"}}, 0},
		{"bom", "\xEF\xBB\xBFdata: a\n\n", []sseEvent{{name: "message", data: "a"}}, 0},
		{"unterminated event dropped", "data: a\n\ndata: b\n", []sseEvent{{name: "message", data: "a"}}, 0},
		{"unterminated line dropped", "data: a\n\ndata: b", []sseEvent{{name: "message", data: "a"}}, 0},
		{"event name resets", "event: x\ndata: 1\n\ndata: 2\n\n", []sseEvent{{name: "x", data: "1"}, {name: "message", data: "2"}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
				evs, comments, _, err := collect(t, r, 1<<10)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err %v", err)
				}
				if len(evs) != len(c.want) {
					t.Fatalf("events %+v, want %+v", evs, c.want)
				}
				for i := range evs {
					if evs[i] != c.want[i] {
						t.Fatalf("event %d = %+v, want %+v", i, evs[i], c.want[i])
					}
				}
				if comments != c.comments {
					t.Fatalf("comments %d, want %d", comments, c.comments)
				}
			}
		})
	}
}

func TestSSERetry(t *testing.T) {
	_, _, p, _ := collect(t, strings.NewReader("retry: 2500\ndata: a\n\nretry: x\nretry: -1\n"), 1<<10)
	if p.retry != 2500*time.Millisecond {
		t.Fatalf("retry %s", p.retry)
	}
}

func TestSSEBounds(t *testing.T) {
	long := strings.Repeat("x", 2000)
	for name, in := range map[string]string{
		"long line":             "data: " + long + "\n\n",
		"long unterminated":     ": " + long,
		"event over many lines": strings.Repeat("data: "+long[:500]+"\n", 5) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := collect(t, strings.NewReader(in), 1024)
			if !errors.Is(err, errSSETooLarge) {
				t.Fatalf("err %v", err)
			}
		})
	}
	// exactly at the bound is fine
	evs, _, _, err := collect(t, strings.NewReader("data: "+long[:1023]+"\n\n"), 1024)
	if !errors.Is(err, io.EOF) || len(evs) != 1 || len(evs[0].data) != 1023 {
		t.Fatalf("events %d, err %v", len(evs), err)
	}
}

func FuzzSSEParser(f *testing.F) {
	f.Add("event: a\r\ndata: b\rdata: c\n\n: hb\nid: 1\nretry: 10\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		p := newSSEParser(strings.NewReader(in), 256)
		for range 1000 {
			ev, err := p.next(nil)
			if err != nil {
				return
			}
			if len(ev.data) > 256 {
				t.Fatalf("event of %d bytes passed a 256-byte bound", len(ev.data))
			}
		}
	})
}
