package hubdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Concurrent WriteGroup calls share transactions; a failing write rolls
// back alone (its abort hooks run, its commit hooks never), every other
// write commits, commit hooks run in write order before the writes return,
// and a lock held for a transaction is taken once and released after every
// hook of it.
func TestWriteGroup(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const writers, each = 8, 40
	var mu sync.Mutex
	var committed []string // commit hook order
	aborted := map[string]bool{}
	var lockMu sync.Mutex // the shared "room lock"
	locks, releases := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := fmt.Sprintf("w%d-%d", w, i)
				fail := i%5 == 4
				err := db.WriteGroup(func(tx *sql.Tx) error {
					if !db.Holds(tx, "room") {
						lockMu.Lock()
						locks++
						db.Hold(tx, "room", func() { releases++; lockMu.Unlock() })
					}
					if db.Hold(tx, "room", func() { t.Error("a second release registered") }) {
						t.Error("Hold took a held key again")
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES (?, 1, 1)`, name); err != nil {
						return err
					}
					db.OnCommit(tx, func() { mu.Lock(); committed = append(committed, name); mu.Unlock() })
					db.OnAbort(tx, func() { mu.Lock(); aborted[name] = true; mu.Unlock() })
					if fail {
						return errors.New("refused")
					}
					return nil
				})
				switch {
				case fail && (err == nil || err.Error() != "refused"):
					errs <- fmt.Errorf("%s: %v, want its own error", name, err)
				case !fail && err != nil:
					errs <- fmt.Errorf("%s: %v", name, err)
				case !fail:
					mu.Lock()
					ok := len(committed) > 0 && strings.Contains(strings.Join(committed, " "), name)
					mu.Unlock()
					if !ok {
						errs <- fmt.Errorf("%s returned before its commit hook ran", name)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM nonce_cache`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	want := writers * each * 4 / 5
	if n != want || len(committed) != want || len(aborted) != writers*each/5 {
		t.Fatalf("%d rows, %d committed, %d aborted; want %d, %d, %d", n, len(committed), len(aborted), want, want, writers*each/5)
	}
	for name := range aborted {
		if strings.Contains(" "+strings.Join(committed, " ")+" ", " "+name+" ") {
			t.Errorf("%s both aborted and committed", name)
		}
	}
	txs, writes := db.CommitStats()
	if writes < int64(want) || txs < 1 || txs > writes {
		t.Fatalf("commit stats: %d transactions for %d writes", txs, writes)
	}
	// One lock per transaction (those whose writes all failed included).
	if locks != releases || locks < int(txs) {
		t.Fatalf("%d locks taken, %d released, %d transactions", locks, releases, txs)
	}
	t.Logf("%d writes in %d transactions", writes, txs)
}

// A panicking write rolls back alone, the others of its transaction commit,
// the panic reaches its caller, and the database stays usable.
func TestWriteGroupPanic(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v", p)
			}
		}()
		_ = db.WriteGroup(func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES ('p', 1, 1)`); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if err := db.WriteGroup(func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES ('q', 1, 1)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES ('r', 1, 1)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var names string
	db.Reader().QueryRowContext(ctx, `SELECT group_concat(actor, ',') FROM (SELECT actor FROM nonce_cache ORDER BY actor)`).Scan(&names)
	if names != "q,r" {
		t.Fatalf("rows %q, want q,r", names)
	}
}

// A transaction whose writes are done waits for an expected write (Expect)
// and commits with it; it commits without it when the expectation is
// cancelled, or after maxLinger; a write arriving through its expectation
// after that starts a transaction of its own.
func TestWriteGroupExpected(t *testing.T) {
	ctx := context.Background()
	insert := func(name string) func(tx *sql.Tx) error {
		return func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES (?, 1, 1)`, name)
			return err
		}
	}
	cases := []struct {
		name   string
		linger time.Duration
		then   func(db *DB, exp *Expected) error // after the first write lingers
		txs    int64                             // transactions for the two writes (1: shared)
	}{
		{"arrives", time.Minute, func(db *DB, exp *Expected) error { return exp.WriteGroup(insert("b")) }, 1},
		{"cancelled", time.Minute, func(db *DB, exp *Expected) error { exp.Cancel(); return db.WriteGroup(insert("b")) }, 2},
		{"late", 20 * time.Millisecond, func(db *DB, exp *Expected) error {
			time.Sleep(100 * time.Millisecond)
			return exp.WriteGroup(insert("b"))
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func(d time.Duration) { maxLinger = d }(maxLinger)
			maxLinger = tc.linger
			db, err := Open(ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tx0, _ := db.CommitStats()
			exp := db.Expect()
			first := make(chan error, 1)
			go func() { first <- db.WriteGroup(insert("a")) }()
			deadline := time.Now().Add(10 * time.Second)
			for !db.lingers.Load() {
				if time.Now().After(deadline) {
					t.Fatal("the first write's transaction did not wait for the expected one")
				}
				time.Sleep(time.Millisecond)
			}
			if err := tc.then(db, exp); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-first:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the first write never committed")
			}
			exp.Cancel() // a no-op once arrived or cancelled
			txs, writes := db.CommitStats()
			var n int
			if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM nonce_cache`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if txs-tx0 != tc.txs || writes < 2 || n != 2 || db.expected.Load() != 0 {
				t.Fatalf("%d transactions (want %d), %d writes, %d rows, %d expected", txs-tx0, tc.txs, writes, n, db.expected.Load())
			}
		})
	}
}

// Within a transaction a query's statement is made once and reused; the
// next transaction makes its own.
func TestStmtReusedWithinTransaction(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const sel = `SELECT count(*) FROM nonce_cache`
	if err := db.Prepare(ctx, sel); err != nil {
		t.Fatal(err)
	}
	var seen []*sql.Stmt
	for range 2 {
		err := db.WriteGroup(func(tx *sql.Tx) error {
			a, err := db.Stmt(ctx, tx, sel)
			if err != nil {
				return err
			}
			b, err := db.Stmt(ctx, tx, sel)
			if err != nil {
				return err
			}
			if a != b {
				t.Error("a query made two statements in one transaction")
			}
			seen = append(seen, a)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen[0] == seen[1] {
		t.Fatal("two transactions shared a statement")
	}
}
