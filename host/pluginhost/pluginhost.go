// Package pluginhost turns the [[plugins]] of an apconnect config into
// loaded plugins: one wazero runtime with an on-disk compilation cache
// under the home's state directory, every enabled entry loaded concurrently
// (pinned digest, grants and limits from the config), the checks that need
// more than the plugin runtime (the configured name, the ADP type schema
// profile on every pack type), and the registry the connector consults.
//
// A plugin that cannot be loaded never stops apconnect: its entry records
// why (plugin.LoadFailure), `apconnect doctor` shows it as a failure and
// identity_current reports it. `apconnect mcp`, `serve`, `call` and
// `doctor` load plugins through this package.
//
// It sits beside the connector in the layering (identity → … → plugin →
// pluginhost, connector → mcpserver → cmd): it imports config, adp and
// plugin, and nothing imports it but cmd and tests.
package pluginhost

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"

	"apconnect/host/config"
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
)

// CacheDirName is the compilation cache directory inside the state
// directory. Compiling a Go plugin takes seconds; with the cache a later
// start only decodes the module (tens of milliseconds).
const CacheDirName = "plugin-cache"

// CacheDir returns the compilation cache directory of a config's home.
func CacheDir(cfg *config.Config) string { return filepath.Join(cfg.StateDir(), CacheDirName) }

// Options tune Load.
type Options struct {
	// CacheDir is the on-disk compilation cache (CacheDir(cfg) when "").
	CacheDir string
	// Cache, when set, is used instead of an on-disk cache (tests share
	// plugintest's). Close does not close it.
	Cache wazero.CompilationCache
	// Logger receives load results and plugin failures (nothing when nil).
	Logger *slog.Logger
	// Now is the plugins' clock (now_ms); time.Now when nil.
	Now func() time.Time
	// Limits, when set, adjusts each plugin's limits after the config's
	// (tests lengthen deadlines under the race detector).
	Limits func(name string, l *plugin.Limits)
	// Parallel bounds how many plugins load (compile) at once;
	// GOMAXPROCS when 0.
	Parallel int
	// Eager makes Load compile and start every plugin before it returns,
	// so that a plugin that cannot start is refused there (`apconnect
	// doctor`). Otherwise a plugin described from the sealed cache is
	// compiled and started by the warm-up, or by its first call.
	Eager bool
	// NoWarmUp leaves the plugins described from the cache to their first
	// call: Load starts no background warm-up (benchmarks, tests).
	NoWarmUp bool
	// WarmUpDelay is how long after Load the warm-up starts
	// (DefaultWarmUpDelay when 0).
	WarmUpDelay time.Duration
}

// DefaultWarmUpDelay leaves the start of `apconnect mcp` (initialize,
// tools/list, the first sync) the machine's cores before the warm-up
// compiles anything: on two cores, a warm-up at once made the start of a
// session with the five first-party plugins about 1.3 times slower.
const DefaultWarmUpDelay = time.Second

// Entry is one [[plugins]] entry and what became of it.
type Entry struct {
	// Config is the entry as configured.
	Config config.Plugin
	// Path is the resolved path of its module.
	Path string
	// Grants are the parsed grants (zero when they do not parse).
	Grants plugin.Grants
	// Disabled is true for an entry with enabled = false; it is not loaded.
	Disabled bool
	// Plugin is the loaded plugin, nil when refused or disabled.
	Plugin *plugin.Plugin
	// Err says why the plugin was refused.
	Err error
	// Elapsed is how long loading it took.
	Elapsed time.Duration
}

// Set is the loaded plugins of one config.
type Set struct {
	// Runtime loaded the plugins; nil when the config enables none.
	Runtime *plugin.Runtime
	// Registry holds every loaded plugin, in config order.
	Registry *plugin.Registry
	// Entries are the config's [[plugins]], in order.
	Entries []Entry
	// CacheDir is the compilation cache used ("" in memory).
	CacheDir string

	warm *time.Timer // the pending warm-up
}

// Load loads every enabled plugin of cfg concurrently (at most
// Options.Parallel, by default GOMAXPROCS, at a time) and registers those
// that load, in config order. It never fails: a plugin that cannot be
// loaded (unreadable, wrong digest, bad grants or limits, not a module of
// the ABI, a description beyond its grants, a pack type against the ADP
// type schema profile, a name or tool another plugin has) is recorded in
// its Entry and left out.
func Load(ctx context.Context, cfg *config.Config, opts Options) *Set {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Set{Registry: plugin.NewRegistry(nil)}
	enabled := 0
	for _, pc := range cfg.Plugins {
		e := Entry{Config: pc, Path: cfg.Resolve(pc.Path), Disabled: !pc.Enabled}
		if !e.Disabled {
			enabled++
		}
		s.Entries = append(s.Entries, e)
	}
	if enabled == 0 {
		return s
	}
	start := time.Now()
	rt, err := s.newRuntime(ctx, cfg, opts, log)
	if err != nil {
		for i := range s.Entries {
			if !s.Entries[i].Disabled {
				s.Entries[i].Err = fmt.Errorf("plugin %s: the plugin runtime cannot start: %w", s.Entries[i].Config.Name, err)
			}
		}
		s.logFailures(log)
		return s
	}
	s.Runtime = rt
	// Compiling is CPU-bound (wazero compiles one module on one
	// goroutine): one load per core at a time keeps every core busy
	// without holding more modules' compiler state in memory than there
	// are cores to work on them. Each entry keeps its own result; the
	// registry is filled in config order below.
	sem := make(chan struct{}, parallelLoads(opts))
	var wg sync.WaitGroup
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Disabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t0 := time.Now()
			e.Plugin, e.Grants, e.Err = load(ctx, rt, e, opts)
			e.Elapsed = time.Since(t0)
		}()
	}
	wg.Wait()
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Plugin == nil {
			continue
		}
		if err := s.Registry.Add(e.Plugin); err != nil {
			_ = e.Plugin.Close(context.WithoutCancel(ctx))
			e.Plugin, e.Err = nil, err
		}
	}
	s.logFailures(log)
	log.Info("plugins loaded", "loaded", len(s.Registry.Plugins()), "configured", enabled, "elapsed", time.Since(start).Round(time.Millisecond),
		"cache", s.CacheDir)
	if !opts.Eager && !opts.NoWarmUp {
		delay := opts.WarmUpDelay
		if delay <= 0 {
			delay = DefaultWarmUpDelay
		}
		s.warm = time.AfterFunc(delay, func() { s.warmUp(context.WithoutCancel(ctx)) })
	}
	return s
}

// warmUp compiles and starts the plugins that Load described from the
// sealed cache, one at a time, in config order, a little after Load
// (Options.WarmUpDelay): the first write a
// validator checks and the first sync page a watcher sees then find the
// plugin ready, and a plugin that no longer starts is reported in its
// health without waiting for a call. One at a time, because a start
// needs the other core for the MCP session. A plugin whose call came
// first is ready already; Close ends the warm-up (the plugins fail with
// plugin_closed).
func (s *Set) warmUp(ctx context.Context) {
	for _, p := range s.Registry.Plugins() {
		if p.Lazy() {
			_ = p.Ready(ctx) // a failure is the plugin's health; calls fail closed
		}
	}
}

// parallelLoads is how many plugins Load loads at once: Options.Parallel,
// else GOMAXPROCS.
func parallelLoads(opts Options) int {
	if opts.Parallel > 0 {
		return opts.Parallel
	}
	return runtime.GOMAXPROCS(0)
}

func (s *Set) newRuntime(ctx context.Context, cfg *config.Config, opts Options, log *slog.Logger) (*plugin.Runtime, error) {
	ropts := plugin.Options{Cache: opts.Cache, Now: opts.Now, Logger: log}
	if opts.Cache == nil {
		ropts.CacheDir = opts.CacheDir
		if ropts.CacheDir == "" {
			ropts.CacheDir = CacheDir(cfg)
		}
	}
	rt, err := plugin.NewRuntime(ctx, ropts)
	if err != nil && ropts.CacheDir != "" {
		// The cache is an optimisation: without it, compile in memory.
		log.Warn("plugin compilation cache unavailable; compiling in memory", "dir", ropts.CacheDir, "err", err)
		ropts.CacheDir = ""
		rt, err = plugin.NewRuntime(ctx, ropts)
	}
	if err == nil {
		s.CacheDir = ropts.CacheDir
	}
	return rt, err
}

func (s *Set) logFailures(log *slog.Logger) {
	for _, e := range s.Entries {
		if e.Err != nil {
			log.Warn("plugin refused; apconnect runs without it", "plugin", e.Config.Name, "path", e.Path, "err", e.Err)
		}
	}
}

// load loads one entry and applies the host's own checks.
func load(ctx context.Context, rt *plugin.Runtime, e *Entry, opts Options) (*plugin.Plugin, plugin.Grants, error) {
	name := e.Config.Name
	grants, err := plugin.ParseGrants(e.Config.Grants)
	if err != nil {
		return nil, grants, &plugin.Error{Code: plugin.CodeInvalidConfig, Plugin: name, Op: "load", Message: err.Error(), Err: err}
	}
	limits := Limits(e.Config.Limits)
	if opts.Limits != nil {
		opts.Limits(name, &limits)
	}
	p, err := rt.Load(ctx, e.Path, e.Config.SHA256, grants, limits)
	if err != nil {
		return nil, grants, err
	}
	if err := check(p, name); err != nil {
		_ = p.Close(context.WithoutCancel(ctx))
		return nil, grants, err
	}
	if opts.Eager {
		if err := p.Ready(ctx); err != nil {
			_ = p.Close(context.WithoutCancel(ctx))
			return nil, grants, err
		}
	}
	return p, grants, nil
}

// check applies what the plugin runtime leaves to the host: the plugin is
// the one the config names, and every type of its packs passes the ADP
// type schema profile (hosts and verifiers apply it to the inline
// definitions the connector expands the packs into).
func check(p *plugin.Plugin, name string) error {
	if p.Name() != name {
		return &plugin.Error{Code: plugin.CodeInvalidConfig, Plugin: name, Op: "load",
			Message: fmt.Sprintf("the config names this plugin %q but it describes itself as %q", name, p.Name())}
	}
	limits := adp.DefaultLimits()
	for _, pk := range p.Packs() {
		for _, t := range pk.Types {
			if err := adp.CheckTypeSchema(t.Schema, limits, nil); err != nil {
				return &plugin.Error{Code: plugin.CodeInvalidDescription, Plugin: name, Op: "load",
					Message: fmt.Sprintf("pack %s: type %s: %v", pk.ID(), t.Type, err), Err: err}
			}
		}
	}
	return nil
}

// Limits converts a config's plugin limits; the rest are the runtime's
// defaults.
func Limits(l config.PluginLimits) plugin.Limits {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return plugin.Limits{
		MemoryBytes:     uint64(l.MemoryMiB) << 20,
		ValidateTimeout: ms(l.ValidateMS),
		WatchTimeout:    ms(l.WatchMS),
		ToolTimeout:     ms(l.ToolMS),
	}
}

// Failures returns the refused entries as plugin health (LoadFailure with
// the configured name), for the connector's Options.PluginFailures.
func (s *Set) Failures() []plugin.Health {
	var out []plugin.Health
	for _, e := range s.Entries {
		if e.Err != nil {
			out = append(out, e.failure())
		}
	}
	return out
}

func (e *Entry) failure() plugin.Health {
	h := plugin.LoadFailure(e.Path, e.Grants, e.Err)
	h.Name = e.Config.Name
	if len(h.Grants) == 0 {
		h.Grants = append([]string{}, e.Config.Grants...)
	}
	return h
}

// Health returns the health of every enabled entry in config order: the
// loaded plugins' own (with up to logLines log lines) and the refusals.
func (s *Set) Health(logLines int) []plugin.Health {
	var out []plugin.Health
	for _, e := range s.Entries {
		switch {
		case e.Plugin != nil:
			out = append(out, e.Plugin.Health(logLines))
		case e.Err != nil:
			out = append(out, e.failure())
		}
	}
	return out
}

// Close closes every plugin and the runtime.
func (s *Set) Close(ctx context.Context) error {
	if s == nil || s.Runtime == nil {
		return nil
	}
	if s.warm != nil {
		s.warm.Stop()
	}
	return s.Runtime.Close(ctx)
}
