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
	"net/url"
	"path/filepath"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the database file inside the data directory.
const FileName = "hub.db"

// pragmas apply to every connection; they must live in the DSN because
// pooled connections do not share per-connection state.
const pragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"

// DB is the hub's database: a single-connection writer and a read pool.
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB
}

// Open opens (creating if needed) DIR/hub.db and applies every pending
// migration. It refuses a database written by a newer hub.
func Open(ctx context.Context, dir string) (*DB, error) {
	abs, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return nil, err
	}
	base := "file:" + (&url.URL{Path: abs}).EscapedPath()
	writer, err := sql.Open("sqlite", base+"?"+pragmas+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := writer.PingContext(ctx); err != nil {
		writer.Close()
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	db := &DB{path: abs, writer: writer}
	if err := db.migrate(ctx); err != nil {
		writer.Close()
		return nil, fmt.Errorf("migrate %s: %w", abs, err)
	}
	reader, err := sql.Open("sqlite", base+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		writer.Close()
		return nil, err
	}
	reader.SetMaxOpenConns(4)
	if err := reader.PingContext(ctx); err != nil {
		writer.Close()
		reader.Close()
		return nil, fmt.Errorf("open %s read pool: %w", abs, err)
	}
	db.reader = reader
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

// Close closes both pools.
func (db *DB) Close() error {
	var errs []error
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	errs = append(errs, db.writer.Close())
	return errors.Join(errs...)
}
