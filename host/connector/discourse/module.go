package discourse

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/engine"
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
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
	// MaxAutoResigns caps the automatic re-signs of on_head_mismatch
	// send_anyway before the draft is held.
	MaxAutoResigns = 3
	// DefaultStatusTTL is how long a fetched status list serves reads.
	DefaultStatusTTL = 15 * time.Second
	// DefaultSyncRecordsPerCall and DefaultSyncTimePerCall bound the
	// records one sync verifies and the time it takes before it returns
	// and continues in the background: a host serving an endless (validly
	// signed) history cannot hold a tool call forever.
	DefaultSyncRecordsPerCall = 20000
	DefaultSyncTimePerCall    = 15 * time.Second
)

// Protocol is the protocol this module speaks.
const Protocol = adp.Protocol

// Options configure the module.
type Options struct {
	// WriteLimits are the host quotas the local write backpressure mirrors,
	// overriding config.toml's [limits] (tests); nil takes the config's.
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
	// Profiles looks up the verified profiles of room members (nil: member
	// views carry none). The connector wires the profile module's lookup
	// in; a module never imports a sibling.
	Profiles Profiles
	// Plugins is the registry of loaded WebAssembly plugins
	// (host/pluginhost builds it from the config's [[plugins]]): every
	// plugin in it adds its validators, watchers, tools and type packs, and
	// identity_current reports its health. The module does not close them.
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

// Profiles is the profile lookup the module uses for member views.
type Profiles interface {
	// MemberProfile returns the verified profile metadata of an Agent ID,
	// reading it first from service (the room host's announced profile
	// service; "" for none) and then from the identity's profile services.
	MemberProfile(ctx context.Context, service, agentID string) (*room.MemberProfile, error)
}

// Module is the Agent Discourse part of the connector: sync, live streams,
// writes, drafts, joins, statuses, archives and the plugin contexts, with
// one exported method per Discourse tool. It serves many MCP sessions at
// once; every method is safe for concurrent use.
type Module struct {
	*engine.Engine
	opts Options

	hosts      map[string]*hostState // by origin
	hostOrder  []string
	writeLimit adp.Limits
	createRate int // rooms created per minute and host (0: unlimited)
	cache      *stateCache
	locks      engine.KeyedLocks // per room: sync/apply and writes
	live       *liveManager

	validators map[string][]plugin.Validator
	watchers   []plugin.Watcher
	tools      []plugin.ToolProvider
	toolIndex  map[string]*toolEntry // by MCP name
	toolList   []plugin.ToolDef
	packs      packSource // nil without plugins
	pluginMu   sync.Mutex
	pluginErrs map[string]string

	bgMu     sync.Mutex
	bgCancel context.CancelFunc
	bgDone   chan struct{}

	// catchUp tracks rooms whose sync stopped at its bound and goes on in
	// the background (see continueSync).
	catchUp catchUps
	// pres writes the heads presented to sessions behind the reads.
	pres *presenter
}

// hostState is one configured host.
type hostState struct {
	origin     string
	label      string
	client     *client.Host
	proc       *room.Processor
	writeRules *adp.Rules
}

// New builds the module on e: a client per configured host. It does no
// network I/O; Start begins background sync.
func New(e *engine.Engine, opts Options) (*Module, error) {
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.JoinPollInterval <= 0 {
		opts.JoinPollInterval = DefaultJoinPollInterval
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
	wl, createRate := configLimits(e.Config.Limits)
	if opts.WriteLimits != nil {
		wl = *opts.WriteLimits
		createRate, _ = adp.RateLimit(wl, adp.TypeRoomCreate, nil)
	}
	c := &Module{Engine: e, opts: opts, hosts: map[string]*hostState{}, writeLimit: wl, createRate: createRate, cache: newStateCache(256),
		validators: map[string][]plugin.Validator{}, pluginErrs: map[string]string{}}
	schemas := adp.NewSchemaCache(0)
	labels := map[string]string{}
	for _, h := range e.Config.Hosts {
		if origin, err := config.NormalizeOrigin(h.URL); err == nil {
			labels[origin] = h.Label
		}
	}
	for _, origin := range e.HostOrigins() {
		hc, err := e.HTTPClient(origin)
		if err != nil {
			return nil, fmt.Errorf("discourse: host %s: %w", origin, err)
		}
		cl, err := client.NewHost(origin, hc, e.Signer(), e.ClientOptions())
		if err != nil {
			return nil, fmt.Errorf("discourse: host %s: %w", origin, err)
		}
		verify := &adp.Rules{Limits: adp.VerifierLimits(), HostOrigin: origin, Packs: opts.Packs, Schemas: schemas}
		write := &adp.Rules{Limits: wl, HostOrigin: origin, Packs: opts.Packs, Schemas: schemas}
		c.hosts[origin] = &hostState{origin: origin, label: labels[origin], client: cl, writeRules: write,
			proc: &room.Processor{Rules: verify, Host: origin, Self: c.Self, Workers: opts.Workers}}
		c.hostOrder = append(c.hostOrder, origin)
	}
	c.pres = newPresenter(e.Store, e.NowMS, func(msg string, args ...any) { c.Log.Warn(msg, args...) })
	c.initPlugins(opts)
	c.live = newLiveManager(c)
	c.catchUp.ctx, c.catchUp.cancel = context.WithCancel(context.Background())
	for _, kind := range []string{OutboxRoomCreate, OutboxJoinRequest, OutboxRoomEvent} {
		e.RegisterSubmitter(kind, capability.DiscourseWrite, resubmitter{c})
	}
	return c, nil
}

// Name is the module's name.
func (c *Module) Name() string { return "discourse" }

// Protocol is agent-discourse/1.0.
func (c *Module) Protocol() string { return Protocol }

// StartBackground begins the module's background work: live sync of every
// room the agent is an active member of or subscribed to (SSE up to
// MaxStreams, polling beyond) and reviewer notifications. It returns at
// once; StopBackground stops it.
func (c *Module) StartBackground(ctx context.Context) {
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
		c.live.run(ctx)
	}()
}

// StopBackground stops the background work and stores the heads presented
// so far.
func (c *Module) StopBackground() error {
	c.bgMu.Lock()
	cancel, done := c.bgCancel, c.bgDone
	c.bgCancel = nil
	c.bgMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	c.catchUp.stop()
	c.pres.wait()
	return nil
}

// host returns a configured host by origin (normalized), or
// host_not_allowed.
func (c *Module) host(origin string) (*hostState, error) {
	norm, err := config.NormalizeOrigin(origin)
	if err != nil {
		return nil, engine.Errorf(engine.CodeHostNotAllowed, "host %q is not an https origin", origin)
	}
	h, ok := c.hosts[norm]
	if !ok {
		return nil, &engine.Error{Code: engine.CodeHostNotAllowed, Message: fmt.Sprintf("host %s is not configured; only the operator can allow hosts", norm),
			Data: map[string]any{"allowed": c.hostOrder}}
	}
	return h, nil
}

//go:embed instructions.md
var instructions string

// Instructions is the module's part of the server instructions.
func (c *Module) Instructions() string { return strings.TrimSpace(instructions) }

// configLimits are the local write budgets of config.toml [limits]: the
// per-room budgets by quota class (they mirror the host's quotas, ADP 20)
// and the rooms created per host.
func configLimits(l config.Limits) (adp.Limits, int) {
	wl := adp.DefaultLimits()
	wl.MessageRate, wl.SignalRate, wl.ControlRate = l.RoomMessages(), l.RoomSignals(), l.RoomControls()
	return wl, l.RoomsCreated()
}
