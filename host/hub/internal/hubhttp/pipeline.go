package hubhttp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/identity"
)

// Default live-write parameters (Agent Identity 6.1, 6.2).
const (
	DefaultWindow   = 300 * time.Second
	DefaultMaxBody  = 512 << 10
	pruneEveryNth   = 1024
	maxReservations = 8
)

// Pipeline runs live writes (Agent Identity 6.1) for every protocol the hub
// serves, in the order the spec fixes:
//
//  1. steps 1–5: strict parsing, the closed envelope and event, the event
//     hash, the actor key and the strict signature (identity.ParseEnvelope),
//     outside any transaction;
//  2. the handler's Precheck: cheap, stateless checks that an envelope
//     accepted at this endpoint always passes (protocol, type, path);
//
// then, inside one IMMEDIATE transaction, so that concurrent writes see each
// other's nonces and state:
//
//  3. step 6: exact resubmission — an envelope whose hash is in
//     accepted_envelopes is answered by the handler's Replay, with no time or
//     nonce check and no state change;
//  4. step 7: created_at within ±Window of the hub clock;
//  5. step 8: nonce greater than the effective maximum: the actor's nonce
//     cache entry while it is valid, and the handler's durable NonceFloor;
//     rejections carry Max-Seen-Nonce;
//  6. step 9: the handler's Accept validates the envelope under its protocol
//     and commits its state change in the same transaction; the pipeline
//     records the envelope in accepted_envelopes first (so protocol tables
//     can reference it) and updates the nonce cache after.
//
// Accepted writes answer with Max-Seen-Nonce as well.
type Pipeline struct {
	DB *hubdb.DB
	// Clock is the hub clock; accepted_at and the window use it.
	Clock func() time.Time
	// Window is the live-write time window (DefaultWindow when zero).
	Window time.Duration
	// NonceTTL is how long an actor's cached maximum nonce stays valid after
	// its latest acceptance; it must be at least Window (2 × Window when
	// zero, as SDK 0.12.6: an envelope created up to one window ahead of the
	// hub clock stays live for two windows after its acceptance, and its
	// nonce must be remembered that long). An entry is still valid at its
	// expiry millisecond.
	NonceTTL time.Duration
	// MaxBody is the body limit of Handler when it is given 0.
	MaxBody int64
	// Limiter backs (*Write).RateLimit.
	Limiter *RateLimiter
	// Logger receives one line per write (never bodies or tokens).
	Logger *slog.Logger

	writes      atomic.Int64
	verifyCount atomic.Int64
	verifyNanos atomic.Int64
}

// VerifyStats reports how many envelopes the pipeline has verified (Agent
// Identity 6.1 steps 3–5: the event hash over JCS and the strict Ed25519
// signature) and the total time spent doing so. Benchmarks use it to report
// the share of time spent verifying signatures.
func (p *Pipeline) VerifyStats() (count int64, total time.Duration) {
	return p.verifyCount.Load(), time.Duration(p.verifyNanos.Load())
}

// WriteHandler is what a protocol write endpoint plugs into the Pipeline.
type WriteHandler interface {
	// Precheck runs before the resubmission lookup on an authentic envelope.
	// It may reject only what an envelope accepted at this endpoint could
	// never be (wrong protocol or type, path/room mismatch), since an exact
	// resubmission must still be answered.
	Precheck(r *http.Request, env *identity.Envelope) error
	// NonceFloor returns a durable value the nonce must exceed, in addition
	// to the nonce cache (0 for none). Agent Profile returns the nonce of
	// the actor's latest accepted profile.update.
	NonceFloor(ctx context.Context, tx *sql.Tx, env *identity.Envelope) (int64, error)
	// Accept applies the protocol's validation to a fresh envelope and
	// commits its state change through w.Tx. A returned error rolls back
	// the whole write; use *Error for rejections.
	Accept(ctx context.Context, w *Write) (*Result, error)
	// Replay answers an exact resubmission of an envelope this endpoint
	// accepted earlier (the original record, or what the protocol says).
	Replay(ctx context.Context, tx *sql.Tx, acc *Accepted) (*Result, error)
}

// Result is a successful write response.
type Result struct {
	// Status defaults to 200.
	Status int
	// Body is sent as JSON (json.RawMessage is sent as is).
	Body any
	// Header holds extra response headers (e.g. Location).
	Header http.Header
	// AfterCommit, when set by Accept, runs once the write has committed
	// (never for a rolled-back write or a replay), before the response is
	// sent and before the next transaction begins (the writes of one
	// transaction run theirs in order): the place to fan a new record out
	// to live subscribers.
	AfterCommit func()
}

// Accepted is a row of accepted_envelopes: an envelope the hub accepted.
type Accepted struct {
	Hash       string
	Protocol   string
	Type       string
	Actor      string
	Nonce      int64
	CreatedAt  int64
	AcceptedAt int64
	// Envelope is the compacted envelope JSON as it was submitted.
	Envelope json.RawMessage
}

// Write is one live write inside its transaction, handed to Accept.
type Write struct {
	Tx       *sql.Tx
	Envelope *identity.Envelope
	// Raw is the compacted envelope JSON exactly as submitted; it is what
	// accepted_envelopes stores and what history endpoints return.
	Raw json.RawMessage
	// Now is the hub clock at acceptance; AcceptedAt is Now in Unix ms.
	Now        time.Time
	AcceptedAt int64
	Request    *http.Request

	p            *Pipeline
	reservations []*Reservation
	aborts       []func()
}

// OnAbort registers fn to run, once, if this write does not commit: Accept
// returned an error, the commit failed, or something panicked. A handler
// that changes memory inside Accept registers its undo here. Hooks run in
// reverse order of registration, before the next transaction begins.
func (w *Write) OnAbort(fn func()) { w.aborts = append(w.aborts, fn) }

// Hold takes a lock for the rest of this write's transaction, which other
// writes may share: release runs once the transaction has ended and every
// write's hooks ran. It returns false, registering nothing, when the
// transaction holds key already (an earlier write of it took the lock: this
// one may use what it protects, since the writes of a transaction run one
// after the other).
func (w *Write) Hold(key any, release func()) bool { return w.p.DB.Hold(w.Tx, key, release) }

// Holds reports whether this write's transaction holds key.
func (w *Write) Holds(key any) bool { return w.p.DB.Holds(w.Tx, key) }

// RateLimit counts this write against a quota kept under key (for example
// "agent-discourse/1.0|message|did:agent:…"). When the quota is exhausted it
// returns a rate_limited *Error with Retry-After; return it from Accept.
// The unit is given back if the write is rejected later.
func (w *Write) RateLimit(key string, rate Rate) error {
	if w.p.Limiter == nil || len(w.reservations) >= maxReservations {
		return nil
	}
	res, err := w.p.Limiter.Reserve(key, rate, w.Now)
	if err != nil {
		return err
	}
	if res != nil {
		w.reservations = append(w.reservations, res)
	}
	return nil
}

// abort gives back the quota units and runs the OnAbort hooks.
func (w *Write) abort() {
	for _, r := range w.reservations {
		r.Cancel()
	}
	w.reservations = nil
	for i := len(w.aborts) - 1; i >= 0; i-- {
		w.aborts[i]()
	}
	w.aborts = nil
}

// Outcome is what Submit did.
type Outcome struct {
	Result *Result
	// Envelope is the verified envelope.
	Envelope *identity.Envelope
	// Replayed is true for an exact resubmission.
	Replayed bool
	// MaxSeenNonce is the effective maximum nonce after the write (0 when
	// the hub knows none, which only a replay can report).
	MaxSeenNonce int64
}

func (p *Pipeline) window() time.Duration {
	if p.Window > 0 {
		return p.Window
	}
	return DefaultWindow
}

func (p *Pipeline) nonceTTL() time.Duration {
	if p.NonceTTL <= 0 {
		return 2 * p.window()
	}
	return max(p.NonceTTL, p.window())
}

// Handler returns the HTTP handler of a write endpoint: it reads the body
// (at most maxBody bytes, or p.MaxBody when 0), runs Submit and writes the
// result or the error, with Max-Seen-Nonce.
func (p *Pipeline) Handler(h WriteHandler, maxBody int64) http.Handler {
	if maxBody <= 0 {
		maxBody = p.MaxBody
	}
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		growStack(0) // see growStack: the stack grows once, not at every doubling
		body, err := ReadBody(w, r, maxBody)
		if err != nil {
			WriteError(w, r, p.Logger, err)
			return
		}
		out, err := p.Submit(r.Context(), r, body, h)
		if err != nil {
			WriteError(w, r, p.Logger, err)
			return
		}
		for k, vs := range out.Result.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if out.MaxSeenNonce > 0 {
			w.Header().Set(HeaderMaxSeenNonce, strconv.FormatInt(out.MaxSeenNonce, 10))
		}
		status := out.Result.Status
		if status == 0 {
			status = http.StatusOK
		}
		WriteJSON(w, status, out.Result.Body)
	})
}

// Submit runs the pipeline on a request body. Rejections are *Error values
// (identity codes, nonce_not_greater with its header, or the handler's).
func (p *Pipeline) Submit(ctx context.Context, r *http.Request, body []byte, h WriteHandler) (*Outcome, error) {
	// The write is announced to the group commit while its signature is
	// checked: a shared transaction about to commit waits for it.
	exp := p.DB.Expect()
	defer exp.Cancel()
	env, err := p.verify(body)
	if err != nil {
		p.logReject(ctx, nil, err)
		return nil, AsError(err)
	}
	if err := h.Precheck(r, env); err != nil {
		p.logReject(ctx, env, err)
		return nil, err
	}
	raw, err := compactJSON(body)
	if err != nil {
		return nil, AsError(err)
	}
	out := &Outcome{Envelope: env}
	// Concurrent writes share transactions (group commit). Their statements
	// are not cancelled with the request: an interrupt would roll back the
	// other writes of the transaction too, and a write either commits
	// whole or not at all anyway (the client resubmits and is answered).
	wctx := context.WithoutCancel(ctx)
	err = exp.WriteGroup(func(tx *sql.Tx) error {
		return p.apply(wctx, tx, r, env, raw, h, out)
	})
	if err != nil {
		p.logReject(ctx, env, err)
		return nil, AsError(err)
	}
	if p.Logger != nil {
		msg := "write accepted"
		if out.Replayed {
			msg = "exact resubmission answered"
		}
		p.Logger.LogAttrs(ctx, slog.LevelInfo, msg,
			slog.String("protocol", env.Event.Protocol), slog.String("type", env.Event.Type),
			slog.String("actor", env.Event.Actor), slog.Int64("nonce", env.Event.Nonce),
			slog.String("hash", env.Hash))
	}
	return out, nil
}

// apply runs steps 6–9 of a verified envelope in the write transaction tx
// and fills out.
func (p *Pipeline) apply(ctx context.Context, tx *sql.Tx, r *http.Request, env *identity.Envelope, raw []byte, h WriteHandler, out *Outcome) error {
	now := p.Clock()
	nowMS := now.UnixMilli()
	// One round trip: the accepted envelope with this hash, if any, and the
	// actor's cached maximum nonce.
	acc, cached, err := scanAcceptedAndNonce(p.DB.QueryRow(ctx, tx, lookupAcceptedNonceSQL, env.Event.Actor, nowMS, env.Hash), env.Hash)
	if err != nil {
		return err
	}
	if acc != nil {
		res, err := h.Replay(ctx, tx, acc)
		if err != nil {
			return err
		}
		out.Result, out.Replayed = res, true
		out.MaxSeenNonce, err = p.effectiveMax(ctx, tx, h, env, cached)
		return err
	}
	if d := nowMS - env.Event.CreatedAt; d > p.window().Milliseconds() || -d > p.window().Milliseconds() {
		return Errorf(identity.CodeTimestampOutOfWindow,
			"created_at %d is %s from the hub clock; the live-write window is ±%s",
			env.Event.CreatedAt, time.Duration(d)*time.Millisecond, p.window()).
			WithData("created_at", env.Event.CreatedAt).
			WithData("server_time", nowMS).
			WithData("window_ms", p.window().Milliseconds())
	}
	eff, err := p.effectiveMax(ctx, tx, h, env, cached)
	if err != nil {
		return err
	}
	if env.Event.Nonce <= eff {
		return NonceNotGreater(env.Event.Nonce, eff)
	}
	if _, err := p.DB.Exec(ctx, tx, insertAcceptedSQL,
		env.Hash, env.Event.Protocol, env.Event.Type, env.Event.Actor, env.Event.Nonce,
		env.Event.CreatedAt, nowMS, raw); err != nil {
		return err
	}
	write := &Write{Tx: tx, Envelope: env, Raw: raw, Now: now, AcceptedAt: nowMS, Request: r, p: p}
	// A write that does not commit (an error, a panic, a failed commit)
	// gives back what Accept took.
	p.DB.OnAbort(tx, write.abort)
	res, err := h.Accept(ctx, write)
	if err != nil {
		return err
	}
	if res == nil {
		return errors.New("hubhttp: WriteHandler.Accept returned no result")
	}
	if res.AfterCommit != nil {
		p.DB.OnCommit(tx, res.AfterCommit)
	}
	if _, err := p.DB.Exec(ctx, tx, upsertNonceSQL,
		env.Event.Actor, env.Event.Nonce, nowMS+p.nonceTTL().Milliseconds()); err != nil {
		return err
	}
	if p.writes.Add(1)%pruneEveryNth == 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM nonce_cache WHERE expires_at < ?`, nowMS); err != nil {
			return err
		}
	}
	out.Result = res
	out.MaxSeenNonce = env.Event.Nonce
	return nil
}

// compactJSON returns the JSON text b without insignificant whitespace, as
// json.Compact writes it: b itself when it has none (a client's encoder
// writes none), a compacted copy otherwise. b is valid JSON (verify parsed
// it strictly), so whitespace outside a string is insignificant, and inside
// one only a space can occur unescaped.
func compactJSON(b []byte) ([]byte, error) {
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			var out bytes.Buffer
			if err := json.Compact(&out, b); err != nil {
				return nil, err
			}
			return out.Bytes(), nil
		}
	}
	return b, nil
}

// verify runs Agent Identity 6.1 steps 1–5 exactly as identity.ParseEnvelope
// does (same checks, same errors), timing the hash and signature check.
func (p *Pipeline) verify(body []byte) (*identity.Envelope, error) {
	v, err := identity.ParseStrict(body)
	if err != nil {
		// ParseEnvelope gives parse failures their invalid_event form.
		_, err = identity.ParseEnvelope(body)
		return nil, err
	}
	env, err := identity.EnvelopeFromValue(v, "")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = env.Verify()
	p.verifyNanos.Add(int64(time.Since(start)))
	p.verifyCount.Add(1)
	if err != nil {
		return nil, err
	}
	return env, nil
}

// effectiveMax is the nonce an envelope must exceed: the actor's cached
// maximum while valid (cached, 0 when none), or the handler's durable
// floor, whichever is greater.
func (p *Pipeline) effectiveMax(ctx context.Context, tx *sql.Tx, h WriteHandler, env *identity.Envelope, cached int64) (int64, error) {
	floor, err := h.NonceFloor(ctx, tx, env)
	if err != nil {
		return 0, err
	}
	return max(cached, floor), nil
}

func (p *Pipeline) logReject(ctx context.Context, env *identity.Envelope, err error) {
	if p.Logger == nil {
		return
	}
	e := AsError(err)
	if e.HTTPStatus() >= 500 {
		return // WriteError logs these with their cause
	}
	attrs := []slog.Attr{slog.String("code", e.Code), slog.String("reason", e.Message)}
	if env != nil {
		attrs = append(attrs, slog.String("protocol", env.Event.Protocol), slog.String("type", env.Event.Type),
			slog.String("actor", env.Event.Actor), slog.Int64("nonce", env.Event.Nonce))
	}
	p.Logger.LogAttrs(ctx, slog.LevelInfo, "write rejected", attrs...)
}

// Querier is what both *sql.Tx and *sql.DB offer for reads.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// The pipeline's statements, prepared once by Prepare.
const (
	lookupAcceptedSQL = `SELECT protocol, type, actor, nonce, created_at, accepted_at, envelope
		FROM accepted_envelopes WHERE hash = ?`
	cachedNonceSQL    = `SELECT max_nonce FROM nonce_cache WHERE actor = ? AND expires_at >= ?`
	insertAcceptedSQL = `INSERT INTO accepted_envelopes
		(hash, protocol, type, actor, nonce, created_at, accepted_at, envelope) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	upsertNonceSQL = `INSERT INTO nonce_cache (actor, max_nonce, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (actor) DO UPDATE SET max_nonce = excluded.max_nonce, expires_at = excluded.expires_at`
	// lookupAcceptedNonceSQL is lookupAcceptedSQL and cachedNonceSQL in
	// one row: the accepted columns are NULL when no envelope has the hash,
	// the nonce is 0 when the actor has no valid cache entry.
	lookupAcceptedNonceSQL = `SELECT a.protocol, a.type, a.actor, a.nonce, a.created_at, a.accepted_at, a.envelope,
		COALESCE((SELECT max_nonce FROM nonce_cache WHERE actor = ? AND expires_at >= ?), 0)
		FROM (SELECT 1) LEFT JOIN accepted_envelopes a ON a.hash = ?`
)

// Prepare prepares the pipeline's statements on the hub's writer (see
// hubdb.DB.Prepare); call it once before serving. Without it the pipeline
// still works, parsing its SQL in every write.
func (p *Pipeline) Prepare(ctx context.Context) error {
	return p.DB.Prepare(ctx, lookupAcceptedNonceSQL, insertAcceptedSQL, upsertNonceSQL)
}

// LookupAccepted returns the accepted envelope with this event hash, or nil.
func LookupAccepted(ctx context.Context, q Querier, hash string) (*Accepted, error) {
	return scanAccepted(q.QueryRowContext(ctx, lookupAcceptedSQL, hash), hash)
}

// scanAcceptedAndNonce reads a row of lookupAcceptedNonceSQL.
func scanAcceptedAndNonce(row *sql.Row, hash string) (*Accepted, int64, error) {
	var protocol, typ, actor sql.NullString
	var nonce, createdAt, acceptedAt sql.NullInt64
	var env []byte
	var cached int64
	if err := row.Scan(&protocol, &typ, &actor, &nonce, &createdAt, &acceptedAt, &env, &cached); err != nil {
		return nil, 0, err
	}
	if !protocol.Valid {
		return nil, cached, nil
	}
	return &Accepted{Hash: hash, Protocol: protocol.String, Type: typ.String, Actor: actor.String, Nonce: nonce.Int64,
		CreatedAt: createdAt.Int64, AcceptedAt: acceptedAt.Int64, Envelope: env}, cached, nil
}

func scanAccepted(row *sql.Row, hash string) (*Accepted, error) {
	a := &Accepted{Hash: hash}
	var env []byte
	err := row.Scan(&a.Protocol, &a.Type, &a.Actor, &a.Nonce, &a.CreatedAt, &a.AcceptedAt, &env)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a.Envelope = env
	return a, nil
}

// CachedNonce returns the actor's cached maximum nonce if its entry is still
// valid at nowMS, and 0 otherwise.
func CachedNonce(ctx context.Context, q Querier, actor string, nowMS int64) (int64, error) {
	return scanNonce(q.QueryRowContext(ctx, cachedNonceSQL, actor, nowMS))
}

func scanNonce(row *sql.Row) (int64, error) {
	var n int64
	err := row.Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// LiveNonce is the shared nonce check (Agent Identity 6.1 step 8) for a
// service that orders a live write's other checks itself (the Mail relay's
// card publication, whose SDK order puts the nonce last): inside tx, nonce
// must exceed the actor's cached maximum while it is valid
// (nonce_not_greater with Max-Seen-Nonce otherwise), and the cache then
// holds nonce for NonceTTL.
func (p *Pipeline) LiveNonce(ctx context.Context, tx *sql.Tx, actor string, nonce int64, now time.Time) error {
	nowMS := now.UnixMilli()
	cached, err := scanNonce(p.DB.QueryRow(ctx, tx, cachedNonceSQL, actor, nowMS))
	if err != nil {
		return err
	}
	if nonce <= cached {
		return NonceNotGreater(nonce, cached)
	}
	_, err = p.DB.Exec(ctx, tx, upsertNonceSQL, actor, nonce, nowMS+p.nonceTTL().Milliseconds())
	return err
}

// growStack makes the calling goroutine's stack big enough for a write in
// one step, by calling a function whose frame is 8 KiB.
//
// A write runs on a goroutine the HTTP/2 server starts for its request,
// with a small stack that the parser, the Ed25519 verification and SQLite
// then grow by doubling, copying the stack every time: about 3 % of the
// hub's CPU in the discourse write benchmark. Growing it while it is still
// nearly empty copies almost nothing; the runtime sizes the new stack to
// fit the frame (typically 16 KiB, from the per-P stack cache).
//
//go:noinline
func growStack(i byte) byte {
	var frame [8 << 10]byte
	frame[i] = i
	return frame[int(i)*7%len(frame)]
}
