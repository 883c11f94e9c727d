package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Leases: one holder at a time, renewable by its holder, taken over once it
// lapses, released only by its holder; two Store instances on one file (two
// processes) never both hold a job.
func TestWakeLeases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := open(t, dir, 0), open(t, dir, 0)
	ctx := context.Background()
	acquire := func(s *Store, job, holder string, now, until int64) (held, fresh bool) {
		t.Helper()
		mustWrite(t, s, func(tx *Tx) error {
			var err error
			held, fresh, err = tx.AcquireLease(ctx, job, holder, now, until)
			return err
		})
		return held, fresh
	}
	steps := []struct {
		s           *Store
		holder      string
		now, until  int64
		held, fresh bool
	}{
		{a, "A", 100, 200, true, true},   // free: taken
		{b, "B", 150, 250, false, false}, // held by A
		{a, "A", 190, 300, true, false},  // renewed
		{b, "B", 299, 400, false, false}, // still A's
		{b, "B", 300, 400, true, true},   // lapsed at 300: taken over
		{a, "A", 310, 410, false, false},
	}
	for i, st := range steps {
		if held, fresh := acquire(st.s, "command:x", st.holder, st.now, st.until); held != st.held || fresh != st.fresh {
			t.Fatalf("step %d (%s at %d): held %v fresh %v, want %v %v", i, st.holder, st.now, held, fresh, st.held, st.fresh)
		}
	}
	mustWrite(t, a, func(tx *Tx) error { return tx.ReleaseLease(ctx, "command:x", "A") })
	if held, _ := acquire(a, "command:x", "A", 320, 420); held {
		t.Fatal("A's release freed B's lease")
	}
	mustWrite(t, b, func(tx *Tx) error { return tx.ReleaseLease(ctx, "command:x", "B") })
	if held, fresh := acquire(a, "command:x", "A", 330, 430); !held || !fresh {
		t.Fatal("a released lease was not free")
	}
	ls, err := b.Read().Leases(ctx)
	if err != nil || len(ls) != 1 || ls[0] != (Lease{Job: "command:x", Holder: "A", Since: 330, Until: 430}) {
		t.Fatalf("leases %+v %v", ls, err)
	}
	if l, ok, err := b.Read().Lease(ctx, "command:x"); err != nil || !ok || l != ls[0] {
		t.Fatalf("lease %+v %v %v", l, ok, err)
	}
	if _, ok, err := b.Read().Lease(ctx, "command:none"); err != nil || ok {
		t.Fatalf("a lease no one holds: %v %v", ok, err)
	}

	// Concurrent contenders on one job: exactly one wins each round.
	for round := range 20 {
		now := int64(10_000 + round*1000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners := 0
		for i, s := range []*Store{a, b, a, b} {
			wg.Go(func() {
				var held bool
				err := s.Write(ctx, func(tx *Tx) error {
					var err error
					held, _, err = tx.AcquireLease(ctx, "race", fmt.Sprint("p", i), now, now+500)
					return err
				})
				if err != nil {
					t.Error(err)
				}
				if held {
					mu.Lock()
					winners++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("round %d: %d holders", round, winners)
		}
	}
}

// Wake claims: a target is woken for a pending item once, across Store
// instances; an item no longer pending is not claimed; candidates leave out
// what the target was woken for, other kinds and lower priorities.
func TestWakeClaims(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := open(t, dir, 0), open(t, dir, 0)
	ctx := context.Background()
	mustWrite(t, a, func(tx *Tx) error {
		r, err := tx.EnsureRoom(ctx, "https://h", "room1", 1)
		if err != nil {
			return err
		}
		if _, err := tx.InsertInbox(ctx, r.Key, []InboxEntry{
			{ID: "m1", Kind: "room.mention", Seq: 4, Priority: 0, CreatedAt: 1, Item: []byte(`{"id":"m1"}`)},
			{ID: "n1", Kind: "room.message.new", Seq: 5, Priority: 1, CreatedAt: 2, Item: []byte(`{"id":"n1"}`)},
			{ID: "m2", Kind: "room.mention", Seq: 6, Priority: 0, CreatedAt: 3, Item: []byte(`{"id":"m2"}`)},
		}); err != nil {
			return err
		}
		_, err = tx.InsertSourceInbox(ctx, "mail:box", []InboxEntry{{ID: "l1", Kind: "mail.received", Priority: 1, CreatedAt: 4, Item: []byte(`{"id":"l1"}`)}})
		return err
	})
	ids := func(s *Store, q WakeQuery) string {
		t.Helper()
		items, err := s.Read().WakeCandidates(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, it := range items {
			out += it.ID + " "
		}
		return out
	}
	all := []string{"room.mention", "room.message.new", "mail.received"}
	for _, c := range []struct {
		q    WakeQuery
		want string
	}{
		{WakeQuery{Target: "t", Kinds: all, MaxPriority: 2}, "m1 n1 m2 l1 "},
		{WakeQuery{Target: "t", Kinds: all, MaxPriority: 0}, "m1 m2 "},
		{WakeQuery{Target: "t", Kinds: []string{"mail.received"}, MaxPriority: 2}, "l1 "},
		{WakeQuery{Target: "t", Kinds: nil, MaxPriority: 2}, ""},
		{WakeQuery{Target: "t", Kinds: all, MaxPriority: 2, Limit: 1}, "m1 "},
	} {
		if got := ids(b, c.q); got != c.want {
			t.Errorf("%+v: %q, want %q", c.q, got, c.want)
		}
	}
	items, _ := a.Read().WakeCandidates(ctx, WakeQuery{Target: "cmd", Kinds: []string{"room.mention"}, MaxPriority: 2})
	if items[0].RoomID != "room1" || items[0].Host != "https://h" || items[0].Seq != 4 || string(items[0].Item) != `{"id":"m1"}` {
		t.Fatalf("candidate %+v", items[0])
	}
	// Two processes claim m1 for one target at once: one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for _, s := range []*Store{a, b, a, b} {
		wg.Go(func() {
			var ok bool
			err := s.Write(ctx, func(tx *Tx) error {
				var err error
				_, ok, err = tx.ClaimWake(ctx, WakeClaim{Item: items[0], Via: WakeViaCommand, Target: "cmd", Label: "/bin/true", Holder: "p", State: WakeClaimed, At: 10})
				return err
			})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d claims of one item for one target", won)
	}
	if got := ids(a, WakeQuery{Target: "cmd", Kinds: all, MaxPriority: 2}); got != "n1 m2 l1 " {
		t.Fatalf("after the claim: %q", got)
	}
	if got := ids(a, WakeQuery{Target: "other", Kinds: all, MaxPriority: 2}); got != "m1 n1 m2 l1 " {
		t.Fatalf("another target: %q", got)
	}
	// An item that is no longer pending is not claimed.
	mustWrite(t, a, func(tx *Tx) error {
		_, err := tx.Ack(ctx, []string{"m2"}, InboxHandled, 0, 5)
		return err
	})
	mustWrite(t, a, func(tx *Tx) error {
		_, ok, err := tx.ClaimWake(ctx, WakeClaim{Item: WakeItem{ID: "m2"}, Via: WakeViaCommand, Target: "cmd", State: WakeClaimed, At: 11})
		if ok || err != nil {
			return fmt.Errorf("claimed a handled item: %v %v", ok, err)
		}
		return nil
	})
	if at, err := a.Read().LastWake(ctx, "cmd"); err != nil || at != 10 {
		t.Fatalf("last wake %d %v", at, err)
	}
	if at, _ := a.Read().LastWake(ctx, "nothing"); at != 0 {
		t.Fatalf("last wake of a target never woken: %d", at)
	}
}

// The wake log: a command's run from claim to exit, an interrupted run
// marked by the next holder, the agent's claim and acknowledgement
// recorded by the trigger, filters and paging, pruning.
func TestWakeLog(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 0)
	ctx := context.Background()
	var claims []int64
	mustWrite(t, s, func(tx *Tx) error {
		if _, err := tx.InsertSourceInbox(ctx, "test", []InboxEntry{
			{ID: "a", Kind: "room.mention", CreatedAt: 1, Item: []byte(`{}`)},
			{ID: "b", Kind: "room.mention", CreatedAt: 2, Item: []byte(`{}`)},
		}); err != nil {
			return err
		}
		for _, c := range []WakeClaim{
			{Item: WakeItem{ID: "a"}, Via: WakeViaCommand, Target: "cmd", Label: "agent", Holder: "old", State: WakeClaimed, At: 100},
			{Item: WakeItem{ID: "b"}, Via: WakeViaCommand, Target: "cmd", Label: "agent", Holder: "new", State: WakeClaimed, At: 200},
			{Item: WakeItem{ID: "a"}, Via: WakeViaChannel, Target: "session", Label: "channel", Holder: "new", State: WakeSent, At: 300},
		} {
			id, ok, err := tx.ClaimWake(ctx, c)
			if err != nil || !ok {
				return fmt.Errorf("claim %+v: %v %v", c, ok, err)
			}
			claims = append(claims, id)
		}
		if err := tx.StartWake(ctx, claims[1], 210); err != nil {
			return err
		}
		code := 3
		if err := tx.FinishWake(ctx, claims[1], WakeEnd{State: WakeExited, ExitCode: &code, Output: []byte("out"), OutputBytes: 9, At: 250}); err != nil {
			return err
		}
		if n, err := tx.InterruptWakes(ctx, "cmd", "new", 260); err != nil || n != 1 {
			return fmt.Errorf("interrupted %d: %v", n, err)
		}
		return nil
	})
	before := time.Now().UnixMilli()
	mustWrite(t, s, func(tx *Tx) error {
		if _, err := tx.Claim(ctx, []string{"a"}, "sess", before+60_000); err != nil {
			return err
		}
		_, err := tx.Ack(ctx, []string{"a"}, InboxDismissed, 0, before)
		return err
	})
	all, err := s.Read().RecentWakes(ctx, WakeFilter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("wakes %+v %v", all, err)
	}
	sent, run, gone := all[0], all[1], all[2]
	if sent.Via != WakeViaChannel || sent.State != WakeSent || sent.ExitCode != nil {
		t.Errorf("channel wake %+v", sent)
	}
	if run.State != WakeExited || run.ExitCode == nil || *run.ExitCode != 3 || string(run.Output) != "out" || run.OutputBytes != 9 ||
		run.StartedAt != 210 || run.EndedAt != 250 || run.ClaimedAt != 0 || run.AckedAt != 0 {
		t.Errorf("finished run %+v", run)
	}
	if gone.State != WakeInterrupted || gone.EndedAt != 260 || gone.Error == "" {
		t.Errorf("interrupted run %+v", gone)
	}
	for _, w := range []WakeRecord{sent, gone} {
		if w.ClaimedAt < before || w.AckedAt < w.ClaimedAt || w.AckState != InboxDismissed {
			t.Errorf("the agent's reaction to %s via %s: claimed %d acked %d (%s), want at or after %d", w.InboxID, w.Via, w.ClaimedAt, w.AckedAt, w.AckState, before)
		}
	}
	for _, c := range []struct {
		f    WakeFilter
		want []int64
	}{
		{WakeFilter{Limit: 2}, []int64{claims[2], claims[1]}},
		{WakeFilter{Before: claims[2]}, []int64{claims[1], claims[0]}},
		{WakeFilter{Via: WakeViaCommand}, []int64{claims[1], claims[0]}},
		{WakeFilter{InboxID: "a"}, []int64{claims[2], claims[0]}},
	} {
		got, err := s.Read().RecentWakes(ctx, c.f)
		var ids []int64
		for _, w := range got {
			ids = append(ids, w.ID)
		}
		if err != nil || fmt.Sprint(ids) != fmt.Sprint(c.want) {
			t.Errorf("%+v: %v %v, want %v", c.f, ids, err, c.want)
		}
	}
	mustWrite(t, s, func(tx *Tx) error { return tx.PruneWakes(ctx, 250) })
	if left, _ := s.Read().RecentWakes(ctx, WakeFilter{}); len(left) != 1 || left[0].ID != claims[2] {
		t.Fatalf("after pruning %+v", left)
	}
}

// The trigger that records the agent's reaction lives on the inbox table:
// a migration that rebuilds that table must create it again.
func TestWakeOutcomeTrigger(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir(), 0)
	var n int
	if err := s.Read().queryRow(context.Background(), `SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'wake_log_outcome' AND tbl_name = 'inbox'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("trigger wake_log_outcome on inbox: %d %v", n, err)
	}
}
