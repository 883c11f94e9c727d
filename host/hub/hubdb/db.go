// Package hubdb is the local hub's SQLite state: one database file in the
// data directory, opened in WAL mode with a single writer connection whose
// transactions begin IMMEDIATE, a small read-only pool, and ordered schema
// migrations recorded in schema_migrations.
//
// Every write goes through (*DB).Write, so writers are serialized and a
// read-then-write transaction never fails with SQLITE_BUSY. Plain reads use
// (*DB).Reader and see the last committed state.
package hubdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"apconnect/host/internal/sqlitedb"
)

// FileName is the database file inside the data directory.
const FileName = "hub.db"

// DB is the hub's database: a single-connection writer and a read pool.
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // prepared on the writer, by query text
}

// Open opens (creating if needed) DIR/hub.db and applies every pending
// migration. It refuses a database written by a newer hub.
func Open(ctx context.Context, dir string) (*DB, error) {
	abs, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return nil, err
	}
	db := &DB{path: abs}
	pools, err := sqlitedb.Open(ctx, abs, 4, func(w *sql.DB) error {
		db.writer = w
		return db.Write(ctx, func(tx *sql.Tx) error { return sqlitedb.Migrate(ctx, tx, migrations) })
	})
	if err != nil {
		return nil, err
	}
	db.writer, db.reader = pools.Writer, pools.Reader
	return db, nil
}

// Path returns the database file's absolute path.
func (db *DB) Path() string { return db.path }

// Reader returns the read-only pool. Use it for queries outside a write
// transaction; it sees the last committed state.
func (db *DB) Reader() *sql.DB { return db.reader }

// Write runs fn in an IMMEDIATE transaction on the writer connection and
// commits when fn returns nil; any error (or panic) rolls back. Writes are
// serialized: fn holds the write lock for its whole duration, so keep
// expensive work that needs no state (signature checks, parsing) outside it.
func (db *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, rbErr)
		}
		return err
	}
	return tx.Commit()
}

// Prepare prepares queries on the writer connection and caches them for
// Stmt, Exec and QueryRow, so a hot write path does not parse its SQL again
// in every transaction. Call it outside any Write (services do at
// construction): the writer has a single connection, which a transaction
// holds.
func (db *DB) Prepare(ctx context.Context, queries ...string) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.stmts == nil {
		db.stmts = map[string]*sql.Stmt{}
	}
	for _, q := range queries {
		if _, ok := db.stmts[q]; ok {
			continue
		}
		st, err := db.writer.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		db.stmts[q] = st
	}
	return nil
}

// Stmt returns query as a statement of tx, a transaction of Write: the
// cached prepared statement when Prepare registered the query, otherwise
// one prepared now for this transaction only. It closes with tx.
func (db *DB) Stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	db.mu.Lock()
	st, ok := db.stmts[query]
	db.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// Exec runs a cached prepared statement (see Stmt) in tx.
func (db *DB) Exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := db.Stmt(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryRow runs a cached prepared query (see Stmt) in tx. A preparation
// failure surfaces from the row's Scan.
func (db *DB) QueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	st, err := db.Stmt(ctx, tx, query)
	if err != nil {
		// QueryRowContext on the transaction reports the same error
		// through Scan.
		return tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// Close closes both pools.
func (db *DB) Close() error {
	var errs []error
	db.mu.Lock()
	for _, st := range db.stmts {
		errs = append(errs, st.Close())
	}
	db.stmts = nil
	db.mu.Unlock()
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	errs = append(errs, db.writer.Close())
	return errors.Join(errs...)
}

// Compact rebuilds the database file (VACUUM), copies the write-ahead log
// into it and truncates the log, so that no page of hub.db or hub.db-wal
// keeps content that was overwritten or deleted — not even fragments left
// in free space by earlier page splits. Redaction uses it. It holds the
// write lock for the duration; call it outside any Write.
func (db *DB) Compact(ctx context.Context) error {
	if _, err := db.writer.ExecContext(ctx, `VACUUM`); err != nil {
		return err
	}
	_, err := db.writer.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}
