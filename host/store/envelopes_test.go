package store

import (
	"context"
	"fmt"
	"testing"
)

// The envelope index keeps every verified record's event hash after the
// window dropped the record, across a restart, for records a catch-up left
// out of the window too; a lookup spans several query chunks.
func TestEnvelopeIndexOutlivesTheWindow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir, 10)
	var key, other int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		if err != nil {
			return err
		}
		o, err := tx.EnsureRoom(ctx, "https://h", "room2", 1)
		key, other = r.Key, o.Key
		return err
	})
	applyRange(t, s, key, 1, 50, "did:x", false)
	applyRange(t, s, other, 1, 2, "did:x", false)
	// A catch-up that leaves 51..60 out of the window.
	mustWrite(t, s, func(tx *Tx) error {
		b := &Batch{Now: 1, ExpectSeq: 50, ExpectHash: "h50", SkipThrough: 60}
		for seq := int64(51); seq <= 70; seq++ {
			b.Events = append(b.Events, event(seq, "did:x"))
		}
		b.State = &RoomState{Snapshot: []byte(`{}`), HeadSeq: 70, HeadHash: "h70", SyncedSeq: 70, SyncedHash: "h70"}
		_, err := tx.ApplyBatch(ctx, key, b)
		return err
	})
	s.Close()
	s = open(t, dir, 10)
	if ev, err := s.Read().EventByID(ctx, key, "e3"); err == nil {
		t.Fatalf("record 3 is still in the window: %+v", ev)
	}
	ids := []string{"e3", "e55", "e70", "e71", "nope"}
	for i := range 150 {
		ids = append(ids, fmt.Sprintf("x%d", i))
	}
	ids = append(ids, "e1", "e3")
	got, err := s.Read().EnvelopeSeqs(ctx, key, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"e1": 1, "e3": 3, "e55": 55, "e70": 70}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("index %v, want %v", got, want)
	}
	if got, _ := s.Read().EnvelopeSeqs(ctx, other, []string{"e1", "e3"}); fmt.Sprint(got) != "map[e1:1]" {
		t.Fatalf("another room's index %v", got)
	}
	if got, err := s.Read().EnvelopeSeqs(ctx, key, nil); err != nil || len(got) != 0 {
		t.Fatalf("no ids: %v %v", got, err)
	}
}

// TestMigrationIndexesEnvelopes opens a store written before migration 5: a
// room whose window holds its whole history is indexed from it and keeps
// its state; a room whose window was pruned, and one whose window holds an
// envelope twice, forget their derived state so the next sync verifies
// them again from seq 1.
//
// Serial: it swaps the package-level schema migration.
func TestMigrationIndexesEnvelopes(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	current := migrateSchema
	migrateSchema = legacyUpTo(4)
	t.Cleanup(func() { migrateSchema = current })
	old := open(t, dir, 5)
	envelopeTable(t, old, true)
	keys := map[string]int64{}
	mustWrite(t, old, func(tx *Tx) error {
		for _, name := range []string{"whole", "pruned", "twice", "empty"} {
			r, err := tx.EnsureRoom(ctx, "https://h", name, 1)
			if err != nil {
				return err
			}
			keys[name] = r.Key
		}
		return nil
	})
	applyRange(t, old, keys["whole"], 1, 5, "did:x", false)
	applyRange(t, old, keys["pruned"], 1, 8, "did:x", false)
	mustWrite(t, old, func(tx *Tx) error {
		b := &Batch{Now: 1}
		for seq := int64(1); seq <= 3; seq++ {
			e := event(seq, "did:x")
			if seq == 3 {
				e.EventID = "e2" // a replay an older apconnect accepted
			}
			b.Events = append(b.Events, e)
		}
		b.State = &RoomState{Snapshot: []byte(`{}`), HeadSeq: 3, HeadHash: "h3", SyncedSeq: 3, SyncedHash: "h3"}
		_, err := tx.ApplyBatch(ctx, keys["twice"], b)
		return err
	})
	envelopeTable(t, old, false)
	old.Close()
	migrateSchema = current

	s := open(t, dir, 5)
	for name, want := range map[string]int64{"whole": 5, "pruned": 0, "twice": 0, "empty": 0} {
		r, err := s.Read().Room(ctx, keys[name])
		if err != nil {
			t.Fatal(err)
		}
		if r.SyncedSeq != want || r.HasSnapshot != (want > 0) {
			t.Errorf("%s: synced %d snapshot %v, want %d", name, r.SyncedSeq, r.HasSnapshot, want)
		}
		evs, _ := s.Read().Timeline(ctx, keys[name], TimelineQuery{})
		if int64(len(evs)) != want {
			t.Errorf("%s: %d records kept, want %d", name, len(evs), want)
		}
		got, err := s.Read().EnvelopeSeqs(ctx, keys[name], []string{"e1", "e2", "e3", "e4", "e5", "e8"})
		if err != nil || int64(len(got)) != want {
			t.Errorf("%s: index %v (%v), want %d entries", name, got, err, want)
		}
	}
}

// envelopeTable creates (or drops) the envelope index in a store opened at a
// schema before migration 5, so that the current ApplyBatch can write the
// rooms an older apconnect would have written; drop it again before
// migrating.
func envelopeTable(t *testing.T, s *Store, create bool) {
	t.Helper()
	q := `DROP TABLE room_envelopes`
	if create {
		q = `CREATE TABLE room_envelopes (room INTEGER NOT NULL, hash TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (room, hash)) STRICT, WITHOUT ROWID`
	}
	if _, err := s.w.db.ExecContext(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

// Indexing goes chunk by chunk: every hash of a batch of any length is
// indexed with its seq, a blank one is not, and a hash indexed before keeps
// its first seq.
func TestIndexEnvelopesInChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, n := range []int{1, envelopeChunk - 1, envelopeChunk, envelopeChunk + 1, 3*envelopeChunk + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			s := open(t, t.TempDir(), 10)
			var key int64
			mustWrite(t, s, func(tx *Tx) error {
				r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
				if err != nil {
					return err
				}
				key = r.Key
				if err := tx.indexEnvelopes(ctx, key, []Event{{Seq: 1, EventID: "x1"}}); err != nil {
					return err
				}
				var evs []Event
				for i := 1; i <= n; i++ {
					evs = append(evs, Event{Seq: int64(100 + i), EventID: fmt.Sprintf("x%d", i)}, Event{Seq: int64(5000 + i), EventID: " "})
				}
				return tx.indexEnvelopes(ctx, key, evs)
			})
			var ids []string
			for i := 1; i <= n; i++ {
				ids = append(ids, fmt.Sprintf("x%d", i))
			}
			got, err := s.Read().EnvelopeSeqs(ctx, key, append(ids, " "))
			if err != nil {
				t.Fatal(err)
			}
			var rows int
			if err := s.Read().queryRow(ctx, `SELECT COUNT(*) FROM room_envelopes WHERE room = ?`, key).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if len(got) != n || rows != n || got["x1"] != 1 {
				t.Fatalf("%d indexed (%d rows), x1 at %d: %v", len(got), rows, got["x1"], got)
			}
			for i := 2; i <= n; i++ {
				if got[fmt.Sprintf("x%d", i)] != int64(100+i) {
					t.Fatalf("x%d at %d", i, got[fmt.Sprintf("x%d", i)])
				}
			}
		})
	}
}
