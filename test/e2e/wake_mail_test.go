package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/keystore"
	"apconnect/host/store"
)

// pendingOf reads an identity's pending inbox items of a kind straight from
// its store, as a running serve keeps it: no tool call, so nothing syncs.
func pendingOf(t *testing.T, home, name, kind string) []*store.InboxRow {
	t.Helper()
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	id, err := cfg.Identity(name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := keystore.ReadInfo(cfg.Resolve(id.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), store.Options{Dir: cfg.StateDir(), AgentID: info.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Read().PendingInbox(context.Background(), store.InboxQuery{Kinds: []string{kind}})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// A letter sent to the agent while no client is connected is in the inbox
// of its running serve without any tool call ([mail] sync_interval), and
// wakes a command that lists mail.received.
func TestWakeMailWithoutAClient(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	homeA, homeB := newHome(t, h, "alice"), newHome(t, h, "bob")
	cli(t, homeB, "bob", "mail_mailbox_publish", map[string]any{"routes": []any{h.Origin()}})
	boxes := cli(t, homeB, "bob", "mail_mailboxes_list", map[string]any{})
	list, _ := boxes["mailboxes"].([]any)
	var addr string
	if len(list) == 1 {
		addr, _ = get(list[0], "address").(string)
	}
	if addr == "" {
		t.Fatalf("bob's mailbox: %v", boxes)
	}
	dir := t.TempDir()
	wakeScript := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(wakeScript, []byte("#!/bin/sh\necho \"$APCONNECT_KIND $APCONNECT_INBOX_ID\" >> \"$(dirname \"$0\")/runs\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	addConfig(t, homeB, "[mail]\nsync_interval = \"5s\"\n\n[[wake.command]]\nargv = [\"/bin/sh\", \""+wakeScript+"\"]\nkinds = [\"mail.received\"]")
	startServe(t, homeB, "bob", "")

	sent := time.Now()
	cli(t, homeA, "alice", "mail_send", map[string]any{"to": addr, "text": "Bob, are you there?"})
	waitFor(t, "the letter in bob's inbox", func() bool { return len(pendingOf(t, homeB, "bob", "mail.received")) == 1 })
	t.Logf("the letter was in the inbox %s after it was sent", time.Since(sent).Round(time.Millisecond))
	waitFor(t, "the wake command for the letter", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "runs"))
		return strings.HasPrefix(string(b), "mail.received ")
	})
}
