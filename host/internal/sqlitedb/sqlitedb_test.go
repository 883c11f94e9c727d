package sqlitedb

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var ctx = context.Background()

func migrateWith(ms []Migration) func(*sql.DB) error {
	return func(w *sql.DB) error {
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := Migrate(ctx, tx, ms); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}
}

var two = []Migration{
	{Version: 1, Name: "t", SQL: `CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL) STRICT`},
	{Version: 2, Name: "u", SQL: `CREATE TABLE u (x TEXT) STRICT`},
}

func TestMigrateOnceAndRefuseNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	p, err := Open(ctx, path, 2, migrateWith(two))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := Version(ctx, p.Reader); err != nil || v != 2 {
		t.Fatalf("version %d, %v", v, err)
	}
	p.Writer.Close()
	p.Reader.Close()
	// Reopening applies nothing twice.
	p, err = Open(ctx, path, 2, migrateWith(two))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	p.Reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	if n != 2 {
		t.Fatalf("%d migration rows", n)
	}
	// The read pool cannot write.
	if _, err := p.Reader.ExecContext(ctx, `INSERT INTO u VALUES ('x')`); err == nil {
		t.Fatal("read pool accepted a write")
	}
	p.Writer.Close()
	p.Reader.Close()
	// An older apconnect refuses the newer file.
	if _, err := Open(ctx, path, 2, migrateWith(two[:1])); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("older code opened a newer database: %v", err)
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "x"), 1, migrateWith([]Migration{{Version: 2, Name: "gap"}})); err == nil {
		t.Fatal("misnumbered migrations accepted")
	}
}

// Read-modify-write transactions from many goroutines all commit: the
// writer's IMMEDIATE transactions never hit SQLITE_BUSY on upgrade.
func TestConcurrentReadModifyWrite(t *testing.T) {
	p, err := Open(ctx, filepath.Join(t.TempDir(), "db.sqlite"), 2, migrateWith(two))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Writer.Close()
	defer p.Reader.Close()
	if _, err := p.Writer.ExecContext(ctx, `INSERT INTO t VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				tx, err := p.Writer.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				var v int
				tx.QueryRowContext(ctx, `SELECT v FROM t WHERE k = 1`).Scan(&v)
				if _, err := tx.ExecContext(ctx, `UPDATE t SET v = ? WHERE k = 1`, v+1); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var v int
	p.Reader.QueryRowContext(ctx, `SELECT v FROM t WHERE k = 1`).Scan(&v)
	if v != 80 {
		t.Fatalf("v = %d, want 80", v)
	}
}
