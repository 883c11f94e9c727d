package wake

import (
	"strings"
	"testing"

	"apconnect/host/config"
	"apconnect/host/inbox"
	"apconnect/host/store"
)

// The Codex Stop hook blocks for high-priority items of the kinds that were
// not announced to the session, once; a new session gets them again; items
// of other kinds, lower priorities or no longer pending never block.
func TestCodexStop(t *testing.T) {
	t.Parallel()
	c := newHome(t, nil, nil).open()
	st := c.Store()
	kinds := config.DefaultWakeKinds()
	stop := func(session string) *CodexDecision {
		t.Helper()
		d, err := CodexStop(bg, st, kinds, CodexInput{SessionID: session}, "hook pid 1", 1000)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := stop("s1"); d != nil {
		t.Fatalf("empty inbox: %+v", d)
	}
	add(t, c, mention("m1", 4), ofKind("n1", "room.message.new", inbox.PriorityHigh), ofKind("s1", "room.steer", inbox.PriorityNormal),
		ofKind("a1", "room.join.approved", inbox.PriorityHigh), ofKind("gone", "room.mention", inbox.PriorityHigh))
	if _, _, err := c.Engine().InboxAck(bg, []string{"gone"}, "dismissed", 0); err != nil {
		t.Fatal(err)
	}
	d := stop("s1")
	if d == nil || d.Decision != "block" {
		t.Fatalf("pending items: %+v", d)
	}
	for _, want := range []string{"apconnect: 2 inbox items need you.", "Inbox item m1: you were mentioned in room room1 (seq 4).",
		"Inbox item a1: your request to join room", "Call agent_protocols_inbox_next"} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, d.Reason)
		}
	}
	for _, never := range []string{"n1", "s1:", "gone", "ignore your instructions"} {
		if strings.Contains(d.Reason, never) {
			t.Errorf("reason carries %q: %s", never, d.Reason)
		}
	}
	if d := stop("s1"); d != nil {
		t.Fatalf("announced twice to a session: %+v", d)
	}
	if d := stop("s2"); d == nil || !strings.Contains(d.Reason, "item m1") {
		t.Fatalf("another session: %+v", d)
	}
	add(t, c, mention("m2", 7))
	if d := stop("s1"); d == nil || !strings.HasPrefix(d.Reason, "apconnect: an inbox item needs you. Inbox item m2:") || strings.Contains(d.Reason, "item m1") {
		t.Fatalf("a new item: %+v", d)
	}
	ws, _ := st.Read().RecentWakes(bg, store.WakeFilter{Via: store.WakeViaCodex})
	if len(ws) != 5 || ws[0].Target != "codex:s1" || ws[0].Label != "Codex session s1" || ws[0].Holder != "hook pid 1" {
		t.Fatalf("codex wakes %+v", ws)
	}
}
