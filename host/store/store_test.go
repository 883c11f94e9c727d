package store

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"apconnect/host/identity"
	"apconnect/host/internal/sqlitedb"
)

func agentID(b byte) string {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = b
	}
	return identity.AgentIDFromPublicKey(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
}

func open(t testing.TB, dir string, window int) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, AgentID: agentID(1), RecordsPerRoom: window})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustWrite(t testing.TB, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	if err := s.Write(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesOtherAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir, 0)
	s.Close()
	// Same file name cannot be reached by another agent, but a copied file
	// must be refused: simulate by opening with agent 1 again (fine) and
	// check meta.
	s2, err := Open(context.Background(), Options{Dir: dir, AgentID: agentID(1)})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if _, err := Open(context.Background(), Options{Dir: dir, AgentID: "did:agent:bad"}); err == nil {
		t.Fatal("invalid agent id accepted")
	}
}

// Two Store instances (two *sql.DB, as two processes) allocating nonces on
// one file concurrently never hand out the same nonce, and each sequence
// strictly increases.
func TestNonceNeverReusedAcrossInstances(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, 0)
	b := open(t, dir, 0)
	const per = 200
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, s := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func(s *Store) {
			defer wg.Done()
			var prev int64
			for i := 0; i < per; i++ {
				var n int64
				err := s.Write(context.Background(), func(tx *Tx) error {
					var err error
					n, err = tx.AllocateNonce(context.Background(), 1000)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				if n <= prev {
					errs <- fmt.Errorf("nonce %d not greater than %d", n, prev)
					return
				}
				prev = n
				mu.Lock()
				if seen[n] {
					mu.Unlock()
					errs <- fmt.Errorf("nonce %d reused", n)
					return
				}
				seen[n] = true
				mu.Unlock()
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != 4*per {
		t.Fatalf("got %d nonces", len(seen))
	}
	last, _ := a.Read().LastNonce(context.Background())
	if last != 1000+4*per-1 {
		t.Fatalf("last = %d", last)
	}
}

func TestNonceRolledBackWithTransaction(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 0)
	ctx := context.Background()
	mustWrite(t, s, func(tx *Tx) error { _, err := tx.AllocateNonce(ctx, 5000); return err })
	boom := errors.New("boom")
	err := s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.AllocateNonce(ctx, 6000); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if last, _ := s.Read().LastNonce(ctx); last != 5000 {
		t.Fatalf("rolled back nonce kept: %d", last)
	}
	// Max-Seen-Nonce moves the sequence past the header, bounded.
	mustWrite(t, s, func(tx *Tx) error {
		if _, err := tx.ApplyMaxSeenNonce(ctx, 5000, "9000"); err != nil {
			return err
		}
		if _, err := tx.ApplyMaxSeenNonce(ctx, 5000, fmt.Sprint(int64(1)<<40)); err == nil {
			return errors.New("unbounded jump accepted")
		}
		n, err := tx.AllocateNonce(ctx, 5000)
		if err != nil {
			return err
		}
		if n != 9001 {
			return fmt.Errorf("next nonce %d, want 9001", n)
		}
		return nil
	})
}

func event(seq int64, actor string) Event {
	return Event{Seq: seq, Hash: fmt.Sprintf("h%d", seq), EventID: fmt.Sprintf("e%d", seq), Type: "message.create", Actor: actor,
		HeadSeq: seq, HeadHash: fmt.Sprintf("h%d", seq), Record: []byte(`{}`), Item: []byte(fmt.Sprintf(`{"seq":%d}`, seq))}
}

func applyRange(t testing.TB, s *Store, key, from, to int64, actor string, inbox bool) {
	t.Helper()
	ctx := context.Background()
	mustWrite(t, s, func(tx *Tx) error {
		b := &Batch{Now: 1}
		if from > 1 {
			b.ExpectSeq, b.ExpectHash = from-1, fmt.Sprintf("h%d", from-1)
		}
		for seq := from; seq <= to; seq++ {
			b.Events = append(b.Events, event(seq, actor))
			if inbox {
				b.Inbox = append(b.Inbox, InboxEntry{ID: fmt.Sprintf("i%d-%d", key, seq), Kind: "room.message.new", Seq: seq,
					EventID: fmt.Sprintf("e%d", seq), Priority: 1, CreatedAt: seq, Item: []byte(`{}`)})
			}
		}
		b.State = &RoomState{Snapshot: []byte(`{}`), HeadSeq: to, HeadHash: fmt.Sprintf("h%d", to), SyncedSeq: to,
			SyncedHash: fmt.Sprintf("h%d", to), Listing: Listing{SelfState: "active", SelfRole: "speaker", StartTime: 0, EndTime: 1 << 50}}
		_, err := tx.ApplyBatch(ctx, key, b)
		return err
	})
}

func TestApplyBatchWindowConflictAndFailure(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 10)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	applyRange(t, s, key, 1, 25, "did:x", false)
	r, _ := s.Read().Room(ctx, key)
	if r.SyncedSeq != 25 || r.OldestSeq != 16 {
		t.Fatalf("synced %d oldest %d", r.SyncedSeq, r.OldestSeq)
	}
	evs, _ := s.Read().Timeline(ctx, key, TimelineQuery{})
	if len(evs) != 10 || evs[0].Seq != 16 {
		t.Fatalf("window holds %d items from %d", len(evs), evs[0].Seq)
	}
	// A batch verified against an old position conflicts.
	err := s.Write(ctx, func(tx *Tx) error {
		_, err := tx.ApplyBatch(ctx, key, &Batch{ExpectSeq: 20, ExpectHash: "h20", Events: []Event{event(21, "x")}})
		return err
	})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	// A failure marks the room; nothing applies until a resync.
	mustWrite(t, s, func(tx *Tx) error {
		_, err := tx.ApplyBatch(ctx, key, &Batch{ExpectSeq: 25, ExpectHash: "h25", Failure: &Failure{Seq: 26, Code: "invalid_signature", Message: "bad", At: 5}})
		return err
	})
	r, _ = s.Read().Room(ctx, key)
	if r.Failure == nil || r.Failure.Seq != 26 {
		t.Fatalf("failure not marked: %+v", r.Failure)
	}
	if refs, _ := s.Read().LiveRooms(ctx); len(refs) != 0 {
		t.Fatal("failed room still live")
	}
	err = s.Write(ctx, func(tx *Tx) error {
		_, err := tx.ApplyBatch(ctx, key, &Batch{ExpectSeq: 25, ExpectHash: "h25", Events: []Event{event(26, "x")}})
		return err
	})
	if !errors.Is(err, ErrRoomFailed) {
		t.Fatalf("want ErrRoomFailed, got %v", err)
	}
	mustWrite(t, s, func(tx *Tx) error {
		_, err := tx.ApplyBatch(ctx, key, &Batch{ExpectSeq: 25, ExpectHash: "h25", Resync: true, Events: []Event{event(26, "x")},
			State: &RoomState{SyncedSeq: 26, SyncedHash: "h26", HeadSeq: 26, HeadHash: "h26"}})
		return err
	})
	r, _ = s.Read().Room(ctx, key)
	if r.Failure != nil || r.SyncedSeq != 26 {
		t.Fatalf("resync did not clear: %+v %d", r.Failure, r.SyncedSeq)
	}
}

func TestTimelineUnreadAndRead(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	applyRange(t, s, key, 1, 5, "did:other", true)
	applyRange(t, s, key, 6, 7, "did:self", false)
	n, _ := s.Read().UnreadCount(ctx, key, 0, "did:self")
	if n != 5 {
		t.Fatalf("unread %d", n)
	}
	evs, _ := s.Read().Timeline(ctx, key, TimelineQuery{AfterSeq: 2, BeforeSeq: 7, Limit: 2})
	if len(evs) != 2 || evs[0].Seq != 3 || evs[1].Seq != 4 {
		t.Fatalf("page %+v", evs)
	}
	evs, _ = s.Read().Timeline(ctx, key, TimelineQuery{Actors: []string{"did:self"}, Newest: true, Limit: 1})
	if len(evs) != 1 || evs[0].Seq != 7 {
		t.Fatalf("newest own %+v", evs)
	}
	if p, _ := s.Read().PendingTotal(ctx); p != 5 {
		t.Fatalf("pending %d", p)
	}
	mustWrite(t, s, func(tx *Tx) error {
		cur, err := tx.SetReadSeq(ctx, key, 3)
		if err != nil || cur != 3 {
			return fmt.Errorf("read %d %v", cur, err)
		}
		if cur, _ := tx.SetReadSeq(ctx, key, 1); cur != 3 {
			return fmt.Errorf("cursor moved back to %d", cur)
		}
		if cur, _ := tx.SetReadSeq(ctx, key, 99); cur != 7 {
			return fmt.Errorf("cursor past synced: %d", cur)
		}
		return tx.ResolveRead(ctx, key, 3)
	})
	if p, _ := s.Read().PendingTotal(ctx); p != 2 {
		t.Fatalf("pending after read %d", p)
	}
	pos, _ := s.Read().Position(ctx, key)
	if pos.PendingInbox != 2 || pos.ReadSeq != 7 {
		t.Fatalf("position %+v", pos)
	}
}

func TestInboxClaimAckDefer(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	applyRange(t, s, key, 1, 3, "did:other", true)
	// Re-inserting the same ids is a no-op.
	mustWrite(t, s, func(tx *Tx) error {
		ids, err := tx.InsertInbox(ctx, key, []InboxEntry{{ID: fmt.Sprintf("i%d-1", key), Kind: "room.message.new", Seq: 1, EventID: "e1", Priority: 1, Item: []byte(`{}`)},
			{ID: "local", Kind: "room.join.requested", EventID: "req", Priority: 0, CreatedAt: 10, Item: []byte(`{}`)}})
		if len(ids) != 1 || ids[0] != "local" {
			return fmt.Errorf("inserted %v", ids)
		}
		return err
	})
	rows, _ := s.Read().PendingInbox(ctx, InboxQuery{Limit: 10})
	if len(rows) != 4 || rows[0].ID != "local" {
		t.Fatalf("priority order: %+v", rows)
	}
	mustWrite(t, s, func(tx *Tx) error {
		got, err := tx.Claim(ctx, []string{"local", "nope"}, "s1", 100)
		if err != nil || len(got) != 1 {
			return fmt.Errorf("claim %v %v", got, err)
		}
		// A claimed item cannot be claimed by another session.
		got, _ = tx.Claim(ctx, []string{"local"}, "s2", 200)
		if len(got) != 0 {
			return fmt.Errorf("double claim %v", got)
		}
		acked, err := tx.Ack(ctx, []string{fmt.Sprintf("i%d-1", key), "unknown"}, InboxDismissed, 0, 50)
		if err != nil || len(acked) != 1 {
			return fmt.Errorf("ack %v %v", acked, err)
		}
		acked, _ = tx.Ack(ctx, []string{fmt.Sprintf("i%d-2", key)}, InboxDeferred, 80, 50)
		if len(acked) != 1 {
			return fmt.Errorf("defer %v", acked)
		}
		return nil
	})
	if p, _ := s.Read().PendingTotal(ctx); p != 1 {
		t.Fatalf("pending %d", p)
	}
	if until, _ := s.Read().NextExpiry(ctx); until != 80 {
		t.Fatalf("next expiry %d", until)
	}
	mustWrite(t, s, func(tx *Tx) error {
		n, err := tx.ReleaseExpired(ctx, 100)
		if n != 2 {
			return fmt.Errorf("released %d", n)
		}
		return err
	})
	if p, _ := s.Read().PendingTotal(ctx); p != 3 {
		t.Fatalf("pending after release %d", p)
	}
	// A dismissed item is never re-created.
	mustWrite(t, s, func(tx *Tx) error {
		ids, err := tx.InsertInbox(ctx, key, []InboxEntry{{ID: fmt.Sprintf("i%d-1", key), Kind: "room.message.new", Seq: 1, EventID: "e1", Priority: 1, Item: []byte(`{}`)}})
		if len(ids) != 0 {
			return fmt.Errorf("resurrected %v", ids)
		}
		return err
	})
	it, _ := s.Read().InboxItem(ctx, fmt.Sprintf("i%d-1", key))
	if it.State != InboxDismissed {
		t.Fatalf("state %s", it.State)
	}
}

func TestSessionsForgotten(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	now := int64(SessionMaxAgeMS) * 2
	mustWrite(t, s, func(tx *Tx) error {
		if err := tx.TouchSession(ctx, "old", 1); err != nil {
			return err
		}
		if err := tx.SetPresented(ctx, "old", key, 3, "h3"); err != nil {
			return err
		}
		for i := 0; i < SessionMaxCount+5; i++ {
			if err := tx.TouchSession(ctx, fmt.Sprintf("s%03d", i), now+int64(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if n, _ := s.Read().SessionCount(ctx); n != SessionMaxCount {
		t.Fatalf("sessions %d", n)
	}
	if _, _, ok, _ := s.Read().Presented(ctx, "old", key); ok {
		t.Fatal("presented head of a forgotten session kept")
	}
	// The newest survive.
	mustWrite(t, s, func(tx *Tx) error { return tx.SetPresented(ctx, fmt.Sprintf("s%03d", SessionMaxCount+4), key, 4, "h4") })
	if seq, _, ok, _ := s.Read().Presented(ctx, fmt.Sprintf("s%03d", SessionMaxCount+4), key); !ok || seq != 4 {
		t.Fatal("newest session lost")
	}
}

func TestDraftsProfilesOutbox(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	var d1, d2 *Draft
	mustWrite(t, s, func(tx *Tx) error {
		var err error
		if d1, err = tx.InsertDraft(ctx, &Draft{RoomKey: key, Kind: "message", BaseSeq: 1, BaseHash: "h", Reason: "room_head_mismatch", Input: []byte(`{}`)}); err != nil {
			return err
		}
		d2, err = tx.InsertDraft(ctx, &Draft{RoomKey: key, Kind: "event", BaseSeq: 2, BaseHash: "h", Reason: "room_head_mismatch", Input: []byte(`{}`)})
		return err
	})
	if d1.ID != "draft_room1_1" || d2.ID != "draft_room1_2" || d1.Host != "https://h" {
		t.Fatalf("ids %s %s", d1.ID, d2.ID)
	}
	list, _ := s.Read().Drafts(ctx, key, d1.Order(), 10)
	if len(list) != 1 || list[0].ID != d2.ID {
		t.Fatalf("page after cursor %+v", list)
	}
	mustWrite(t, s, func(tx *Tx) error {
		ok, err := tx.DeleteDraft(ctx, d1.ID)
		if !ok {
			return errors.New("draft not deleted")
		}
		return err
	})
	if _, err := s.Read().Draft(ctx, d1.ID); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	// Profiles are pinned to the greatest nonce.
	mustWrite(t, s, func(tx *Tx) error {
		if err := tx.PutProfile(ctx, &Profile{AgentID: "a", Service: "s", Nonce: 10, EventID: "e10", Document: []byte(`{}`), Envelope: []byte(`{}`)}); err != nil {
			return err
		}
		if err := tx.PutProfile(ctx, &Profile{AgentID: "a", Service: "s", Nonce: 9, EventID: "e9", Document: []byte(`{}`), Envelope: []byte(`{}`)}); !errors.Is(err, ErrRollback) {
			return fmt.Errorf("rollback accepted: %v", err)
		}
		return tx.PutProfile(ctx, &Profile{AgentID: "a", Service: "s", Nonce: 11, EventID: "e11", Document: []byte(`{}`), Envelope: []byte(`{}`)})
	})
	if p, _ := s.Read().Profile(ctx, "a"); p.Nonce != 11 {
		t.Fatalf("pinned %d", p.Nonce)
	}
	// Outbox leases.
	var id int64
	mustWrite(t, s, func(tx *Tx) error {
		var err error
		id, err = tx.AddOutbox(ctx, &OutboxEntry{Kind: "room_event", Service: "https://h", Ref: "room1", EventID: "ev", Nonce: 5, Envelope: []byte(`{}`), LeaseUntil: 100, CreatedAt: 1})
		return err
	})
	mustWrite(t, s, func(tx *Tx) error {
		got, err := tx.LeaseOutbox(ctx, 50, 200, 10)
		if err != nil || len(got) != 0 {
			return fmt.Errorf("leased entry taken: %v", got)
		}
		got, err = tx.LeaseOutbox(ctx, 150, 300, 10)
		if err != nil || len(got) != 1 || got[0].ID != id || got[0].Attempts != 1 {
			return fmt.Errorf("lease %+v", got)
		}
		return tx.CloseOutbox(ctx, id, OutboxDone, []byte(`{"seq":1}`), "", 160)
	})
	if n, _ := s.Read().PendingOutbox(ctx); n != 0 {
		t.Fatalf("pending outbox %d", n)
	}
}

// TestMigrationReverifiesRooms opens a store written before migration 3
// (rooms verified under the 0f87fee head rule) and checks that the derived
// room state is forgotten, so the next sync verifies again from seq 1,
// while what the agent did (read cursor, inbox decisions) is kept.
//
// Serial: it swaps the package-level schema migration.
func TestMigrationReverifiesRooms(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	current := migrateSchema
	migrateSchema = legacyUpTo(2)
	old := open(t, dir, 100)
	envelopeTable(t, old, true) // ApplyBatch writes it (migration 5)
	var key int64
	mustWrite(t, old, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	applyRange(t, old, key, 1, 5, "did:x", true)
	mustWrite(t, old, func(tx *Tx) error {
		if _, err := tx.SetReadSeq(ctx, key, 3); err != nil {
			return err
		}
		if err := tx.TouchSession(ctx, "s1", 1); err != nil {
			return err
		}
		return tx.SetPresented(ctx, "s1", key, 5, "h5")
	})
	envelopeTable(t, old, false)
	old.Close()
	migrateSchema = current

	s := open(t, dir, 100)
	r, err := s.Read().Room(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if r.HasSnapshot || r.SyncedSeq != 0 || r.HeadSeq != 0 {
		t.Fatalf("room state kept: snapshot=%v synced=%d head=%d", r.HasSnapshot, r.SyncedSeq, r.HeadSeq)
	}
	if r.ReadSeq != 3 {
		t.Fatalf("read cursor %d, want 3", r.ReadSeq)
	}
	if evs, _ := s.Read().Timeline(ctx, key, TimelineQuery{}); len(evs) != 0 {
		t.Fatalf("%d timeline items kept", len(evs))
	}
	if _, _, ok, _ := s.Read().Presented(ctx, "s1", key); ok {
		t.Fatal("a presented head computed under the old rule was kept")
	}
	var n int
	if err := s.r.db.QueryRowContext(ctx, `SELECT count(*) FROM inbox WHERE room = ?`, key).Scan(&n); err != nil || n != 5 {
		t.Fatalf("inbox items %d (%v), want 5", n, err)
	}
}

// legacyUpTo migrates to version n of the single history stores had before
// migration groups.
func legacyUpTo(n int) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		return sqlitedb.Migrate(ctx, tx, legacyMigrations[:n])
	}
}

// An item of no room (a letter) is stored with its source, listed beside
// the rooms' items, claimed and acknowledged like them, and counted in the
// total only.
func TestInboxItemsWithoutARoom(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		if err != nil {
			return err
		}
		key = r.Key
		if _, err := tx.InsertInbox(ctx, key, []InboxEntry{{ID: "room-item", Kind: "room.mention", Priority: 1, CreatedAt: 1, Item: []byte(`{}`)}}); err != nil {
			return err
		}
		ids, err := tx.InsertSourceInbox(ctx, "mail:box1", []InboxEntry{{ID: "letter", Kind: "mail.received", Priority: 0, CreatedAt: 2, Item: []byte(`{}`)}})
		if err != nil || len(ids) != 1 {
			return fmt.Errorf("inserted %v: %v", ids, err)
		}
		again, err := tx.InsertSourceInbox(ctx, "mail:box1", []InboxEntry{{ID: "letter", Kind: "mail.received", Priority: 0, CreatedAt: 2, Item: []byte(`{}`)}})
		if err != nil || len(again) != 0 {
			return fmt.Errorf("inserted twice: %v %v", again, err)
		}
		return nil
	})
	rows, err := s.Read().PendingInbox(ctx, InboxQuery{})
	if err != nil || len(rows) != 2 || rows[0].ID != "letter" || rows[0].Source != "mail:box1" || rows[0].RoomKey != 0 || rows[0].RoomID != "" ||
		rows[1].RoomID != "room1" || rows[1].Source != "" {
		t.Fatalf("pending %+v %v", rows, err)
	}
	if only, _ := s.Read().PendingInbox(ctx, InboxQuery{RoomKey: key}); len(only) != 1 || only[0].ID != "room-item" {
		t.Fatalf("room filter %+v", only)
	}
	mustWrite(t, s, func(tx *Tx) error {
		if got, err := tx.Claim(ctx, []string{"letter"}, "s1", 10); err != nil || len(got) != 1 {
			return fmt.Errorf("claim %v %v", got, err)
		}
		_, err := tx.Ack(ctx, []string{"letter"}, InboxHandled, 0, 5)
		return err
	})
	total, _ := s.Read().PendingTotal(ctx)
	r, _ := s.Read().Room(ctx, key)
	if total != 1 || r.PendingInbox != 1 {
		t.Fatalf("pending total %d, room %d; want 1 and 1", total, r.PendingInbox)
	}
}

// An ItemsOnly page holds the same seqs, heads, items and records as a
// full one, and nothing of the other columns.
func TestTimelineItemsOnly(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	var key int64
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		key = r.Key
		return err
	})
	applyRange(t, s, key, 1, 6, "did:other", true)
	for _, q := range []TimelineQuery{{AfterSeq: 1, Limit: 3}, {Newest: true, Limit: 2, Records: true}, {Actors: []string{"did:other"}}} {
		full, err := s.Read().Timeline(ctx, key, q)
		if err != nil {
			t.Fatal(err)
		}
		q.ItemsOnly = true
		lean, err := s.Read().Timeline(ctx, key, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(full) == 0 || len(lean) != len(full) {
			t.Fatalf("%+v: %d items, %d in full", q, len(lean), len(full))
		}
		for i, e := range lean {
			f := full[i]
			if e.Seq != f.Seq || e.HeadSeq != f.HeadSeq || e.HeadHash != f.HeadHash || string(e.Item) != string(f.Item) ||
				string(e.Record) != string(f.Record) || (q.Records && len(e.Record) == 0) {
				t.Fatalf("%+v: item %d differs: %+v / %+v", q, i, e, f)
			}
			if e.Hash != "" || e.EventID != "" || e.Type != "" || e.Actor != "" {
				t.Fatalf("%+v: item %d has other columns: %+v", q, i, e)
			}
		}
	}
}

// RoomsByID returns the rows RoomKeys names, in its order.
func TestRoomsByID(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 100)
	ctx := context.Background()
	mustWrite(t, s, func(tx *Tx) error {
		for _, h := range []string{"https://b", "https://a"} {
			if _, err := tx.EnsureRoom(ctx, h, "room1", 1); err != nil {
				return err
			}
		}
		_, err := tx.EnsureRoom(ctx, "https://a", "room2", 1)
		return err
	})
	for _, id := range []string{"room1", "room2", "room3"} {
		refs, err := s.Read().RoomKeys(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.Read().RoomsByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(refs) {
			t.Fatalf("%s: %d rows, %d refs", id, len(rows), len(refs))
		}
		for i, r := range rows {
			want, err := s.Read().Room(ctx, refs[i].Key)
			if err != nil {
				t.Fatal(err)
			}
			if *r != *want || r.Host != refs[i].Host || r.RoomID != id {
				t.Fatalf("%s: row %d %+v, want %+v", id, i, r, want)
			}
		}
	}
}

// A write transaction makes a query's statement once and reuses it; the
// next transaction makes its own; prepared or not, it works.
func TestWriteReusesStatements(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 10)
	ctx := context.Background()
	var seen []*sql.Stmt
	for range 2 {
		mustWrite(t, s, func(tx *Tx) error {
			for _, q := range []string{`SELECT COUNT(*) FROM rooms`, `SELECT COUNT(*) FROM events`} {
				a, err := tx.prepared(ctx, q)
				if err != nil {
					return err
				}
				b, err := tx.prepared(ctx, q)
				if err != nil {
					return err
				}
				if a != b {
					t.Errorf("%s: two statements in one transaction", q)
				}
				var n int
				if err := b.QueryRowContext(ctx).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s: %d, %v", q, n, err)
				}
				seen = append(seen, a)
			}
			return nil
		})
	}
	if seen[0] == seen[2] || seen[1] == seen[3] {
		t.Fatal("two transactions shared a statement")
	}
}
