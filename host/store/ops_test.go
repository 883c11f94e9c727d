package store

import (
	"context"
	"fmt"
	"testing"
)

// Heartbeats round-trip; a process is stale after three missed intervals,
// never when it exited cleanly; pruning drops the rows of processes gone
// before the cutoff.
func TestHeartbeats(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 0)
	ctx := context.Background()
	rows := []*Heartbeat{
		{ID: "h/1/100", PID: 1, Hostname: "h", Command: "serve", Transport: "http", Identity: "default", Addr: "127.0.0.1:8765",
			ClientName: "claude", ClientVersion: "2", StartedAt: 100, BeatAt: 10_000, IntervalMS: 1000, LastCall: "agent_protocols_inbox_next",
			LastCallAt: 9_000, Calls: 3, Streams: []byte(`[{"state":"live"}]`)},
		{ID: "h/2/200", PID: 2, Hostname: "h", Command: "mcp", Transport: "stdio", Identity: "default", StartedAt: 200, BeatAt: 5_000, IntervalMS: 1000},
		{ID: "h/3/300", PID: 3, Hostname: "h", Command: "call", Transport: "cli", Identity: "default", StartedAt: 300, BeatAt: 400, IntervalMS: 1000,
			StoppedAt: 400},
	}
	mustWrite(t, s, func(tx *Tx) error {
		for _, h := range rows {
			if err := tx.PutHeartbeat(ctx, h); err != nil {
				return err
			}
		}
		// Rewriting a row replaces it.
		rows[0].Calls = 4
		return tx.PutHeartbeat(ctx, rows[0])
	})
	got, err := s.Read().Heartbeats(ctx, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("heartbeats %v %v", got, err)
	}
	if g := got[1]; fmt.Sprint(*g) != fmt.Sprint(*rows[0]) {
		t.Fatalf("round trip:\n%+v\n%+v", *g, *rows[0])
	}
	// Running (or stale) first, newest first; then the stopped ones.
	if got[0].ID != "h/2/200" || got[1].ID != "h/1/100" || got[2].ID != "h/3/300" {
		t.Fatalf("order: %s %s %s", got[0].ID, got[1].ID, got[2].ID)
	}
	// Many short processes that exited never push a running one out.
	mustWrite(t, s, func(tx *Tx) error {
		for i := range 300 {
			if err := tx.PutHeartbeat(ctx, &Heartbeat{ID: fmt.Sprint("call/", i), Command: "call", Transport: "cli", StartedAt: int64(1000 + i),
				BeatAt: int64(1000 + i), IntervalMS: 1000, StoppedAt: int64(1000 + i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if got, _ := s.Read().Heartbeats(ctx, 5); len(got) != 7 || got[0].ID != "h/2/200" || got[1].ID != "h/1/100" || got[2].ID != "call/299" {
		t.Fatalf("with many stopped calls: %d rows, first %s", len(got), got[0].ID)
	}
	mustWrite(t, s, func(tx *Tx) error {
		n, err := tx.PruneHeartbeats(ctx, 0, 1300)
		if err == nil && n != 301 {
			err = fmt.Errorf("pruned %d stopped", n)
		}
		return err
	})
	for _, tc := range []struct {
		h     *Heartbeat
		now   int64
		stale bool
	}{
		{rows[0], 13_000, false}, // three intervals exactly
		{rows[0], 13_001, true},
		{rows[1], 8_001, true},
		{rows[2], 1 << 40, false}, // stopped cleanly: never stale
		{&Heartbeat{BeatAt: 0, IntervalMS: 0}, 4, true},
	} {
		if got := tc.h.Stale(tc.now); got != tc.stale {
			t.Errorf("%s at %d: stale %v", tc.h.ID, tc.now, got)
		}
	}
	mustWrite(t, s, func(tx *Tx) error {
		n, err := tx.PruneHeartbeats(ctx, 6_000, 0)
		if err == nil && n != 1 {
			err = fmt.Errorf("pruned %d", n)
		}
		return err
	})
	if got, _ := s.Read().Heartbeats(ctx, 10); len(got) != 1 || got[0].ID != "h/1/100" {
		t.Fatalf("after prune %v", got)
	}
}

// The view's reads: inbox items by state in their order, counts, the
// outbox newest first, and a fingerprint that changes with each part.
func TestViewReads(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	fp := func() Fingerprint {
		t.Helper()
		f, err := s.Read().ViewFingerprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return *f
	}
	f0 := fp()
	applyRange(t, s, key, 1, 4, "did:other", true)
	f1 := fp()
	if f1.Rooms == f0.Rooms || f1.Inbox == f0.Inbox || f1.Outbox != f0.Outbox || f1.Drafts != f0.Drafts || f1.Processes != f0.Processes {
		t.Fatalf("fingerprint after a batch:\n%+v\n%+v", f0, f1)
	}
	mustWrite(t, s, func(tx *Tx) error {
		if _, err := tx.Claim(ctx, []string{fmt.Sprintf("i%d-3", key)}, "sess-a", 500); err != nil {
			return err
		}
		if _, err := tx.Claim(ctx, []string{fmt.Sprintf("i%d-1", key)}, "sess-b", 300); err != nil {
			return err
		}
		if _, err := tx.Ack(ctx, []string{fmt.Sprintf("i%d-2", key)}, InboxHandled, 0, 1); err != nil {
			return err
		}
		_, err := tx.Ack(ctx, []string{fmt.Sprintf("i%d-4", key)}, InboxDeferred, 900, 1)
		return err
	})
	f2 := fp()
	if f2.Inbox == f1.Inbox || f2.Outbox != f1.Outbox {
		t.Fatalf("fingerprint after claims: %+v %+v", f1, f2)
	}
	q := s.Read()
	claimed, err := q.InboxByState(ctx, InboxClaimed, 0)
	if err != nil || len(claimed) != 2 || claimed[0].Session != "sess-b" || claimed[0].Until != 300 || claimed[1].Session != "sess-a" {
		t.Fatalf("claimed, soonest lease first: %+v %v", claimed, err)
	}
	if d, _ := q.InboxByState(ctx, InboxDeferred, 0); len(d) != 1 || d[0].Until != 900 {
		t.Fatalf("deferred %+v", d)
	}
	if h, _ := q.InboxByState(ctx, InboxHandled, 0); len(h) != 1 || h[0].Seq != 2 {
		t.Fatalf("handled %+v", h)
	}
	counts, err := q.InboxCounts(ctx)
	if err != nil || counts[InboxClaimed] != 2 || counts[InboxDeferred] != 1 || counts[InboxHandled] != 1 || counts[InboxPending] != 0 {
		t.Fatalf("counts %v %v", counts, err)
	}
	mustWrite(t, s, func(tx *Tx) error {
		for i := range 3 {
			id, err := tx.AddOutbox(ctx, &OutboxEntry{Kind: "room_event", Service: "https://h", Ref: "room1", EventID: fmt.Sprint("ev", i),
				Nonce: int64(i + 1), Envelope: []byte(`{}`), CreatedAt: int64(10 + i)})
			if err != nil {
				return err
			}
			if i == 0 {
				if err := tx.CloseOutbox(ctx, id, OutboxDone, nil, "", 50); err != nil {
					return err
				}
			}
		}
		return nil
	})
	f3 := fp()
	if f3.Outbox == f2.Outbox {
		t.Fatal("fingerprint unchanged by outbox entries")
	}
	pending, err := q.RecentOutbox(ctx, OutboxPending, 0)
	if err != nil || len(pending) != 2 || pending[0].EventID != "ev2" || pending[1].EventID != "ev1" {
		t.Fatalf("pending, newest first: %+v %v", pending, err)
	}
	if oc, _ := q.OutboxCounts(ctx); oc[OutboxPending] != 2 || oc[OutboxDone] != 1 {
		t.Fatalf("outbox counts %v", oc)
	}
	mustWrite(t, s, func(tx *Tx) error {
		return tx.PutHeartbeat(ctx, &Heartbeat{ID: "x", Command: "mcp", Transport: "stdio", BeatAt: 5, IntervalMS: 1})
	})
	if f4 := fp(); f4.Processes == f3.Processes || f4.Rooms != f3.Rooms {
		t.Fatalf("fingerprint after a heartbeat: %+v %+v", f3, f4)
	}
}
