package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"apconnect/host/identity"
	"apconnect/host/internal/sqlitedb"
)

// DefaultRecordsPerRoom is the record window kept per room when Options
// leaves it zero (config.DefaultRecordsPerRoom).
const DefaultRecordsPerRoom = 1000

// DefaultReaders is the size of the read pool when Options leaves it zero.
const DefaultReaders = 4

// Options configure Open.
type Options struct {
	// Dir is the state directory; the database is Dir/agents/<id>.db. It is
	// created (mode 0700) when missing. Required.
	Dir string
	// AgentID is the Agent ID the database belongs to. Required.
	AgentID string
	// RecordsPerRoom is how many verified records (and timeline items) are
	// kept per room; older ones are pruned as new ones arrive
	// (DefaultRecordsPerRoom when zero).
	RecordsPerRoom int
	// Readers is the size of the read pool (DefaultReaders when zero).
	Readers int
}

// Store is the durable state of one Agent ID. It is safe for concurrent use
// by many goroutines, and several processes may open the same file.
type Store struct {
	path    string
	agentID string
	window  int64
	w       *dbConn
	r       *dbConn
}

// dbConn is a pool with a cache of prepared statements.
type dbConn struct {
	db     *sql.DB
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	wanted map[string]bool
}

// cached returns the prepared statement of a query, or nil when it is not
// prepared yet.
func (d *dbConn) cached(query string) *sql.Stmt {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stmts[query]
}

// stmt returns the prepared statement of a query, preparing it on the pool
// when needed. It must not be called while the caller holds a connection
// of a single-connection pool (a write transaction): preparing would wait
// for that connection.
func (d *dbConn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := d.cached(query); st != nil {
		return st, nil
	}
	st, err := d.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stmts == nil {
		st.Close()
		return nil, errors.New("store: closed")
	}
	if prev, ok := d.stmts[query]; ok {
		st.Close()
		return prev, nil
	}
	d.stmts[query] = st
	return st, nil
}

// want remembers a query used inside a transaction before it was prepared,
// to prepare it once the transaction has released its connection.
func (d *dbConn) want(query string) {
	d.mu.Lock()
	if d.wanted == nil {
		d.wanted = map[string]bool{}
	}
	d.wanted[query] = true
	d.mu.Unlock()
}

// prepareWanted prepares the queries remembered by want.
func (d *dbConn) prepareWanted(ctx context.Context) {
	d.mu.Lock()
	var qs []string
	for q := range d.wanted {
		qs = append(qs, q)
	}
	d.wanted = nil
	d.mu.Unlock()
	for _, q := range qs {
		_, _ = d.stmt(ctx, q)
	}
}

func (d *dbConn) close() error {
	d.mu.Lock()
	for _, st := range d.stmts {
		st.Close()
	}
	d.stmts = nil
	d.mu.Unlock()
	return d.db.Close()
}

// FileName returns the database file name of an Agent ID inside
// Dir/agents: the base64url key part of the Agent ID plus ".db".
func FileName(agentID string) (string, error) {
	if !identity.ValidAgentID(agentID) {
		return "", fmt.Errorf("store: invalid Agent ID %q", agentID)
	}
	return strings.TrimPrefix(agentID, identity.AgentIDPrefix) + ".db", nil
}

// Open opens (creating when needed) the database of opts.AgentID and applies
// every pending migration. It refuses a database of another Agent ID or one
// written by a newer apconnect.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("store: a state directory is required")
	}
	name, err := FileName(opts.AgentID)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Join(opts.Dir, "agents"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	path := filepath.Join(dir, name)
	window := int64(opts.RecordsPerRoom)
	if window <= 0 {
		window = DefaultRecordsPerRoom
	}
	n := opts.Readers
	if n <= 0 {
		n = DefaultReaders
	}
	s := &Store{path: path, agentID: opts.AgentID, window: window}
	pools, err := sqlitedb.Open(ctx, path, n, func(w *sql.DB) error {
		s.w = &dbConn{db: w, stmts: map[string]*sql.Stmt{}}
		return s.migrate(ctx)
	}, writerTempStore)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	s.r = &dbConn{db: pools.Reader, stmts: map[string]*sql.Stmt{}}
	if err := os.Chmod(path, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	return s, nil
}

// writerTempStore keeps the writer's temporary files in memory. The one
// that matters is the statement journal: a statement that writes several
// rows and may abort (the envelope index takes 64 rows per INSERT, under a
// foreign key) journals the pages it changes, and past 64 KiB SQLite
// spilled that journal to a temporary file — a write system call per page,
// a third of the index's cost on a catch-up sync. The journal only undoes
// one statement inside its transaction; the database's own WAL and its
// durability are unchanged.
const writerTempStore = "temp_store(MEMORY)"

// Path returns the database file's absolute path.
func (s *Store) Path() string { return s.path }

// AgentID returns the Agent ID the store belongs to.
func (s *Store) AgentID() string { return s.agentID }

// Window returns the number of records kept per room.
func (s *Store) Window() int64 { return s.window }

// Close closes both pools.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.close())
	}
	errs = append(errs, s.w.close())
	return errors.Join(errs...)
}

// Q runs queries: on the read pool (Store.Read), inside a read snapshot
// (Store.View) or inside a write transaction (Tx embeds it).
type Q struct {
	d      *dbConn
	tx     *sql.Tx
	window int64
	stmts  *txStmts // the statements of a write transaction, by query
}

// txStmts are the statements a write transaction made, reused for its
// later queries (a batch of a sync runs the same insert a thousand times).
type txStmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// Tx is a write transaction: every read method of Q plus the writes.
type Tx struct {
	Q
}

// Read returns a Q on the read pool. Each query sees the last committed
// state; use View when several queries must agree.
func (s *Store) Read() Q { return Q{d: s.r, window: s.window} }

// View runs fn in a read transaction: every query inside sees one snapshot.
func (s *Store) View(ctx context.Context, fn func(q Q) error) error {
	tx, err := s.r.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() {
		_ = tx.Rollback()
		s.r.prepareWanted(ctx)
	}()
	return fn(Q{d: s.r, tx: tx, window: s.window})
}

// Write runs fn in an IMMEDIATE transaction on the writer connection and
// commits when fn returns nil; an error (or panic) rolls back. fn holds the
// write lock of the database for its whole duration, across processes: keep
// work that needs no state (parsing, signature checks) outside it.
func (s *Store) Write(ctx context.Context, fn func(tx *Tx) error) (err error) {
	tx, err := s.w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		s.w.prepareWanted(ctx)
	}()
	if err := fn(&Tx{Q{d: s.w, tx: tx, window: s.window, stmts: &txStmts{}}}); err != nil {
		if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, rbErr)
		}
		return err
	}
	return tx.Commit()
}

// prepared returns a statement for query usable by q: the cached prepared
// statement (bound to the transaction when q has one), or, inside a
// transaction when the query was never prepared, a statement prepared on
// the transaction's connection for this use (the pool prepares it for later
// once the transaction ends).
func (q Q) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if q.tx == nil {
		return q.d.stmt(ctx, query)
	}
	if q.stmts == nil {
		return q.txStmt(ctx, query)
	}
	q.stmts.mu.Lock()
	defer q.stmts.mu.Unlock()
	if st := q.stmts.m[query]; st != nil {
		return st, nil
	}
	st, err := q.txStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if q.stmts.m == nil {
		q.stmts.m = map[string]*sql.Stmt{}
	}
	q.stmts.m[query] = st
	return st, nil
}

// txStmt makes a statement of query for q's transaction (it closes with
// the transaction).
func (q Q) txStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := q.d.cached(query); st != nil {
		return q.tx.StmtContext(ctx, st), nil
	}
	q.d.want(query)
	return q.tx.PrepareContext(ctx, query)
}

func (q Q) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (q Q) queryRow(ctx context.Context, query string, args ...any) *row {
	st, err := q.prepared(ctx, query)
	if err != nil {
		return &row{err: err}
	}
	return &row{r: st.QueryRowContext(ctx, args...)}
}

func (q Q) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := q.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// execN runs a statement and returns the number of rows it changed.
func (q Q) execN(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// row is a *sql.Row that may carry a preparation error.
type row struct {
	r   *sql.Row
	err error
}

// Scan scans the row, or returns the preparation error.
func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dest...)
}

// Errors of the store.
var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: the room is no longer at the position a batch was
	// verified against (another process or goroutine applied records
	// first); verify again from the current state.
	ErrConflict = errors.New("store: room moved since the batch was verified")
	// ErrRoomFailed: the room is marked as failing verification; only a
	// resync batch may apply records to it.
	ErrRoomFailed = errors.New("store: room is marked as failing verification")
	// ErrRollback: a profile older (smaller nonce) than the pinned one.
	ErrRollback = errors.New("store: profile is older than the pinned one (rollback refused)")
)

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
