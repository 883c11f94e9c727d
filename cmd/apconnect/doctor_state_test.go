package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/capability"
	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
	"apconnect/host/keystore"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// With a grant withdrawn, doctor shows what it holds back: a signed write
// waiting in the outbox (which the engine refused to send) and a room that
// is no longer followed.
func TestDoctorShowsWhatGrantsHoldBack(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	home := filepath.Join(t.TempDir(), "home")
	if code, _, errOut := runCLI(t, "init", "--home", home, "--name", "alice", "--unencrypted-key", "--host", h.Origin(), "--ca", h.CAFile()); code != 0 {
		t.Fatal(errOut)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	key, err := keystore.Load(cfg.Resolve(cfg.Identities[0].KeyFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := connector.New(ctx, connector.Options{Config: cfg, Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	if _, err := c.Discourse().RoomCreate(ctx, "s", discourse.RoomCreateInput{Host: h.Origin(), Topic: "Held back", Visibility: "public",
		StartTime: now - 1000, EndTime: now + 3600_000}); err != nil {
		t.Fatal(err)
	}
	ev := adp.NewEvent(adp.TypeMessageCreate, c.AgentID(), time.Now().UnixMilli(), map[string]any{"content": "hi", "content_type": "text/plain"},
		adp.Fields{RoomID: "elsewhere", Base: &adp.Link{Seq: 1, Hash: strings.Repeat("A", 43)}})
	if _, _, err := c.Engine().Sign(ctx, &engine.Write{Kind: "room_event", Origin: h.Origin(), Capability: capability.DiscourseWrite, Event: ev, Ref: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	c.Close()

	cfg.Hosts[0].Grants = []string{"agent.profile.read"}
	if err := cfg.Save(); err != nil {
		t.Fatal(err)
	}
	// A restarted connector (its clock past the entry's lease) holds the
	// entry instead of sending it.
	later := func() time.Time { return time.Now().Add(2 * engine.OutboxLease) }
	c, err = connector.New(ctx, connector.Options{Config: cfg, Signer: key, Clock: later})
	if err != nil {
		t.Fatal(err)
	}
	c.Engine().ResubmitOutbox(ctx)
	pending, _ := c.Store().Read().OutboxEntries(ctx, store.OutboxPending)
	c.Close()
	if len(pending) != 1 || !strings.Contains(pending[0].Error, "permission_denied") {
		t.Fatalf("pending %+v", pending)
	}

	_, rows := doctorJSON(t, home)
	var got []string
	for _, r := range rows["identity alice state"] {
		got = append(got, string(r.Status)+" "+r.Detail)
	}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, "warn 1 signed write to "+h.Origin()+" wait in the outbox") ||
		!strings.Contains(joined, "warn not followed: 1 room on "+h.Origin()) {
		t.Fatalf("doctor state rows:\n%s", joined)
	}
}
