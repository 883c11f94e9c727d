package connector

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
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
)

// Defaults of Options.
const (
	// DefaultMaxStreams bounds the live SSE streams open at once; further
	// live rooms are polled.
	DefaultMaxStreams = 16
	// DefaultPollInterval is how often polled rooms are synced.
	DefaultPollInterval = 30 * time.Second
	// DefaultJoinPollInterval is how often the agent's own pending join
	// requests are re-read, so an approval arrives without asking.
	DefaultJoinPollInterval = 3 * time.Second
	// DefaultClaimLease is how long an inbox claim holds.
	DefaultClaimLease = 60 * time.Second
	// MaxAutoResigns caps the automatic re-signs of on_head_mismatch
	// send_anyway before the draft is held.
	MaxAutoResigns = 3
	// DefaultStatusTTL is how long a fetched status list serves reads.
	DefaultStatusTTL = 15 * time.Second
	// DefaultProfileTTL is how long a verified profile serves reads.
	DefaultProfileTTL = 10 * time.Minute
	// DefaultSyncRecordsPerCall and DefaultSyncTimePerCall bound the
	// records one sync verifies and the time it takes before it returns
	// and continues in the background: a host serving an endless (validly
	// signed) history cannot hold a tool call forever.
	DefaultSyncRecordsPerCall = 20000
	DefaultSyncTimePerCall    = 15 * time.Second
)

// Options configure a Connector.
type Options struct {
	// Config is the operator configuration (hosts, identities, state dir,
	// records per room). Required.
	Config *config.Config
	// Identity names the identity to act as ("" for the default one).
	Identity string
	// Signer is that identity's key (keystore.Key implements it).
	// Required; it is never handed to anything but the signing code.
	Signer identity.Signer
	// Clock is the time source (time.Now when nil).
	Clock func() time.Time
	// Logger receives the connector's logs (discarded when nil).
	Logger *slog.Logger
	// HTTPClient returns the HTTP client for a configured host or profile
	// service origin; by default client.NewHTTPClient with the host's CA
	// file. Tests use it to put a proxy in front of a hub.
	HTTPClient func(origin string, roots *x509.CertPool) (*http.Client, error)
	// Client tunes the host clients.
	Client client.Options
	// WriteLimits are the host quotas the local write backpressure mirrors
	// (adp.DefaultLimits when nil).
	WriteLimits *adp.Limits
	// Packs resolves external type packs for verification (an
	// adp.HTTPSPackFetcher when nil).
	Packs adp.PackResolver
	// MaxStreams bounds open live streams (DefaultMaxStreams when zero).
	MaxStreams int
	// PollInterval paces polled rooms (DefaultPollInterval when zero).
	PollInterval time.Duration
	// JoinPollInterval paces re-reading the agent's own pending join
	// requests (DefaultJoinPollInterval when zero).
	JoinPollInterval time.Duration
	// ClaimLease is the inbox claim lease (DefaultClaimLease when zero).
	ClaimLease time.Duration
	// Workers bounds parallel signature verification (GOMAXPROCS when 0).
	Workers int
	// SyncRecordsPerCall and SyncTimePerCall bound one sync of a room
	// (DefaultSyncRecordsPerCall, DefaultSyncTimePerCall when zero). A sync
	// that reaches either returns what it verified, marks the room
	// catching_up, and continues in the background until the host's end.
	SyncRecordsPerCall int
	SyncTimePerCall    time.Duration
	// HistoryPage is the number of records asked for per history read
	// (DefaultHistoryPage when zero; hosts cap it at 1000).
	HistoryPage int
	// Plugins is the registry of loaded WebAssembly plugins
	// (host/pluginhost builds it from the config's [[plugins]]): every
	// plugin in it adds its validators, watchers, tools and type packs, and
	// identity_current reports its health. The connector does not close
	// them.
	Plugins *plugin.Registry
	// PluginFailures are the configured plugins that were refused at load
	// (plugin.LoadFailure with Name set to the configured name), reported
	// by identity_current.
	PluginFailures []plugin.Health
	// Validators, Watchers and Tools are extensions written in Go (tests,
	// embedders) or plugins wired by hand; they implement host/plugin's
	// interfaces (plugin.Scoper for records in their room context,
	// plugin.Proposer to propose events) and work like the plugins' own.
	Validators []plugin.Validator
	Watchers   []plugin.Watcher
	Tools      []plugin.ToolProvider
}

// Connector is the engine behind the agent_protocols_* tools for one Agent
// ID: one exported method per tool, plus the background live sync and
// outbox resubmission started by Start. It serves many MCP sessions at once;
// every method is safe for concurrent use.
type Connector struct {
	cfg    *config.Config
	ident  *config.Identity
	signer identity.Signer
	self   string
	now    func() time.Time
	log    *slog.Logger
	store  *store.Store
	opts   Options

	hosts      map[string]*hostState // by origin
	hostOrder  []string
	profiles   map[string]*client.ProfileService // by origin, under profMu
	writeLimit adp.Limits
	buckets    *rateLimiter
	cache      *stateCache
	locks      keyedLocks // per room: sync/apply and writes
	wake       *notifier  // inbox and room changes
	live       *liveManager

	validators map[string][]plugin.Validator
	watchers   []plugin.Watcher
	tools      []plugin.ToolProvider
	toolIndex  map[string]*toolEntry // by MCP name
	toolList   []plugin.ToolDef
	packs      packSource // nil without plugins
	pluginMu   sync.Mutex
	pluginErrs map[string]string

	// submitLocks serialize signing and submitting the agent's writes to
	// one service (keyed by submitKey) in this process, so each service
	// receives its nonces in increasing order; writes to other services do
	// not wait for a slow one.
	submitLocks keyedLocks
	profMu      sync.Mutex
	// profileHTTP are the HTTP clients made for profile services that are
	// not hosts, under profMu; Close releases their connections.
	profileHTTP []*http.Client

	bgMu     sync.Mutex
	bgCancel context.CancelFunc
	bgDone   chan struct{}

	// catchUp tracks rooms whose sync stopped at its bound and goes on in
	// the background (see continueSync).
	catchUp catchUps
}

// hostState is one configured host.
type hostState struct {
	origin     string
	label      string
	cfg        *config.Host
	client     *client.Host
	proc       *room.Processor
	writeRules *adp.Rules
	http       *http.Client
}

// New opens the Agent ID's state and prepares a client per configured
// host. It does no network I/O; Start begins background sync.
func New(ctx context.Context, opts Options) (*Connector, error) {
	if opts.Config == nil {
		return nil, errors.New("connector: a configuration is required")
	}
	if opts.Signer == nil {
		return nil, errors.New("connector: a signer is required")
	}
	ident, err := opts.Config.Identity(opts.Identity)
	if err != nil {
		return nil, fmt.Errorf("connector: %w", err)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.JoinPollInterval <= 0 {
		opts.JoinPollInterval = DefaultJoinPollInterval
	}
	if opts.ClaimLease <= 0 {
		opts.ClaimLease = DefaultClaimLease
	}
	if opts.SyncRecordsPerCall <= 0 {
		opts.SyncRecordsPerCall = DefaultSyncRecordsPerCall
	}
	if opts.SyncTimePerCall <= 0 {
		opts.SyncTimePerCall = DefaultSyncTimePerCall
	}
	if opts.HistoryPage <= 0 || opts.HistoryPage > DefaultHistoryPage {
		opts.HistoryPage = DefaultHistoryPage
	}
	if opts.Packs == nil {
		opts.Packs = &adp.HTTPSPackFetcher{}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = func(_ string, roots *x509.CertPool) (*http.Client, error) {
			return client.NewHTTPClient(roots, opts.Client.Timeout), nil
		}
	}
	if opts.Client.Clock == nil {
		opts.Client.Clock = opts.Clock
	}
	if opts.Client.Logger == nil {
		opts.Client.Logger = opts.Logger
	}
	wl := adp.DefaultLimits()
	if opts.WriteLimits != nil {
		wl = *opts.WriteLimits
	}
	st, err := store.Open(ctx, store.Options{Dir: opts.Config.StateDir(), AgentID: opts.Signer.AgentID(),
		RecordsPerRoom: opts.Config.State.RecordsPerRoom})
	if err != nil {
		return nil, err
	}
	c := &Connector{
		cfg: opts.Config, ident: ident, signer: opts.Signer, self: opts.Signer.AgentID(), now: opts.Clock,
		log: opts.Logger, store: st, opts: opts, hosts: map[string]*hostState{}, profiles: map[string]*client.ProfileService{},
		writeLimit: wl, buckets: newRateLimiter(), cache: newStateCache(256), wake: newNotifier(),
		validators: map[string][]plugin.Validator{}, pluginErrs: map[string]string{},
	}
	schemas := adp.NewSchemaCache(0)
	for i := range opts.Config.Hosts {
		h := &opts.Config.Hosts[i]
		origin, err := config.NormalizeOrigin(h.URL)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("connector: host %s: %w", h.URL, err)
		}
		roots, err := opts.Config.CAPool(h)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("connector: host %s: %w", origin, err)
		}
		hc, err := opts.HTTPClient(origin, roots)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("connector: host %s: %w", origin, err)
		}
		cl, err := client.NewHost(origin, hc, opts.Signer, opts.Client)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("connector: host %s: %w", origin, err)
		}
		verify := &adp.Rules{Limits: adp.VerifierLimits(), HostOrigin: origin, Packs: opts.Packs, Schemas: schemas}
		write := &adp.Rules{Limits: wl, HostOrigin: origin, Packs: opts.Packs, Schemas: schemas}
		c.hosts[origin] = &hostState{origin: origin, label: h.Label, cfg: h, client: cl, writeRules: write, http: hc,
			proc: &room.Processor{Rules: verify, Host: origin, Self: c.self, Workers: opts.Workers}}
		c.hostOrder = append(c.hostOrder, origin)
	}
	c.initPlugins(opts)
	c.live = newLiveManager(c)
	c.catchUp.ctx, c.catchUp.cancel = context.WithCancel(context.Background())
	return c, nil
}

// AgentID returns the Agent ID the connector signs as.
func (c *Connector) AgentID() string { return c.self }

// Store returns the connector's state (for diagnostics and tests).
func (c *Connector) Store() *store.Store { return c.store }

// Start begins the background work: live sync of every room the agent is an
// active member of or subscribed to (SSE up to MaxStreams, polling beyond),
// resubmission of pending outbox entries, expiry of inbox claims and
// reviewer notifications. It returns at once; Close stops it.
func (c *Connector) Start(ctx context.Context) {
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.bgCancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	c.bgCancel = cancel
	c.bgDone = make(chan struct{})
	go func() {
		defer close(c.bgDone)
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); c.live.run(ctx) }()
		go func() { defer wg.Done(); c.outboxLoop(ctx) }()
		go func() { defer wg.Done(); c.maintenanceLoop(ctx) }()
		wg.Wait()
	}()
}

// Close stops the background work and closes the state.
func (c *Connector) Close() error {
	c.bgMu.Lock()
	cancel, done := c.bgCancel, c.bgDone
	c.bgCancel = nil
	c.bgMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	c.catchUp.stop()
	c.closeIdleConnections()
	return c.store.Close()
}

// closeIdleConnections releases the kept-alive connections of every HTTP
// client the connector made, so a host sees them closed now rather than
// when they time out (an HTTP/2 server that shuts down waits up to a second
// for a client to close its side).
func (c *Connector) closeIdleConnections() {
	for _, h := range c.hosts {
		h.http.CloseIdleConnections()
	}
	c.profMu.Lock()
	defer c.profMu.Unlock()
	for _, hc := range c.profileHTTP {
		hc.CloseIdleConnections()
	}
}

// host returns a configured host by origin (normalized), or
// host_not_allowed.
func (c *Connector) host(origin string) (*hostState, error) {
	norm, err := config.NormalizeOrigin(origin)
	if err != nil {
		return nil, errorf(CodeHostNotAllowed, "host %q is not an https origin", origin)
	}
	h, ok := c.hosts[norm]
	if !ok {
		return nil, &Error{Code: CodeHostNotAllowed, Message: fmt.Sprintf("host %s is not configured; only the operator can allow hosts", norm),
			Data: map[string]any{"allowed": c.hostOrder}}
	}
	return h, nil
}

// nowMS returns the clock in Unix ms.
func (c *Connector) nowMS() int64 { return c.now().UnixMilli() }

// maintenanceLoop releases expired inbox claims and deferrals (waking
// long-pollers), forgets stale sessions and prunes closed outbox entries.
func (c *Connector) maintenanceLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var n int
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := c.nowMS()
		var released int64
		if next, err := c.store.Read().NextExpiry(ctx); err == nil && next > 0 && next <= now {
			_ = c.store.Write(ctx, func(tx *store.Tx) error {
				var err error
				released, err = tx.ReleaseExpired(ctx, now)
				return err
			})
		}
		if released > 0 {
			c.wake.notify()
		}
		n++
		if n%3600 == 0 {
			_ = c.store.Write(ctx, func(tx *store.Tx) error {
				if _, err := tx.ForgetSessions(ctx, now); err != nil {
					return err
				}
				return tx.PruneOutbox(ctx, now-7*24*3600_000)
			})
		}
	}
}
