package wake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/inbox"
	"apconnect/host/store"
)

// session collects one session's channel notifications.
type session struct {
	mu   sync.Mutex
	got  []Notification
	at   []time.Time
	fail error
}

func (s *session) send(_ context.Context, n Notification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.got, s.at = append(s.got, n), append(s.at, time.Now())
	return nil
}

func (s *session) notes() []Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// ids lists every item the notifications point at, in order.
func (s *session) ids() []string {
	var out []string
	for _, n := range s.notes() {
		if n.Meta["inbox_ids"] != "" {
			out = append(out, strings.Split(n.Meta["inbox_ids"], ",")...)
		} else {
			out = append(out, n.Meta["inbox_id"])
		}
	}
	return out
}

func announce(t *testing.T, svc *Service, s *session) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- svc.Announce(ctx, s.send) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Announce: %v", err)
		}
	})
	return cancel
}

// Channel mode: the items pending at the start and each new item of the
// kinds are announced once, with a pointer and string meta; other kinds are
// not; a burst beyond five a second is folded into one notification at the
// end of the second; each session announces on its own.
func TestChannelAnnouncements(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil, func(w *config.Wake) { w.ClaudeChannel = true })
	c := h.open()
	svc := service(t, c, Options{Process: "mcp"})
	add(t, c, mention("p1", 3), ofKind("n0", "room.message.new", inbox.PriorityNormal), ofKind("p2", "room.join.approved", inbox.PriorityHigh))
	s1 := &session{}
	announce(t, svc, s1)
	eventually(t, 5*time.Second, "the pending items", func() bool { return len(s1.notes()) == 2 })
	first := s1.notes()[0]
	if want := "Inbox item p1: you were mentioned in room room1 (seq 3). Call agent_protocols_inbox_next."; first.Content != want {
		t.Errorf("content %q, want %q", first.Content, want)
	}
	if want := map[string]string{"inbox_id": "p1", "kind": "room.mention", "room_id": "room1", "seq": "3", "host": "https://127.0.0.1:9"}; fmt.Sprint(first.Meta) != fmt.Sprint(want) {
		t.Errorf("meta %v, want %v", first.Meta, want)
	}
	if m := s1.notes()[1].Meta; len(m) != 2 || m["inbox_id"] != "p2" || m["kind"] != "room.join.approved" {
		t.Errorf("meta of an item without room %v", m)
	}

	// A burst: 3 more fit in the second, 5 are folded into one.
	burst := time.Now()
	var items []inbox.Item
	for i := range 8 {
		items = append(items, mention(fmt.Sprint("b", i), int64(10+i)))
	}
	add(t, c, items...)
	eventually(t, 5*time.Second, "the burst", func() bool { return len(s1.notes()) == 6 })
	notes := s1.notes()
	folded := notes[5]
	if folded.Meta["inbox_ids"] != "b3,b4,b5,b6,b7" || folded.Meta["count"] != "5" || folded.Meta["kinds"] != "room.mention" ||
		!strings.HasPrefix(folded.Content, "5 new inbox items (b3, b4, b5, b6, b7) need you. Call agent_protocols_inbox_next") {
		t.Errorf("folded %+v", folded)
	}
	s1.mu.Lock()
	if d := s1.at[5].Sub(s1.at[0]); d < time.Second {
		t.Errorf("the folded notification came %s after the first of the second", d)
	}
	s1.mu.Unlock()
	if time.Since(burst) > 3*time.Second {
		t.Errorf("the burst took %s", time.Since(burst))
	}
	time.Sleep(300 * time.Millisecond)
	if got := s1.ids(); !slices.Equal(got, []string{"p1", "p2", "b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"}) {
		t.Fatalf("announced %v", got)
	}

	// A second session gets the pending items once too; the log keeps both.
	s2 := &session{}
	announce(t, svc, s2)
	eventually(t, 5*time.Second, "the second session", func() bool { return len(s2.ids()) == 10 })
	if ws := wakes(t, c, store.WakeFilter{Via: store.WakeViaChannel, Limit: 500}); len(ws) != 20 || ws[0].State != store.WakeSent ||
		!strings.HasPrefix(ws[0].Label, "Claude Code channel of mcp pid") {
		t.Fatalf("%d channel wakes: %+v", len(ws), ws[0])
	}
	// The agent claims an item: the log records it.
	if _, err := c.Engine().Inbox(bg, "agent", store.InboxQuery{Kinds: []string{"room.join.approved"}}, true, 0); err != nil {
		t.Fatal(err)
	}
	for _, w := range wakes(t, c, store.WakeFilter{InboxID: "p2"}) {
		if w.ClaimedAt == 0 {
			t.Errorf("the claim of p2 is not in its wake %+v", w)
		}
	}
}

// Channel mode off: Announce returns at once and sends nothing.
func TestChannelOff(t *testing.T) {
	t.Parallel()
	c := newHome(t, nil, nil).open()
	svc := service(t, c, Options{})
	add(t, c, mention("m1", 1))
	s := &session{}
	if err := svc.Announce(bg, s.send); err != nil || len(s.notes()) != 0 || svc.Channel() {
		t.Fatalf("channel off: %v %v", err, s.notes())
	}
}

// A session whose client is gone: Announce returns the send error and the
// log says the notification was not delivered.
func TestChannelSendFailure(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil, func(w *config.Wake) { w.ClaudeChannel = true })
	c := h.open()
	svc := service(t, c, Options{})
	add(t, c, mention("m1", 1))
	gone := errors.New("connection closed")
	s := &session{fail: gone}
	if err := svc.Announce(bg, s.send); !errors.Is(err, gone) {
		t.Fatalf("Announce: %v", err)
	}
	if ws := wakes(t, c, store.WakeFilter{}); len(ws) != 1 || ws[0].State != store.WakeFailed || !strings.Contains(ws[0].Error, "connection closed") {
		t.Fatalf("wakes %+v", ws)
	}
}
