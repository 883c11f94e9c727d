package engine

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/identity"
	"apconnect/host/store"
)

// DefaultClaimLease is how long an inbox claim holds.
const DefaultClaimLease = 60 * time.Second

// Options configure an Engine.
type Options struct {
	// Config is the operator configuration. Required.
	Config *config.Config
	// Identity names the identity to act as ("" for the default one).
	Identity string
	// Signer is that identity's key (keystore.Key implements it).
	// Required; the engine hands it only to the signing pipeline and to the
	// service clients, which mint request JWTs with it.
	Signer identity.Signer
	// Clock is the time source (time.Now when nil).
	Clock func() time.Time
	// Logger receives the logs (discarded when nil).
	Logger *slog.Logger
	// HTTPClient returns the HTTP client for a configured origin; by
	// default client.NewHTTPClient with the origin's CA file. Tests use it
	// to put a proxy in front of a hub. The engine wraps its transport in
	// the gate.
	HTTPClient func(origin string, roots *x509.CertPool) (*http.Client, error)
	// Client tunes the service clients.
	Client client.Options
	// ClaimLease is the inbox claim lease (DefaultClaimLease when zero).
	ClaimLease time.Duration
}

// Engine is the protocol-neutral core of the connector of one Agent ID: the
// state (host/store), the signing pipeline (one nonce sequence, the outbox,
// the submitters each protocol module registers), the gate every outbound
// request and signature passes, the inbox, the write budgets and the
// background work they need. Protocol modules (host/connector/…) are built
// on it; it imports none of them.
type Engine struct {
	// Config is the operator configuration and Ident the identity acted as.
	Config *config.Config
	Ident  *config.Identity
	// Self is the Agent ID the engine signs as.
	Self string
	// Store is the Agent ID's state.
	Store *store.Store
	// Log receives the logs.
	Log *slog.Logger

	opts    Options
	clock   func() time.Time
	signer  identity.Signer
	gate    *Gate
	budgets budgets
	wake    *Notifier

	// submitLocks serialize signing and submitting the agent's writes to
	// one service origin in this process, so each service receives its
	// nonces in increasing order; writes to other services do not wait for
	// a slow one.
	submitLocks KeyedLocks
	submitters  map[string]registration // by outbox kind

	httpMu  sync.Mutex
	clients map[string]*http.Client // by origin, gated

	bgMu     sync.Mutex
	bgCancel context.CancelFunc
	bgDone   chan struct{}
}

// New opens the Agent ID's state. It does no network I/O.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Config == nil {
		return nil, errors.New("engine: a configuration is required")
	}
	if opts.Signer == nil {
		return nil, errors.New("engine: a signer is required")
	}
	ident, err := opts.Config.Identity(opts.Identity)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ClaimLease <= 0 {
		opts.ClaimLease = DefaultClaimLease
	}
	if opts.HTTPClient == nil {
		timeout := opts.Client.Timeout
		opts.HTTPClient = func(_ string, roots *x509.CertPool) (*http.Client, error) {
			return client.NewHTTPClient(roots, timeout), nil
		}
	}
	if opts.Client.Clock == nil {
		opts.Client.Clock = opts.Clock
	}
	if opts.Client.Logger == nil {
		opts.Client.Logger = opts.Logger
	}
	gate, err := newGate(opts.Config, ident)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	st, err := store.Open(ctx, store.Options{Dir: opts.Config.StateDir(), AgentID: opts.Signer.AgentID(),
		RecordsPerRoom: opts.Config.State.RecordsPerRoom})
	if err != nil {
		return nil, err
	}
	e := &Engine{Config: opts.Config, Ident: ident, Self: opts.Signer.AgentID(), Store: st, Log: opts.Logger,
		opts: opts, clock: opts.Clock, signer: opts.Signer, gate: gate, wake: NewNotifier(),
		submitters: map[string]registration{}, clients: map[string]*http.Client{}}
	e.opts.Client.Gate = e.gate.requestAllowed
	return e, nil
}

// Now returns the engine's clock.
func (e *Engine) Now() time.Time { return e.clock() }

// NowMS returns the clock in Unix ms.
func (e *Engine) NowMS() int64 { return e.clock().UnixMilli() }

// Notify wakes everything waiting for local state to change (inbox long
// polls, change notifications).
func (e *Engine) Notify() { e.wake.Notify() }

// Changed returns a channel closed at the next Notify.
func (e *Engine) Changed() <-chan struct{} { return e.wake.Wait() }

// ClaimLease is how long an inbox claim holds.
func (e *Engine) ClaimLease() time.Duration { return e.opts.ClaimLease }

// ClientOptions are the options every service client is built with: the
// engine's clock and logger, and the gate, which refuses a request (before
// its JWT is minted) whose context does not carry a grant for its origin.
func (e *Engine) ClientOptions() client.Options { return e.opts.Client }

// Signer is the identity's signer for the service clients, which mint
// request JWTs with it. Events are signed only by the engine's pipeline
// (Sign), which allocates their nonce.
func (e *Engine) Signer() identity.Signer { return e.signer }

// HTTPClient returns the HTTP client of a configured origin (normalized):
// with the origin's CA file when its [[hosts]] entry names one, and a
// transport that lets through only requests whose context carries a grant
// for that origin (Need), and discovery. An origin the operator did not
// configure is host_not_allowed.
func (e *Engine) HTTPClient(origin string) (*http.Client, error) {
	norm, err := e.gate.configured(origin)
	if err != nil {
		return nil, err
	}
	e.httpMu.Lock()
	defer e.httpMu.Unlock()
	if hc, ok := e.clients[norm]; ok {
		return hc, nil
	}
	var roots *x509.CertPool
	if h := e.gate.hostEntry(norm); h != nil {
		if roots, err = e.Config.CAPool(h); err != nil {
			return nil, fmt.Errorf("origin %s: %w", norm, err)
		}
	}
	hc, err := e.opts.HTTPClient(norm, roots)
	if err != nil {
		return nil, fmt.Errorf("origin %s: %w", norm, err)
	}
	gated := *hc
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	gated.Transport = &gatedTransport{origin: norm, next: next}
	e.clients[norm] = &gated
	return &gated, nil
}

// Start begins the engine's background work: resubmission of pending
// outbox entries through the registered submitters and the expiry of inbox
// claims and deferrals. It returns at once; Close stops it.
func (e *Engine) Start(ctx context.Context) {
	e.bgMu.Lock()
	defer e.bgMu.Unlock()
	if e.bgCancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	e.bgCancel = cancel
	e.bgDone = make(chan struct{})
	go func() {
		defer close(e.bgDone)
		var wg sync.WaitGroup
		wg.Go(func() { e.outboxLoop(ctx) })
		wg.Go(func() { e.maintenanceLoop(ctx) })
		wg.Wait()
	}()
}

// Stop ends the background work started by Start and waits for it.
func (e *Engine) Stop() {
	e.bgMu.Lock()
	cancel, done := e.bgCancel, e.bgDone
	e.bgCancel = nil
	e.bgMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Close stops the background work, releases the kept-alive connections of
// every HTTP client (so a service sees them closed now rather than when
// they time out) and closes the state.
func (e *Engine) Close() error {
	e.Stop()
	e.httpMu.Lock()
	for _, hc := range e.clients {
		hc.CloseIdleConnections()
	}
	e.httpMu.Unlock()
	return e.Store.Close()
}

// maintenanceLoop releases expired inbox claims and deferrals (waking
// long-pollers), forgets stale sessions and prunes closed outbox entries.
func (e *Engine) maintenanceLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var n int
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := e.NowMS()
		var released int64
		if next, err := e.Store.Read().NextExpiry(ctx); err == nil && next > 0 && next <= now {
			_ = e.Store.Write(ctx, func(tx *store.Tx) error {
				var err error
				released, err = tx.ReleaseExpired(ctx, now)
				return err
			})
		}
		if released > 0 {
			e.Notify()
		}
		n++
		if n%3600 == 0 {
			_ = e.Store.Write(ctx, func(tx *store.Tx) error {
				if _, err := tx.ForgetSessions(ctx, now); err != nil {
					return err
				}
				return tx.PruneOutbox(ctx, now-7*24*3600_000)
			})
		}
	}
}
