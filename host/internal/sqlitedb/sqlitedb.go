// Package sqlitedb opens the SQLite databases apconnect keeps (the
// connector's per-agent state and the hub's) the one way that works under
// concurrency — a single-connection writer whose transactions begin
// IMMEDIATE, a read-only pool, WAL, every pragma in the DSN — and applies
// forward-only schema migrations: one history per database (Migrate), or
// several independent named histories in one database, one per module
// (MigrateGroups, which also maps a database's older single history onto
// its groups once).
//
// Deferred transactions that read and then write fail with SQLITE_BUSY even
// with a busy timeout, and a pragma set with Exec reaches only one pooled
// connection; both pitfalls are why this lives in one place.
package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"
)

// pragmas apply to every connection of both pools: WAL, NORMAL sync (safe in
// WAL; commits do not fsync), foreign keys, a busy timeout for the other
// process on the same file, and a 16 MiB page cache.
const pragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=cache_size(-16384)"

// Pools are an open database: Writer has one connection and begins every
// transaction IMMEDIATE; Reader is read-only.
type Pools struct {
	Writer *sql.DB
	Reader *sql.DB
}

// Open opens (creating if needed) the database at the absolute path. Before
// the read pool opens, migrate runs on the writer — typically Migrate in a
// transaction — so readers never see an old schema. writerPragmas are added
// to the writer's (as "name(value)", e.g. "wal_autocheckpoint(16384)").
func Open(ctx context.Context, path string, readers int, migrate func(w *sql.DB) error, writerPragmas ...string) (*Pools, error) {
	base := dsnBase(path)
	wdsn := base + "?" + pragmas + "&_txlock=immediate"
	for _, p := range writerPragmas {
		wdsn += "&_pragma=" + url.QueryEscape(p)
	}
	w, err := sql.Open("sqlite", wdsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if migrate != nil {
		if err := migrate(w); err != nil {
			w.Close()
			return nil, fmt.Errorf("migrate %s: %w", path, err)
		}
	}
	r, err := sql.Open("sqlite", base+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, err
	}
	if readers <= 0 {
		readers = 4
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	if err := r.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open %s read pool: %w", path, err)
	}
	return &Pools{Writer: w, Reader: r}, nil
}

func dsnBase(path string) string { return "file:" + (&url.URL{Path: path}).EscapedPath() }

// Migration is one forward-only schema step. Versions start at 1, increase
// by exactly 1, and are never edited once released: a change is a new step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrate applies, inside tx, every migration newer than the database's
// version, recording each in schema_migrations. It refuses a database
// written by a newer apconnect (what would it not understand?) and a
// migration list that is not numbered 1, 2, 3, ….
func Migrate(ctx context.Context, tx *sql.Tx, ms []Migration) error {
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return err
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	if current > len(ms) {
		return fmt.Errorf("database schema version %d is newer than this apconnect knows (%d); use a newer apconnect", current, len(ms))
	}
	for i, m := range ms {
		if m.Version != i+1 {
			return fmt.Errorf("migration %q has version %d, want %d", m.Name, m.Version, i+1)
		}
		if m.Version <= current {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

// Version returns the schema version recorded in the database (0 for a new
// one).
func Version(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
