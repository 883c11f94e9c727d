package hubdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
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
