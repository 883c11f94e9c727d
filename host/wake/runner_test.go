package wake

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/inbox"
	"apconnect/host/store"
)

// A command runs once per pending item of its kinds, one run at a time,
// with the item on stdin, the item's APCONNECT_ variables in an environment
// stripped of the connector's, the home as working directory; each run is
// in the wake log with its exit and output. A restarted process does not
// run an item again.
func TestCommandRunsEachItemOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var argv []string
	h := newHome(t, nil, func(w *config.Wake) {
		argv = recorder(t, dir, 100*time.Millisecond)
		w.Commands = []config.WakeCommand{{Argv: argv, Kinds: []string{"room.mention", "mail.received"}, Timeout: 10 * time.Second}}
	})
	c := h.open()
	service(t, c, Options{Process: "serve"})
	add(t, c, mention("m1", 4), ofKind("n1", "room.message.new", inbox.PriorityNormal), mention("m2", 6),
		ofKind("l1", "mail.received", inbox.PriorityNormal))
	eventually(t, 10*time.Second, "three runs", func() bool { return len(runs(filepath.Join(dir, "runs"))) == 3 })

	if got := runs(filepath.Join(dir, "runs")); !slices.Equal(got, []string{"m1", "m2", "l1"}) {
		t.Fatalf("runs %v, want m1 m2 l1 in inbox order", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "overlaps")); err == nil {
		t.Fatalf("runs overlapped: %s", b)
	}
	var got inbox.Item
	raw, _ := os.ReadFile(filepath.Join(dir, "m2.json"))
	if err := json.Unmarshal(raw, &got); err != nil || got.ID != "m2" || got.Kind != "room.mention" || got.State != "pending" ||
		got.Seq == nil || *got.Seq != 6 || got.RoomID != "room1" {
		t.Fatalf("stdin of m2: %s (%v)", raw, err)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "m2.env"))
	for _, want := range []string{"APCONNECT_INBOX_ID=m2\n", "APCONNECT_KIND=room.mention\n", "APCONNECT_ROOM_ID=room1\n",
		"APCONNECT_HOST=https://127.0.0.1:9\n", "APCONNECT_SEQ=6\n", "KEEP=me\n"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("environment of m2 lacks %q:\n%s", want, env)
		}
	}
	for _, secret := range []string{"secret", "tok", "APCONNECT_PASSPHRASE", "apconnect_http_token"} {
		if strings.Contains(string(env), secret) {
			t.Errorf("environment of m2 carries %q:\n%s", secret, env)
		}
	}
	if pwd, _ := os.ReadFile(filepath.Join(dir, "m1.pwd")); strings.TrimSpace(string(pwd)) != h.cfg.Home() {
		t.Errorf("working directory %q, want the home %q", pwd, h.cfg.Home())
	}
	eventually(t, 5*time.Second, "the runs recorded", func() bool {
		ws := wakes(t, c, store.WakeFilter{})
		return len(ws) == 3 && ws[0].State == store.WakeExited
	})
	if env, _ := os.ReadFile(filepath.Join(dir, "l1.env")); !strings.Contains(string(env), "APCONNECT_SEQ=\n") || !strings.Contains(string(env), "APCONNECT_ROOM_ID=\n") {
		t.Errorf("a letter's environment: %s", env)
	}
	for _, w := range wakes(t, c, store.WakeFilter{}) {
		if w.Via != store.WakeViaCommand || w.Target != CommandKey(argv) || w.State != store.WakeExited || w.ExitCode == nil || *w.ExitCode != 0 ||
			string(w.Output) != "ran "+w.InboxID+"\n" || w.StartedAt < w.CreatedAt || w.EndedAt < w.StartedAt || !strings.HasPrefix(w.Holder, "serve pid ") {
			t.Errorf("wake %+v", w)
		}
	}

	// Another process of the identity, and a new item: only the new one runs.
	c2 := h.open()
	service(t, c2, Options{Process: "mcp"})
	add(t, c2, mention("m3", 9))
	eventually(t, 5*time.Second, "the new item's run", func() bool { return len(runs(filepath.Join(dir, "runs"))) == 4 })
	time.Sleep(300 * time.Millisecond)
	if got := runs(filepath.Join(dir, "runs")); !slices.Equal(got, []string{"m1", "m2", "l1", "m3"}) {
		t.Fatalf("after a second process: %v", got)
	}
}

// Mail items wake a command only when its kinds list mail.received; an
// item acknowledged before the command got to it does not run it.
func TestCommandKinds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHome(t, nil, func(w *config.Wake) {
		w.Commands = []config.WakeCommand{{Argv: recorder(t, dir, 0), Kinds: config.DefaultWakeKinds(), Timeout: 10 * time.Second}}
	})
	c := h.open()
	add(t, c, ofKind("l1", "mail.received", inbox.PriorityHigh), ofKind("gone", "room.steer", inbox.PriorityHigh),
		ofKind("t1", "room.turn.assigned", inbox.PriorityHigh))
	if _, _, err := c.Engine().InboxAck(bg, []string{"gone"}, "handled", 0); err != nil {
		t.Fatal(err)
	}
	service(t, c, Options{})
	eventually(t, 5*time.Second, "a run", func() bool { return len(runs(filepath.Join(dir, "runs"))) == 1 })
	time.Sleep(300 * time.Millisecond)
	if got := runs(filepath.Join(dir, "runs")); !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("runs %v, want only t1", got)
	}
}

// A run that fails is recorded with how it failed, its output bounded, and
// is not retried.
func TestCommandFailuresRecordedNotRetried(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		body    string
		timeout time.Duration
		argv0   string
		check   func(w store.WakeRecord) bool
	}{
		{name: "exit", body: "cat >/dev/null; echo failing; exit 3", check: func(w store.WakeRecord) bool {
			return w.State == store.WakeExited && w.ExitCode != nil && *w.ExitCode == 3 && string(w.Output) == "failing\n"
		}},
		{name: "timeout", body: "sleep 30", timeout: 300 * time.Millisecond, check: func(w store.WakeRecord) bool {
			return w.State == store.WakeTimeout && w.ExitCode == nil && strings.Contains(w.Error, "timeout") && w.EndedAt-w.StartedAt < 5000
		}},
		{name: "missing", argv0: "/nonexistent/agent", check: func(w store.WakeRecord) bool {
			return w.State == store.WakeFailed && w.StartedAt == 0 && strings.Contains(w.Error, "no such file")
		}},
		{name: "output", body: "head -c 100000 /dev/zero | tr '\\0' x", check: func(w store.WakeRecord) bool {
			return w.State == store.WakeExited && len(w.Output) == 64 && w.OutputBytes == 100000
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t, nil, func(w *config.Wake) {
				argv := []string{tc.argv0}
				if tc.argv0 == "" {
					argv = []string{"/bin/sh", script(t, tc.body)}
				}
				w.Commands = []config.WakeCommand{{Argv: argv, Kinds: []string{"room.mention"}, Timeout: max(tc.timeout, 10*time.Second)}}
				if tc.timeout > 0 {
					w.Commands[0].Timeout = tc.timeout
				}
			})
			c := h.open()
			service(t, c, Options{OutputLimit: 64})
			add(t, c, mention("m1", 1))
			var w store.WakeRecord
			eventually(t, 10*time.Second, "the run recorded", func() bool {
				ws := wakes(t, c, store.WakeFilter{})
				if len(ws) == 1 && ws[0].State != store.WakeClaimed && ws[0].State != store.WakeRunning {
					w = ws[0]
					return true
				}
				return false
			})
			if !tc.check(w) {
				t.Fatalf("wake %+v (output %q)", w, w.Output)
			}
			time.Sleep(300 * time.Millisecond)
			if ws := wakes(t, c, store.WakeFilter{}); len(ws) != 1 {
				t.Fatalf("retried: %d wakes", len(ws))
			}
		})
	}
}

// Two processes of one identity share the command: each item runs once,
// never two runs at a time; a run a stopped process left unfinished is
// marked interrupted (not run again) by the process that takes the lease
// over; when the holder stops, the other process takes the command over at
// once.
func TestCommandAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var argv []string
	h := newHome(t, nil, func(w *config.Wake) {
		argv = recorder(t, dir, 150*time.Millisecond)
		w.Commands = []config.WakeCommand{{Argv: argv, Kinds: []string{"room.mention"}, Timeout: 10 * time.Second}}
	})
	a, b := h.open(), h.open()
	// A process that died while running the command for "dead".
	add(t, a, mention("dead", 1))
	err := a.Store().Write(bg, func(tx *store.Tx) error {
		_, ok, err := tx.ClaimWake(bg, store.WakeClaim{Item: store.WakeItem{ID: "dead"}, Via: store.WakeViaCommand, Target: CommandKey(argv),
			Holder: "serve pid 1 #gone", State: store.WakeRunning, At: time.Now().UnixMilli()})
		if err == nil && !ok {
			t.Fatal("the dead process's claim was not written")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := map[string]*Service{}
	for name, c := range map[string]*connector.Connector{"a": a, "b": b} {
		s := service(t, c, Options{Process: name})
		svc[s.Holder()] = s
	}
	for i, c := range []*connector.Connector{a, b, a, b, a, b} {
		add(t, c, mention(string(rune('a'+i)), int64(i+2)))
	}
	eventually(t, 15*time.Second, "six runs", func() bool { return len(runs(filepath.Join(dir, "runs"))) == 6 })
	time.Sleep(300 * time.Millisecond)
	got := runs(filepath.Join(dir, "runs"))
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b", "c", "d", "e", "f"}) {
		t.Fatalf("runs %v", got)
	}
	if o, err := os.ReadFile(filepath.Join(dir, "overlaps")); err == nil {
		t.Fatalf("two runs at a time: %s", o)
	}
	if ws := wakes(t, a, store.WakeFilter{InboxID: "dead"}); len(ws) != 1 || ws[0].State != store.WakeInterrupted {
		t.Fatalf("the dead process's run: %+v", ws)
	}
	// Stop the holder: the other process runs the next item at once.
	ls, _ := a.Store().Read().Leases(bg)
	ls = slices.DeleteFunc(ls, func(l store.Lease) bool { return !strings.HasPrefix(l.Job, "command:") }) // the sync jobs' too
	if len(ls) != 1 || svc[ls[0].Holder] == nil {
		t.Fatalf("leases %+v", ls)
	}
	svc[ls[0].Holder].Close()
	start := time.Now()
	add(t, a, mention("g", 9))
	add(t, b, mention("g", 9))
	eventually(t, 5*time.Second, "the run after the holder stopped", func() bool { return len(runs(filepath.Join(dir, "runs"))) == 7 })
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the command was taken over after %s", d)
	}
	if ws := wakes(t, a, store.WakeFilter{InboxID: "g"}); len(ws) != 1 || ws[0].Holder == ls[0].Holder {
		t.Fatalf("run by %+v, the stopped holder was %s", ws, ls[0].Holder)
	}
}

// Runs of one command are at least MinGap apart.
func TestCommandMinGap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHome(t, nil, func(w *config.Wake) {
		w.Commands = []config.WakeCommand{{Argv: []string{"/bin/sh", script(t, "date +%s%N >> "+dir+"/at\n")}, Kinds: []string{"room.mention"}, Timeout: 10 * time.Second}}
	})
	c := h.open()
	service(t, c, Options{MinGap: 400 * time.Millisecond})
	add(t, c, mention("a", 1), mention("b", 2), mention("c", 3))
	eventually(t, 10*time.Second, "three runs", func() bool { return len(wakes(t, c, store.WakeFilter{})) == 3 })
	ws := wakes(t, c, store.WakeFilter{})
	for i := 0; i+1 < len(ws); i++ {
		if gap := ws[i].CreatedAt - ws[i+1].CreatedAt; gap < 400 {
			t.Errorf("runs %d and %d are %d ms apart", ws[i+1].ID, ws[i].ID, gap)
		}
	}
}
