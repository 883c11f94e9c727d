package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/keystore"
	"apconnect/host/mcpserver"
	"apconnect/host/pluginhost"
)

func init() {
	register(&command{
		name:    "mcp",
		summary: "serve the agent_protocols_* tools to an MCP client over stdio",
		usage:   "mcp [--home DIR] [--agent NAME] [--log-level LEVEL]",
		detail: `Serves the Agent Protocols MCP connector over stdio, the way MCP clients
(Claude Code, Claude Desktop, Cursor, Codex, …) start local servers: the 27
agent_protocols_* tools, the agent-protocols:// resources with subscriptions,
and progress notifications for long syncs. It speaks MCP 2025-11-25 and
2026-07-28 (and the versions before them), whichever the client asks for.

stdin carries one JSON-RPC message per line, and no input ends the process: a
line that is not JSON is answered with -32700, one that is not a valid request
with -32600 (with its id when it has one), a line over 4 MiB or nested deeper
than 160 levels with -32600 saying so. A call cancelled with
notifications/cancelled stops and gets no answer.

Every call signs as one identity of the home: --agent names it, else the
config's default identity. The key's passphrase comes from
APCONNECT_PASSPHRASE or the identity's passphrase_file; there is no prompt,
because the terminal, if any, belongs to the MCP client.

The enabled [[plugins]] of the config are loaded at start (their compiled code
is cached in the home's state directory; "apconnect doctor" fills the cache and
shows each plugin's state): their tools are listed as <plugin>_<tool>, their
validators check writes before signing and their watch rules add inbox items.
A plugin that cannot be loaded is logged and left out; it never stops the
server.

While it runs, the connector follows the rooms the agent is in live (SSE, with
history recovery) so the inbox fills up between calls, and resubmits any write
left pending by a crash. With [wake] in config.toml it also runs the
[[wake.command]]s for new inbox items (shared with the identity's other
processes) and, with claude_channel = true, sends its client a
notifications/claude/channel notification for each. stdout is the MCP stream;
logs go to stderr. It stops cleanly when the client closes stdin, and on
SIGINT or SIGTERM.`,
		example: `apconnect mcp --home ~/.config/apconnect --agent default
# in Claude Code:
claude mcp add apconnect -- apconnect mcp --home ~/.config/apconnect`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			agent := agentFlag(fs)
			level := logLevelFlag(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"mcp takes no arguments"}
				}
				logger, err := newLogger(e.stderr, *level)
				if err != nil {
					return err
				}
				return runMCP(ctx, e, *home, *agent, logger)
			}
		},
	})
}

func runMCP(ctx context.Context, e *env, home, agent string, logger *slog.Logger) error {
	go mcpserver.Preload() // the tool catalog loads while the agent and its plugins load
	a, err := openAgent(ctx, home, agent, logger, false)
	if err != nil {
		return err
	}
	defer a.close()
	a.conn.Start(ctx)
	defer a.reportPlugins(ctx, "mcp")()
	w := a.startWake(ctx, "mcp")
	defer w.Close()
	srv := mcpserver.New(a.conn, mcpserver.Options{Version: versionString(), Logger: logger, Wake: w})
	_, stopBeat := a.beat(ctx, srv, connector.ProcessInfo{Command: "mcp", Transport: "stdio"})
	defer stopBeat()
	logger.Info("serving MCP over stdio", "identity", a.ident.Name, "agent_id", a.conn.AgentID(), "home", a.cfg.Home())
	stdio := mcpserver.NewStdioTransport(readCloser(e.stdin), writeCloser(e.stdout), mcpserver.StdioOptions{Logger: logger})
	err = srv.Run(ctx, mcpserver.ChannelTransport(stdio, w, logger))
	switch {
	case ctx.Err() != nil:
		logger.Info("stopping on a signal")
		return nil
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		logger.Info("the client closed the connection; stopping")
		return nil
	default:
		return err
	}
}

// agentProcess is an opened identity: its configuration, key, plugins and
// connector.
type agentProcess struct {
	cfg     *config.Config
	ident   *config.Identity
	key     *keystore.Key
	plugins *pluginhost.Set
	conn    *connector.Connector
	log     *slog.Logger
}

// openAgent loads the home's config, decrypts the identity's key, loads the
// enabled plugins (a plugin that cannot be loaded is reported and left
// out, never fatal) and opens the identity's connector (no network I/O
// yet). prompt allows asking for the passphrase on the terminal.
func openAgent(ctx context.Context, home, agent string, logger *slog.Logger, prompt bool) (*agentProcess, error) {
	cfg, err := loadConfig(home)
	if err != nil {
		return nil, err
	}
	ident, err := cfg.Identity(agent)
	if err != nil {
		return nil, err
	}
	pf := ""
	if ident.PassphraseFile != "" {
		pf = cfg.Resolve(ident.PassphraseFile)
	}
	src := keystore.Chain(keystore.EnvPassphrase(), keystore.FilePassphrase(pf))
	if prompt {
		src = keystore.DefaultPassphraseSource(pf)
	}
	// Plugins load (compile, or read the compilation cache) while the key
	// is decrypted, unless a passphrase prompt may need the terminal.
	loaded := make(chan *pluginhost.Set, 1)
	loadPlugins := func() { loaded <- pluginhost.Load(ctx, cfg, pluginhost.Options{Logger: logger}) }
	if !prompt {
		go loadPlugins()
	}
	key, err := keystore.Load(cfg.Resolve(ident.KeyFile), src)
	if prompt {
		if err == nil {
			loadPlugins()
		} else {
			loaded <- nil
		}
	}
	plugins := <-loaded
	if err != nil {
		_ = plugins.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("identity %s: %w", ident.Name, err)
	}
	if len(cfg.Hosts) == 0 {
		logger.Warn("no ADP host is configured; add one with `apconnect init --host URL` or in config.toml")
	}
	conn, err := connector.New(ctx, connector.Options{Config: cfg, Identity: ident.Name, Signer: key, Logger: logger,
		Plugins: plugins.Registry, PluginFailures: plugins.Failures()})
	if err != nil {
		_ = plugins.Close(context.WithoutCancel(ctx))
		key.Wipe()
		return nil, err
	}
	return &agentProcess{cfg: cfg, ident: ident, key: key, plugins: plugins, conn: conn, log: logger}, nil
}

// reportInterval paces the plugin health reports doctor reads.
const reportInterval = 10 * time.Second

// reportPlugins keeps the plugins' health report of this process (command
// and identity) in the state directory, for `apconnect doctor`, until the
// returned function is called; it writes a last report and returns.
func (a *agentProcess) reportPlugins(ctx context.Context, command string) func() {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.plugins.KeepReport(rctx, pluginhost.ReportPath(a.cfg, command, a.ident.Name), command+" "+a.ident.Name, reportInterval,
			func(err error) { a.log.Warn("writing the plugin health report", "err", err) })
	}()
	return func() { cancel(); <-done }
}

// close stops the connector, closes the plugins and wipes the key.
func (a *agentProcess) close() {
	_ = a.conn.Close()
	_ = a.plugins.Close(context.Background())
	a.key.Wipe()
}

// logLevelFlag registers --log-level on fs.
func logLevelFlag(fs *flag.FlagSet) *string {
	return fs.String("log-level", "info", "log level on stderr: debug, info, warn or error")
}

// newLogger logs text to w (stderr) at level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Sprintf("--log-level %q: use debug, info, warn or error", level)}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}

// versionString is the version announced to MCP clients.
func versionString() string {
	if version == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return version
}
