package store

import (
	"context"
	"fmt"
	"testing"
)

// A batch with SkipThrough stores only the events above it and keeps the
// oldest kept seq honest; RestoreWindow puts back, of the events given,
// exactly those inside the window of the synced position, once.
func TestSkipThroughAndRestoreWindow(t *testing.T) {
	s := open(t, t.TempDir(), 10)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	var skipped []Event
	apply := func(from, to, skip int64) {
		mustWrite(t, s, func(tx *Tx) error {
			b := &Batch{Now: 1, SkipThrough: skip}
			if from > 1 {
				b.ExpectSeq, b.ExpectHash = from-1, fmt.Sprintf("h%d", from-1)
			}
			for seq := from; seq <= to; seq++ {
				b.Events = append(b.Events, event(seq, "did:x"))
				if seq <= skip {
					skipped = append(skipped, event(seq, "did:x"))
				}
			}
			b.State = &RoomState{Snapshot: []byte(`{}`), HeadSeq: to, HeadHash: fmt.Sprintf("h%d", to), SyncedSeq: to, SyncedHash: fmt.Sprintf("h%d", to)}
			_, err := tx.ApplyBatch(ctx, key, b)
			return err
		})
	}
	seqs := func() []int64 {
		evs, err := s.Read().Timeline(ctx, key, TimelineQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, e := range evs {
			out = append(out, e.Seq)
		}
		return out
	}
	// A catch-up to 50 skips through 40; it stops at 28.
	apply(1, 14, 40)
	apply(15, 28, 40)
	if got := seqs(); len(got) != 0 {
		t.Fatalf("skipped events stored: %v", got)
	}
	if r, _ := s.Read().Room(ctx, key); r.OldestSeq != 41 || r.SyncedSeq != 28 {
		t.Fatalf("oldest %d synced %d", r.OldestSeq, r.SyncedSeq)
	}
	var n int
	mustWrite(t, s, func(tx *Tx) error {
		var err error
		n, err = tx.RestoreWindow(ctx, key, append(skipped, event(29, "did:x")))
		return err
	})
	if got := fmt.Sprint(seqs()); n != 10 || got != "[19 20 21 22 23 24 25 26 27 28]" {
		t.Fatalf("restored %d: %s", n, got)
	}
	if r, _ := s.Read().Room(ctx, key); r.OldestSeq != 19 {
		t.Fatalf("oldest %d after the restore", r.OldestSeq)
	}
	mustWrite(t, s, func(tx *Tx) error {
		var err error
		n, err = tx.RestoreWindow(ctx, key, skipped)
		return err
	})
	if n != 0 {
		t.Fatalf("restored %d events twice", n)
	}
	// The catch-up goes on to the host's end: the window is its newest ten.
	apply(29, 50, 40)
	if got := fmt.Sprint(seqs()); got != "[41 42 43 44 45 46 47 48 49 50]" {
		t.Fatalf("window after the skip: %s", got)
	}
}
