// Package hubdb is the local hub's SQLite state: one database file in the
// data directory, opened in WAL mode with a single writer connection whose
// transactions begin IMMEDIATE, a small read-only pool, and forward-only
// schema migrations in independent groups (sqlitedb.MigrateGroups): the
// shared tables' (Shared: accepted_envelopes, nonce_cache) and one per
// service, which each service declares beside its code. A hub.db written
// before groups (one history, versions 1–3) is mapped onto them once.
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
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

	wmu      sync.Mutex            // held while a write function runs, and while a transaction ends
	waiting  atomic.Int64          // writes waiting for wmu
	expected atomic.Int64          // writes announced (Expect) that have not arrived or given up
	cur      atomic.Pointer[group] // the open shared transaction, nil between them (set under wmu)
	lingers  atomic.Bool           // cur stays open for expected writes (under wmu to set)

	commits, committed atomic.Int64 // transactions committed, writes they held
}

// CommitStats reports how many write transactions committed and how many
// writes they held: their ratio is the mean size of a shared transaction
// (WriteGroup). Benchmarks report it.
func (db *DB) CommitStats() (transactions, writes int64) {
	return db.commits.Load(), db.committed.Load()
}

// maxGroup bounds the writes one shared transaction takes.
const maxGroup = 64

// maxLinger bounds how long a shared transaction whose writes are done
// stays open for expected writes (Expect) before it commits anyway (a
// variable for the tests).
var maxLinger = time.Millisecond

// The savepoint each write of a shared transaction after its first runs in
// (the first needs none: when it fails, the transaction holds nothing else
// and is rolled back whole), prepared once by Open.
const (
	savepointSQL  = "SAVEPOINT hubdb_write"
	releaseSQL    = "RELEASE hubdb_write"
	rollbackToSQL = "ROLLBACK TO hubdb_write"
)

// group is one write transaction and the writes in it.
type group struct {
	tx      *sql.Tx
	writes  []*pending // the writes to commit, in order
	running *pending   // the write whose function runs now
	holds   []func()   // releases, in order of Hold
	held    map[any]bool
	broken  error                // the transaction cannot go on (a savepoint could not be rolled back)
	stmts   map[string]*sql.Stmt // statements of tx by query (Stmt), closed with it
	linger  *time.Timer          // commits the transaction if it lingers too long
	done    chan struct{}
	err     error // the transaction's outcome, once done is closed
}

// pending is one write's hooks.
type pending struct {
	commit []func()
	abort  []func()
}

// Open opens (creating if needed) DIR/hub.db and applies every pending
// migration of the shared group and then of groups, in order. It refuses a
// database written by a newer hub: a group beyond its migrations, or a
// group not given (a hub opens its database with every service's group).
func Open(ctx context.Context, dir string, groups ...Group) (*DB, error) {
	abs, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return nil, err
	}
	all := append([]Group{Shared()}, groups...)
	db := &DB{path: abs}
	pools, err := sqlitedb.Open(ctx, abs, 4, func(w *sql.DB) error {
		db.writer = w
		return db.Write(ctx, func(tx *sql.Tx) error { return sqlitedb.MigrateGroups(ctx, tx, all, legacy) })
	}, writerPragmas...)
	if err != nil {
		return nil, err
	}
	db.writer, db.reader = pools.Writer, pools.Reader
	if err := db.Prepare(ctx, savepointSQL, releaseSQL, rollbackToSQL); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// writerPragmas tune the writer: it checkpoints the write-ahead log every
// 4,000 pages instead of SQLite's 1,000 (a checkpoint runs inside a commit,
// where every writer waits for its fsyncs; fewer of them copy fewer pages
// in all, since a page written again and again is copied once per
// checkpoint, and 4,000 frames still fit one block of the WAL index), it
// keeps the savepoints' journal in memory, and its page cache is 4 MiB
// instead of the pools' 16.
//
// The smaller cache is deliberate. When a b-tree page splits, SQLite swaps
// page numbers through a temporary one far beyond the end of the file
// (the page after the 1 GiB lock byte), and the commit that follows then
// walks every slot of the cache's hash table, which is as large as the
// most pages the cache ever held: about 4,000 slots (some 30 µs, inside
// the write lock) for 16 MiB, and most commits of a busy hub split a page.
// What the writer reads again and again — the b-trees' upper levels and
// the pages it last appended to — fits 4 MiB; the readers keep 16.
var writerPragmas = []string{"wal_autocheckpoint(4000)", "temp_store(memory)", "cache_size(-4096)"}

// Path returns the database file's absolute path.
func (db *DB) Path() string { return db.path }

// Reader returns the read-only pool. Use it for queries outside a write
// transaction; it sees the last committed state.
func (db *DB) Reader() *sql.DB { return db.reader }

// Write runs fn in an IMMEDIATE transaction of its own on the writer
// connection and commits when fn returns nil; any error (or panic) rolls
// back. Writes are serialized: fn holds the write lock for its whole
// duration, so keep expensive work that needs no state (signature checks,
// parsing) outside it. A shared transaction of WriteGroup still open is
// committed first.
func (db *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	db.wmu.Lock()
	if g := db.cur.Load(); g != nil {
		db.end(g)
	}
	g, err := db.begin(ctx)
	if err != nil {
		db.wmu.Unlock()
		return err
	}
	w := g.start()
	panicked, ferr := run(func() error { return fn(g.tx) })
	if ferr != nil {
		g.broken = ferr // end rolls back
	}
	g.settle(w, ferr)
	db.end(g)
	db.wmu.Unlock()
	if panicked != nil {
		panic(panicked)
	}
	if ferr != nil {
		return ferr
	}
	return g.err
}

// begin opens a write transaction as the current group. The caller holds
// wmu.
func (db *DB) begin(ctx context.Context) (*group, error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	g := &group{tx: tx, done: make(chan struct{})}
	db.cur.Store(g)
	return g, nil
}

// start makes a new write the one running in g (the hooks its function
// registers are its own).
func (g *group) start() *pending {
	g.running = &pending{}
	return g.running
}

// settle records the outcome of the write w whose function just ran: a
// failed write's abort hooks run now; a successful one's hooks wait for the
// transaction's end.
func (g *group) settle(w *pending, ferr error) {
	g.running = nil
	if ferr != nil {
		runAbort(w)
		return
	}
	g.writes = append(g.writes, w)
}

// WriteGroup runs fn as Write does, but writes made concurrently may share
// one transaction (group commit), which costs one commit instead of one
// each: fn runs after the functions queued before it and sees their
// changes, in a savepoint of the shared transaction when it is not the
// first; its error (or panic) rolls back its own changes only. WriteGroup
// returns fn's error, or, once the shared transaction has ended, its
// commit's outcome.
//
// The transaction commits when no other write is waiting and none is
// expected (Expect; an expected write is waited for at most maxLinger), or
// after maxGroup writes: a lone write commits at once, and the more writes
// are on their way, the more one commit takes. fn's statements must not be
// cancelled while they run — a SQLite interrupt would roll back the whole
// shared transaction — so pass fn a context without cancellation
// (context.WithoutCancel). Hooks (OnCommit, OnAbort, Hold) run before the
// next transaction begins.
func (db *DB) WriteGroup(fn func(tx *sql.Tx) error) error {
	db.waiting.Add(1)
	return db.writeGroup(fn)
}

// writeGroup is WriteGroup once the write counts as waiting.
func (db *DB) writeGroup(fn func(tx *sql.Tx) error) error {
	db.wmu.Lock()
	db.waiting.Add(-1)
	g := db.cur.Load()
	if g == nil {
		var err error
		if g, err = db.begin(context.Background()); err != nil {
			db.wmu.Unlock()
			return err
		}
	}
	db.lingers.Store(false)
	panicked, ferr := db.runWrite(g, fn)
	switch open := g.broken == nil && len(g.writes) < maxGroup; {
	case open && db.waiting.Load() > 0:
		// The next waiting write joins g and decides.
	case open && len(g.writes) > 0 && db.expected.Load() > 0:
		db.linger(g)
	default:
		db.end(g)
	}
	db.wmu.Unlock()
	if panicked != nil {
		panic(panicked)
	}
	if ferr != nil {
		return ferr
	}
	<-g.done
	return g.err
}

// runWrite runs fn as the next write of g, in a savepoint unless g holds
// no write yet (then a failure rolls g back whole: ending g breaks no other
// write). The caller holds wmu.
func (db *DB) runWrite(g *group, fn func(tx *sql.Tx) error) (panicked any, ferr error) {
	ctx := context.Background()
	w := g.start()
	if len(g.writes) == 0 {
		panicked, ferr = run(func() error { return fn(g.tx) })
		if ferr != nil {
			g.broken = ferr // rolls back what fn did; no other write is in g
		}
		g.settle(w, ferr)
		return panicked, ferr
	}
	if _, err := db.exec(ctx, g, savepointSQL); err != nil {
		ferr = err
		g.broken = err
	} else {
		panicked, ferr = run(func() error { return fn(g.tx) })
		if ferr == nil {
			if _, ferr = db.exec(ctx, g, releaseSQL); ferr != nil {
				g.broken = ferr
			}
		} else if _, err := db.exec(ctx, g, rollbackToSQL); err != nil {
			g.broken = err
		} else if _, err := db.exec(ctx, g, releaseSQL); err != nil {
			g.broken = err
		}
	}
	g.settle(w, ferr)
	return panicked, ferr
}

// linger leaves g open for the writes expected to join it, committing it
// after maxLinger at the latest. The caller holds wmu.
func (db *DB) linger(g *group) {
	db.lingers.Store(true)
	if g.linger == nil {
		g.linger = time.AfterFunc(maxLinger, func() {
			db.wmu.Lock()
			if db.cur.Load() == g && g.running == nil {
				db.end(g)
			}
			db.wmu.Unlock()
		})
	}
}

// flushLingering commits a transaction left open for expected writes once
// none is expected or waiting any more.
func (db *DB) flushLingering() {
	if !db.lingers.Load() {
		return
	}
	db.wmu.Lock()
	if g := db.cur.Load(); g != nil && g.running == nil && db.waiting.Load() == 0 && db.expected.Load() == 0 {
		db.end(g)
	}
	db.wmu.Unlock()
}

// Expected is a write announced to the group commit (Expect).
type Expected struct {
	db   *DB
	done atomic.Bool
}

// Expect announces a write on its way to WriteGroup — one whose signature
// is being checked, say — so that a shared transaction whose writes are
// done waits for it (at most maxLinger) instead of committing without it:
// under load, one commit then takes the writes in flight. The write arrives
// with (*Expected).WriteGroup or gives up with Cancel; call Cancel on every
// path (it does nothing after WriteGroup), or a transaction lingers for
// nothing until maxLinger.
func (db *DB) Expect() *Expected {
	db.expected.Add(1)
	return &Expected{db: db}
}

// WriteGroup is (*DB).WriteGroup for the expected write.
func (e *Expected) WriteGroup(fn func(tx *sql.Tx) error) error {
	db := e.db
	db.waiting.Add(1)
	if e.done.CompareAndSwap(false, true) {
		db.expected.Add(-1)
	}
	return db.writeGroup(fn)
}

// Cancel says the expected write will not come (it was rejected before
// its transaction). It does nothing once the write arrived.
func (e *Expected) Cancel() {
	if e.done.CompareAndSwap(false, true) {
		e.db.expected.Add(-1)
		e.db.flushLingering()
	}
}

// run calls fn, turning a panic into an error (and returning the panic
// value to re-raise once the write lock is released).
func run(fn func() error) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked, err = p, fmt.Errorf("hubdb: write panicked: %v", p)
		}
	}()
	return nil, fn()
}

// end commits (or, when broken or empty, rolls back) g, runs its writes'
// hooks and its releases, and closes done. The caller holds wmu.
func (db *DB) end(g *group) {
	db.cur.Store(nil)
	db.lingers.Store(false)
	if g.linger != nil {
		g.linger.Stop()
	}
	switch {
	case g.broken != nil:
		_ = g.tx.Rollback()
		g.err = g.broken
	case len(g.writes) == 0:
		g.err = g.tx.Rollback()
		if errors.Is(g.err, sql.ErrTxDone) {
			g.err = nil
		}
	default:
		if g.err = g.tx.Commit(); g.err == nil {
			db.commits.Add(1)
			db.committed.Add(int64(len(g.writes)))
		}
	}
	for _, w := range g.writes {
		if g.err == nil {
			for _, f := range w.commit {
				f()
			}
		} else {
			runAbort(w)
		}
	}
	for i := len(g.holds) - 1; i >= 0; i-- {
		g.holds[i]()
	}
	close(g.done)
}

// runAbort runs a write's abort hooks, newest first.
func runAbort(w *pending) {
	for i := len(w.abort) - 1; i >= 0; i-- {
		w.abort[i]()
	}
	w.abort, w.commit = nil, nil
}

// OnCommit registers f to run once the transaction of the write running on
// tx has committed — in the order writes (and their calls) came, before the
// next transaction begins — and never if the write rolls back. Call it
// from inside the write function.
func (db *DB) OnCommit(tx *sql.Tx, f func()) {
	if w := db.running(tx); w != nil {
		w.commit = append(w.commit, f)
	}
}

// OnAbort registers f to run if the write running on tx does not commit:
// its function failed, or the shared transaction did. Hooks run newest
// first, before the next transaction begins. Call it from inside the write
// function.
func (db *DB) OnAbort(tx *sql.Tx, f func()) {
	if w := db.running(tx); w != nil {
		w.abort = append(w.abort, f)
	}
}

// Hold registers release to run when the transaction of tx has ended
// (after every write's hooks), once per key: it returns false, registering
// nothing, when key is held by this transaction already. A write takes a
// lock the other writes of its shared transaction may need (a room) with
// Hold, so that they reuse it instead of waiting for a commit that waits
// for them. Call it from inside the write function.
func (db *DB) Hold(tx *sql.Tx, key any, release func()) bool {
	g := db.cur.Load()
	if g == nil || g.tx != tx {
		return false
	}
	if g.held[key] {
		return false
	}
	if g.held == nil {
		g.held = map[any]bool{}
	}
	g.held[key] = true
	g.holds = append(g.holds, release)
	return true
}

// Holds reports whether the transaction of tx holds key (Hold).
func (db *DB) Holds(tx *sql.Tx, key any) bool {
	g := db.cur.Load()
	return g != nil && g.tx == tx && g.held[key]
}

func (db *DB) running(tx *sql.Tx) *pending {
	if g := db.cur.Load(); g != nil && g.tx == tx {
		return g.running
	}
	return nil
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
// one prepared now for this transaction only. It closes with tx. Within a
// transaction the statement is made once per query and reused.
func (db *DB) Stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	g := db.cur.Load()
	if g == nil || g.tx != tx {
		return db.txStmt(ctx, tx, query)
	}
	if st := g.stmts[query]; st != nil {
		return st, nil
	}
	st, err := db.txStmt(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	if g.stmts == nil {
		g.stmts = map[string]*sql.Stmt{}
	}
	g.stmts[query] = st
	return st, nil
}

// txStmt makes query a statement of tx (see Stmt).
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	db.mu.Lock()
	st, ok := db.stmts[query]
	db.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// exec runs query in g's transaction (see Stmt). The caller holds wmu.
func (db *DB) exec(ctx context.Context, g *group, query string) (sql.Result, error) {
	st, err := db.Stmt(ctx, g.tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx)
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

// QueryPlan returns the plan SQLite chooses for query with args on the
// read pool (EXPLAIN QUERY PLAN), its steps' details joined by "; ": what a
// test reads to hold a query to the index it was written for.
func (db *DB) QueryPlan(ctx context.Context, query string, args ...any) (string, error) {
	rows, err := db.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "; "), rows.Err()
}

// Close commits a transaction still open for expected writes and closes
// both pools.
func (db *DB) Close() error {
	db.wmu.Lock()
	if g := db.cur.Load(); g != nil && g.running == nil {
		db.end(g)
	}
	db.wmu.Unlock()
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
