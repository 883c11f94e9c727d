package hubdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.SchemaVersions(ctx)
	if err != nil || len(v) != 1 || v[SharedGroup] != len(sharedMigrations) {
		t.Fatalf("versions %v (%v), want %s %d", v, err, SharedGroup, len(sharedMigrations))
	}
	var mode string
	if err := db.Reader().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q (%v)", mode, err)
	}
	for _, table := range []string{"accepted_envelopes", "nonce_cache", "schema_group_migrations"} {
		var n int
		if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil || n != 1 {
			t.Fatalf("table %s missing", table)
		}
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES ('a', 5, 10)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.Reader().QueryRowContext(ctx, `SELECT max_nonce FROM nonce_cache WHERE actor = 'a'`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("row lost across reopen: %d %v", n, err)
	}
	var count int
	db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM schema_group_migrations`).Scan(&count)
	if count != len(sharedMigrations) {
		t.Fatalf("schema_group_migrations has %d rows", count)
	}
	// The read pool cannot write.
	if _, err := db.Reader().ExecContext(ctx, `DELETE FROM nonce_cache`); err == nil {
		t.Fatal("read pool wrote")
	}
	db.Close()
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_group_migrations VALUES ('shared', 999, 'future', 0)`)
		return err
	})
	db.Close()
	if db, err := Open(ctx, dir); err == nil {
		db.Close()
		t.Fatal("opened a database from a newer hub")
	}
}

func TestWriteRollsBackAndSerializes(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boom := errors.New("boom")
	err = db.Write(ctx, func(tx *sql.Tx) error {
		tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES ('a', 1, 1)`)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write returned %v", err)
	}
	var n int
	db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM nonce_cache`).Scan(&n)
	if n != 0 {
		t.Fatal("failed write committed")
	}
	// Read-modify-write from many goroutines loses no update.
	db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO nonce_cache VALUES ('c', 0, 0)`)
		return err
	})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				err := db.Write(ctx, func(tx *sql.Tx) error {
					var v int64
					if err := tx.QueryRowContext(ctx, `SELECT max_nonce FROM nonce_cache WHERE actor = 'c'`).Scan(&v); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `UPDATE nonce_cache SET max_nonce = ? WHERE actor = 'c'`, v+1)
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var v int64
	db.Reader().QueryRowContext(ctx, `SELECT max_nonce FROM nonce_cache WHERE actor = 'c'`).Scan(&v)
	if v != 160 {
		t.Fatalf("counter %d, want 160", v)
	}
}

func TestPreparedStatements(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const ins = `INSERT INTO nonce_cache (actor, max_nonce, expires_at) VALUES (?, ?, ?)`
	const sel = `SELECT max_nonce FROM nonce_cache WHERE actor = ?`
	if err := db.Prepare(ctx, ins, sel); err != nil {
		t.Fatal(err)
	}
	if err := db.Prepare(ctx, `SELECT nope FROM nowhere`); err == nil {
		t.Fatal("a bad query prepared")
	}
	for i := range 3 {
		err := db.Write(ctx, func(tx *sql.Tx) error {
			if _, err := db.Exec(ctx, tx, ins, fmt.Sprint("a", i), i+1, 10); err != nil {
				return err
			}
			var n int
			if err := db.QueryRow(ctx, tx, sel, fmt.Sprint("a", i)).Scan(&n); err != nil || n != i+1 {
				return fmt.Errorf("read back %d, %v", n, err)
			}
			// A query that was not prepared still works, uncached.
			_, err := db.Exec(ctx, tx, `DELETE FROM nonce_cache WHERE actor = ?`, "none")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The writer checkpoints every 4,000 pages and keeps temporary data in
// memory; the readers keep SQLite's defaults.
func TestWriterPragmas(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		name   string
		q      *sql.DB
		pragma string
		want   int
	}{
		{"writer", db.writer, "wal_autocheckpoint", 4000},
		{"writer", db.writer, "temp_store", 2},
		{"writer", db.writer, "cache_size", -4096},
		{"reader", db.Reader(), "wal_autocheckpoint", 1000},
		{"reader", db.Reader(), "cache_size", -16384},
		{"reader", db.Reader(), "temp_store", 0},
	} {
		var got int
		if err := tc.q.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: %s = %d, want %d", tc.name, tc.pragma, got, tc.want)
		}
	}
}
