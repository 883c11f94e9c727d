package hub

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/hub/internal/hubsvc"
	"apconnect/host/hub/tlsca"
	"apconnect/host/identity"
)

// Hub is a running (or ready to run) local hub.
type Hub struct {
	opts     Options
	logger   *slog.Logger
	clock    func() time.Time
	dataDir  string
	origin   string
	tls      *tlsca.Material
	db       *hubdb.DB
	listener net.Listener
	server   *http.Server
	mux      *http.ServeMux

	pipeline *hubhttp.Pipeline
	auth     *hubhttp.Authenticator
	limiter  *hubhttp.RateLimiter
	specs    []hubsvc.Spec    // services(opts), in order
	services []hubsvc.Service // built from specs, in order

	baseCtx    context.Context
	cancelBase context.CancelFunc
	// reqCtx is the base of request contexts. It outlives baseCtx during a
	// graceful shutdown, so writes in flight commit instead of failing,
	// and is cancelled once serving has stopped.
	reqCtx    context.Context
	cancelReq context.CancelFunc

	mu        sync.Mutex
	started   bool
	stopped   chan struct{}
	serveErr  error
	stopOnce  sync.Once
	closeOnce sync.Once
	closeErr  error
}

// New prepares a hub: it checks the listen address, creates the data
// directory, the CA and server certificate (reusing them when valid), opens
// and migrates hub.db, builds the services and binds the listener, so
// Origin is known before serving starts.
func New(opts Options) (*Hub, error) {
	if opts.DataDir == "" {
		return nil, errors.New("hub: a data directory is required")
	}
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	listenHost, err := checkListen(opts.Listen, opts.AllowRemote)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if err := opts.Limits.check(); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	h := &Hub{opts: opts, logger: opts.Logger, clock: opts.Clock, stopped: make(chan struct{})}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	if h.clock == nil {
		h.clock = time.Now
	}
	if h.dataDir, err = filepath.Abs(opts.DataDir); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if err := os.MkdirAll(h.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("hub: data directory: %w", err)
	}

	var extraHosts []string
	if opts.Origin != "" {
		u, err := url.Parse(opts.Origin)
		if err != nil {
			return nil, fmt.Errorf("hub: origin: %w", err)
		}
		if opts.Origin, err = identity.NormalizeOrigin(opts.Origin); err != nil {
			return nil, fmt.Errorf("hub: origin: %w", err)
		}
		extraHosts = append(extraHosts, u.Hostname())
	}
	if listenHost != "" && !isLoopback(listenHost) {
		if addr, err := netip.ParseAddr(listenHost); err != nil || !addr.IsUnspecified() {
			extraHosts = append(extraHosts, listenHost)
		}
	}
	if h.tls, err = tlsca.Ensure(h.dataDir, time.Now(), extraHosts...); err != nil {
		return nil, fmt.Errorf("hub: TLS: %w", err)
	}
	if len(h.tls.Created) > 0 {
		h.logger.Info("hub TLS material written", "dir", h.dataDir, "files", h.tls.Created)
	}

	h.specs = services(opts)
	if err := hubsvc.Check(h.specs); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	for _, s := range h.specs {
		if err := hubhttp.RegisterStatuses(s.Statuses); err != nil {
			return nil, fmt.Errorf("hub: service %s: %w", s.Name, err)
		}
	}
	ctx := context.Background()
	if h.db, err = hubdb.Open(ctx, h.dataDir, hubsvc.Groups(h.specs)...); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if h.listener, err = net.Listen("tcp", opts.Listen); err != nil {
		h.db.Close()
		return nil, fmt.Errorf("hub: listen: %w", err)
	}
	h.origin = opts.Origin
	if h.origin == "" {
		if h.origin, err = identity.NormalizeOrigin(deriveOrigin(listenHost, h.listener.Addr())); err != nil {
			h.listener.Close()
			h.db.Close()
			return nil, fmt.Errorf("hub: origin: %w", err)
		}
	}
	h.baseCtx, h.cancelBase = context.WithCancel(context.Background())
	h.reqCtx, h.cancelReq = context.WithCancel(context.Background())
	if err := h.buildServices(); err != nil {
		h.cancelBase()
		h.cancelReq()
		h.listener.Close()
		h.db.Close()
		return nil, err
	}
	h.server = &http.Server{
		Handler:           hubhttp.Recover(h.logger, h.mux),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{h.tls.Certificate}},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(h.logger.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return h.reqCtx },
	}
	return h, nil
}

// check validates the limits that must hold together.
func (l Limits) check() error {
	if l.LiveWriteWindow < 0 || l.NonceCacheTTL < 0 || l.TokenMaxLifetime < 0 || l.TokenClockSkew < 0 || l.MaxWriteBody < 0 {
		return errors.New("limits must not be negative")
	}
	window := l.LiveWriteWindow
	if window == 0 {
		window = hubhttp.DefaultWindow
	}
	if l.NonceCacheTTL != 0 && l.NonceCacheTTL < window {
		return fmt.Errorf("NonceCacheTTL %s is shorter than the live-write window %s (Agent Identity 6.2)", l.NonceCacheTTL, window)
	}
	return nil
}

// buildServices creates the shared plumbing, builds every service of
// h.specs on it and mounts their routes.
func (h *Hub) buildServices() error {
	l := h.opts.Limits
	h.limiter = hubhttp.NewRateLimiter()
	h.auth = &hubhttp.Authenticator{
		Audience:    h.origin,
		Clock:       h.clock,
		MaxLifetime: l.TokenMaxLifetime,
		Skew:        l.TokenClockSkew,
		Logger:      h.logger,
	}
	h.pipeline = &hubhttp.Pipeline{
		DB:       h.db,
		Clock:    h.clock,
		Window:   l.LiveWriteWindow,
		NonceTTL: l.NonceCacheTTL,
		MaxBody:  l.MaxWriteBody,
		Limiter:  h.limiter,
		Logger:   h.logger,
	}
	if err := h.pipeline.Prepare(context.Background()); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	h.mux = http.NewServeMux()
	h.mux.Handle("/", hubhttp.NotFound(h.logger))
	protocols := h.Protocols()
	for _, spec := range h.specs {
		svc, err := spec.New(hubsvc.Env{
			Origin: h.origin, DB: h.db, Pipeline: h.pipeline, Auth: h.auth, Clock: h.clock,
			Context: h.baseCtx, Logger: h.logger.With("service", spec.Name), Protocols: protocols,
		})
		if err != nil {
			_ = hubsvc.CloseAll(h.services)
			h.services = nil
			return fmt.Errorf("hub: service %s: %w", spec.Name, err)
		}
		svc.Register(h.mux)
		h.services = append(h.services, svc)
	}
	return nil
}

// Start serves in the background until ctx is cancelled or Close is called.
// It returns at once; Done reports when serving has stopped.
func (h *Hub) Start(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return errors.New("hub: already started")
	}
	if h.closed() {
		return errors.New("hub: closed")
	}
	h.started = true
	h.logger.Info("hub serving", "origin", h.origin, "ca_file", h.tls.CAFile, "data_dir", h.dataDir)
	go func() {
		err := h.server.ServeTLS(h.listener, "", "")
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		h.mu.Lock()
		h.serveErr = err
		h.mu.Unlock()
		if err != nil {
			h.logger.Error("hub stopped serving", "err", err)
			h.shutdown()
		}
		close(h.stopped)
	}()
	go func() {
		select {
		case <-ctx.Done():
			h.shutdown()
		case <-h.stopped:
		}
	}()
	return nil
}

// Serve serves until ctx is cancelled (then shuts down gracefully) or
// serving fails, and returns the serving error (nil after a clean stop). It
// does not close the database; call Close for that.
func (h *Hub) Serve(ctx context.Context) error {
	if err := h.Start(ctx); err != nil {
		return err
	}
	<-h.stopped
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.serveErr
}

// Done is closed when a started hub has stopped serving.
func (h *Hub) Done() <-chan struct{} { return h.stopped }

func (h *Hub) closed() bool {
	select {
	case <-h.baseCtx.Done():
		return true
	default:
		return false
	}
}

// shutdown stops accepting connections, cancels Context (so long-lived
// handlers such as event streams end) and waits up to ShutdownTimeout for
// requests in flight — writes complete and commit — before cancelling what
// remains and closing its connections.
func (h *Hub) shutdown() {
	h.stopOnce.Do(func() {
		h.cancelBase()
		defer h.cancelReq()
		timeout := h.opts.ShutdownTimeout
		if timeout <= 0 {
			timeout = DefaultShutdownTimeout
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := h.server.Shutdown(ctx); err != nil {
			h.logger.Warn("hub shutdown timed out; closing connections", "err", err)
			_ = h.server.Close()
		}
		_ = h.listener.Close()
		h.logger.Info("hub stopped", "origin", h.origin)
	})
}

// Close shuts the hub down (gracefully, if serving), waits for serving to
// stop and closes the database. It is safe to call more than once.
func (h *Hub) Close() error {
	h.closeOnce.Do(func() {
		h.shutdown()
		h.mu.Lock()
		started := h.started
		h.mu.Unlock()
		if started {
			<-h.stopped
		}
		h.closeErr = errors.Join(hubsvc.CloseAll(h.services), h.db.Close())
	})
	return h.closeErr
}

// Origin is the service origin (https://host:port): the request JWT
// audience and the service named in discovery documents.
func (h *Hub) Origin() string { return h.origin }

// CAFile is the absolute path of DIR/ca.pem, the only certificate a client
// needs to trust the hub.
func (h *Hub) CAFile() string { return h.tls.CAFile }

// TLS returns the hub's TLS material (CA, pool, server certificate).
func (h *Hub) TLS() *tlsca.Material { return h.tls }

// DataDir is the absolute data directory.
func (h *Hub) DataDir() string { return h.dataDir }

// Addr is the bound listen address.
func (h *Hub) Addr() net.Addr { return h.listener.Addr() }

// Now reads the hub's protocol clock.
func (h *Hub) Now() time.Time { return h.clock() }

// Logger is the hub's logger.
func (h *Hub) Logger() *slog.Logger { return h.logger }

// DB is the hub's database.
func (h *Hub) DB() *hubdb.DB { return h.db }

// Pipeline is the live-write pipeline shared by every write endpoint.
func (h *Hub) Pipeline() *hubhttp.Pipeline { return h.pipeline }

// Auth verifies request JWTs for this hub's origin.
func (h *Hub) Auth() *hubhttp.Authenticator { return h.auth }

// RateLimiter is the hub's quota counter.
func (h *Hub) RateLimiter() *hubhttp.RateLimiter { return h.limiter }

// Protocols returns the protocols the hub hosts, one per service, in the
// order of services.
func (h *Hub) Protocols() []string {
	out := make([]string, len(h.specs))
	for i, s := range h.specs {
		out[i] = s.Protocol
	}
	return out
}

// Context is cancelled when the hub begins shutting down; long-lived
// handlers (event streams) select on it to end promptly.
func (h *Hub) Context() context.Context { return h.baseCtx }

// Handle mounts a handler on the hub's router (Go 1.22 patterns); tests use
// it to mount probes. Handlers are wrapped by the hub's panic recovery and
// request logging.
func (h *Hub) Handle(pattern string, handler http.Handler) { h.mux.Handle(pattern, handler) }
