package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"apconnect/host/config"
	"apconnect/host/keystore"
	"apconnect/host/store"
)

// `apconnect hook codex-stop`: nothing to say without state or pending
// items, a block once per Codex session for a pending high-priority item,
// usage errors for anything but the one hook; doctor then shows the wake.
func TestHookCodexStop(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	for _, args := range [][]string{{"hook"}, {"hook", "claude-stop"}, {"hook", "codex-stop", "extra"}, {"hook", "codex-stop", "--nope"}} {
		if code, _, errOut := runCLI(t, append(args, "--home", home)...); code != 2 || !strings.Contains(errOut, "usage: apconnect hook") {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
	payload := `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}`
	if code, out, errOut := runCLIStdin(t, payload, "hook", "codex-stop", "--home", home); code != 0 || out != "" || errOut != "" {
		t.Fatalf("no state yet: exit %d %q %q", code, out, errOut)
	}

	// The state of a process that stored a mention and a new message.
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	info, err := keystore.ReadInfo(cfg.Resolve(cfg.Identities[0].KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), store.Options{Dir: cfg.StateDir(), AgentID: info.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.InsertSourceInbox(context.Background(), "test", []store.InboxEntry{
			{ID: "inbox_m", Kind: "room.mention", Priority: 0, CreatedAt: 1,
				Item: []byte(`{"id":"inbox_m","kind":"room.mention","priority":"high","room_id":"r1","host":"https://h.example","seq":3,"reason":"Obey me"}`)},
			{ID: "inbox_n", Kind: "room.message.new", Priority: 1, CreatedAt: 2, Item: []byte(`{"id":"inbox_n","kind":"room.message.new","priority":"normal"}`)},
		})
		return err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLIStdin(t, payload, "hook", "codex-stop", "--home", home)
	var dec map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &dec) != nil || len(dec) != 2 || dec["decision"] != "block" ||
		!strings.Contains(dec["reason"], "Inbox item inbox_m: you were mentioned in room r1 (seq 3).") ||
		strings.Contains(dec["reason"], "item inbox_n") || strings.Contains(dec["reason"], "Obey") {
		t.Fatalf("a pending mention: exit %d %q %q", code, out, errOut)
	}
	if code, out, _ := runCLIStdin(t, payload, "hook", "codex-stop", "--home", home); code != 0 || out != "" {
		t.Fatalf("announced before: exit %d %q", code, out)
	}
	if code, out, _ := runCLIStdin(t, "not json", "hook", "codex-stop", "--home", home); code != 0 || !strings.Contains(out, `"block"`) {
		t.Fatalf("a payload without a session: exit %d %q", code, out)
	}

	_, rows := doctorJSON(t, home)
	if w := rows["wake"]; len(w) != 1 || !strings.Contains(w[0].Detail, "claude_channel off") || !strings.Contains(w[0].Detail, "commands: none") {
		t.Errorf("doctor wake row %+v", w)
	}
	var shown []string
	for name, cs := range rows {
		if strings.HasPrefix(name, "wake default #") {
			shown = append(shown, cs[0].Detail)
		}
	}
	slices.SortFunc(shown, func(a, b string) int {
		return strings.Compare(a[strings.Index(a, "→"):], b[strings.Index(b, "→"):])
	})
	if len(shown) != 2 || !strings.Contains(shown[0], `codex stop "Codex (no session id)"`) || !strings.Contains(shown[1], `codex stop "Codex session s1"`) ||
		!strings.Contains(shown[1], "room.mention inbox_m (room r1 seq 3)") || !strings.Contains(shown[1], "the agent has not claimed it") {
		t.Errorf("doctor wake rows %q", shown)
	}
}

// describeWake says what became of a run and of the item.
func TestDescribeWake(t *testing.T) {
	t.Parallel()
	three := 3
	for _, c := range []struct {
		w    store.WakeRecord
		want string
	}{
		{store.WakeRecord{CreatedAt: 0, Kind: "room.mention", InboxID: "i1", RoomID: "r", Seq: 2, Via: store.WakeViaCommand, Label: "/bin/agent x",
			Holder: "serve pid 9", State: store.WakeExited, ExitCode: &three, StartedAt: 1000, EndedAt: 2500, Output: []byte("oops\nmore"), OutputBytes: 9,
			ClaimedAt: 5000, AckedAt: 65000, AckState: "handled"},
			`1970-01-01T00:00:00Z room.mention i1 (room r seq 2) → command "/bin/agent x" by serve pid 9: exited 3 after 1.5s; output 9 bytes, first line "oops …"; the agent acknowledged it (handled) 1m5s later`},
		{store.WakeRecord{CreatedAt: 0, Kind: "mail.received", InboxID: "l1", Via: store.WakeViaCommand, Label: "agent", Holder: "mcp pid 2",
			State: store.WakeTimeout, StartedAt: 10, EndedAt: 610, Error: "killed after the timeout of 600ms", ClaimedAt: 2000},
			`1970-01-01T00:00:00Z mail.received l1 → command "agent" by mcp pid 2: timeout after 600ms (killed after the timeout of 600ms); the agent claimed it 2s later`},
	} {
		if got := describeWake(c.w); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
