package connector

import (
	"context"
	"crypto/x509"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/connector/delegation"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/knowledge"
	"apconnect/host/connector/mail"
	"apconnect/host/connector/profile"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// Options configure a Connector: the engine's, and each module's.
type Options struct {
	// Config is the operator configuration. Required.
	Config *config.Config
	// Identity names the identity to act as ("" for the default one).
	Identity string
	// Signer is that identity's key (keystore.Key implements it).
	// Required; it is never handed to anything but the signing code and the
	// service clients (request JWTs).
	Signer identity.Signer
	// Clock is the time source (time.Now when nil).
	Clock func() time.Time
	// Logger receives the connector's logs (discarded when nil).
	Logger *slog.Logger
	// HTTPClient returns the HTTP client for a configured origin; by
	// default client.NewHTTPClient with the origin's CA file. Tests use it
	// to put a proxy in front of a hub.
	HTTPClient func(origin string, roots *x509.CertPool) (*http.Client, error)
	// Client tunes the service clients.
	Client client.Options
	// ClaimLease is the inbox claim lease (engine.DefaultClaimLease when
	// zero).
	ClaimLease time.Duration

	// WriteLimits are the host quotas the Discourse write backpressure
	// mirrors (adp.DefaultLimits when nil).
	WriteLimits *adp.Limits
	// Packs resolves external type packs for verification.
	Packs adp.PackResolver
	// MaxStreams, PollInterval, JoinPollInterval, Workers,
	// SyncRecordsPerCall, SyncTimePerCall and HistoryPage tune Discourse
	// sync (see discourse.Options).
	MaxStreams         int
	PollInterval       time.Duration
	JoinPollInterval   time.Duration
	Workers            int
	SyncRecordsPerCall int
	SyncTimePerCall    time.Duration
	HistoryPage        int
	// Plugins, PluginFailures, Validators, Watchers and Tools are the
	// plugin extensions (see discourse.Options).
	Plugins        *plugin.Registry
	PluginFailures []plugin.Health
	Validators     []plugin.Validator
	Watchers       []plugin.Watcher
	Tools          []plugin.ToolProvider
}

// Connector is the connector of one Agent ID: the engine and one module per
// protocol, and the tools that span protocols (identity_current,
// hosts_list, services_list, schema_get, the inbox tools), which iterate
// over the modules. Every method is safe for concurrent use.
type Connector struct {
	engine     *engine.Engine
	discourse  *discourse.Module
	profile    *profile.Module
	delegation *delegation.Module
	mail       *mail.Module
	knowledge  *knowledge.Module
	modules    []engine.Module
}

// New opens the Agent ID's state and builds its modules. It does no
// network I/O; Start begins background work.
func New(ctx context.Context, opts Options) (*Connector, error) {
	e, err := engine.New(ctx, engine.Options{Config: opts.Config, Identity: opts.Identity, Signer: opts.Signer, Clock: opts.Clock,
		Logger: opts.Logger, HTTPClient: opts.HTTPClient, Client: opts.Client, ClaimLease: opts.ClaimLease})
	if err != nil {
		return nil, err
	}
	prof := profile.New(e)
	disc, err := discourse.New(e, discourse.Options{WriteLimits: opts.WriteLimits, Packs: opts.Packs, MaxStreams: opts.MaxStreams,
		PollInterval: opts.PollInterval, JoinPollInterval: opts.JoinPollInterval, Workers: opts.Workers,
		SyncRecordsPerCall: opts.SyncRecordsPerCall, SyncTimePerCall: opts.SyncTimePerCall, HistoryPage: opts.HistoryPage,
		Profiles: prof, Plugins: opts.Plugins, PluginFailures: opts.PluginFailures,
		Validators: opts.Validators, Watchers: opts.Watchers, Tools: opts.Tools})
	if err != nil {
		e.Close()
		return nil, err
	}
	mailbox := mail.New(e, mail.Options{Profiles: profileLookup(prof)})
	deleg := delegation.New(e)
	know := knowledge.New(e)
	return &Connector{engine: e, discourse: disc, profile: prof, mail: mailbox, delegation: deleg, knowledge: know,
		modules: []engine.Module{disc, prof, mailbox, deleg, know}}, nil
}

// Engine returns the protocol-neutral core.
func (c *Connector) Engine() *engine.Engine { return c.engine }

// Discourse returns the Agent Discourse module.
func (c *Connector) Discourse() *discourse.Module { return c.discourse }

// Profile returns the Agent Profile module.
func (c *Connector) Profile() *profile.Module { return c.profile }

// Delegation returns the Agent Delegation module.
func (c *Connector) Delegation() *delegation.Module { return c.delegation }

// Mail returns the Agent Mail module.
func (c *Connector) Mail() *mail.Module { return c.mail }

// Knowledge returns the Agent Knowledge module.
func (c *Connector) Knowledge() *knowledge.Module { return c.knowledge }

// Modules lists the protocol modules.
func (c *Connector) Modules() []engine.Module { return c.modules }

// AgentID returns the Agent ID the connector signs as.
func (c *Connector) AgentID() string { return c.engine.Self }

// Store returns the connector's state (for diagnostics and tests).
func (c *Connector) Store() *store.Store { return c.engine.Store }

// Start begins the background work of the engine and of every module. It
// returns at once; Close stops it.
func (c *Connector) Start(ctx context.Context) {
	c.engine.Start(ctx)
	for _, m := range c.modules {
		if s, ok := m.(engine.Background); ok {
			s.StartBackground(ctx)
		}
	}
}

// Close stops the background work and closes the state.
func (c *Connector) Close() error {
	var errs []error
	for _, m := range c.modules {
		if s, ok := m.(engine.Background); ok {
			errs = append(errs, s.StopBackground())
		}
	}
	errs = append(errs, c.engine.Close())
	return errors.Join(errs...)
}

// StandardTools lists the standard tools of every module and of the
// connector itself, in no particular order.
func (c *Connector) StandardTools() []engine.Tool {
	tools := c.ownTools()
	for _, m := range c.modules {
		tools = append(tools, m.Tools()...)
	}
	return tools
}

// PluginTools lists the plugins' tools, sorted by MCP name.
func (c *Connector) PluginTools() []plugin.ToolDef { return c.discourse.PluginTools() }

// CallTool calls a plugin tool by its MCP name.
func (c *Connector) CallTool(ctx context.Context, sess engine.SessionID, name string, args json.RawMessage) (*discourse.PluginToolResult, error) {
	return c.discourse.CallTool(ctx, sess, name, args)
}

var (
	//go:embed instructions.md
	intro string
	//go:embed instructions_trust.md
	trust string
	//go:embed instructions_channel.md
	channel string
)

// Instructions are the MCP server instructions: the connector's own
// opening, each module's part in order, what a channel notification means
// (with [wake] claude_channel on), and the trust rules.
func (c *Connector) Instructions() string {
	parts := []string{strings.TrimSpace(intro)}
	for _, m := range c.modules {
		if in, ok := m.(engine.Instructor); ok {
			parts = append(parts, in.Instructions())
		}
	}
	if c.engine.Config.Wake.ClaudeChannel {
		parts = append(parts, strings.TrimSpace(channel)) // [wake] claude_channel: what a notification means
	}
	parts = append(parts, strings.TrimSpace(trust))
	return strings.Join(parts, "\n\n")
}
