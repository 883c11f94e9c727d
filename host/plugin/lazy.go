package plugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"apconnect/host/plugin/internal/wasmguard"
)

// Starting without running plugins.
//
// What the host needs of a plugin to start (its description: tools, watch
// rules, validators, packs) does not need an instance. Runtime.Load with a
// sealed on-disk cache (Options.CacheDir) keeps, beside the compiled code,
// the describe output of the module's first instance and the module as
// wasmguard rewrote it, bound to the module's digest and to the host's
// rules (describeBinding, guardBinding). A later Load of the same module:
//
//   - checks the digest pin, the limits and the grants as always;
//   - checks the cached describe output again exactly as a fresh one (cap,
//     depth, strict I-JSON, schema, content policy, the description rules
//     and the grants), and installs it;
//   - and defers everything else to Ready: the compilation (from the
//     cache), the module's import and export checks, the first instance
//     (which proves that it initialises within the limits) and a describe
//     call on it, whose answer must be the cached one byte for byte.
//
// Ready runs at most once, in the background; the first call of the
// plugin (or pluginhost's warm-up, whichever comes first) starts it, and
// every call waits for it, without its deadline running, then behaves as
// on an eagerly loaded plugin. When Ready fails — the module no longer
// initialises within the limits, or describes itself differently — the
// plugin fails closed: it stays registered (its tools were listed), and
// every call fails with the load error (a validator's failure refuses the
// writes of its types), which its Health reports.

// describeRulesVersion changes whenever the host's checks of a description
// (applyDescription, the output rules of describe) change in a way that
// could refuse a description an earlier host accepted.
const describeRulesVersion = 1

// describeBinding is what a cached description is bound to besides the
// module's digest: the ABI, the guard's rewrite and the description rules.
var describeBinding = fmt.Sprintf("abi%d-%s-rules%d", ABIVersion, wasmguard.Version, describeRulesVersion)

// guardBinding is what a cached rewritten module is bound to besides the
// module's digest: the rewrite's version.
var guardBinding = wasmguard.Version

// readiness is a plugin's way to Ready: done is closed once prepare has run
// (at load for an eager plugin), err is its result.
type readiness struct {
	once    sync.Once
	wasm    []byte // the module, for a lazy plugin's prepare
	guarded []byte // the module rewritten, when the load has it
	done    chan struct{}
	err     error // set before done is closed
}

// init sets up r: already done for an eager plugin (wasm nil), else
// waiting for Ready to prepare wasm (and guarded, when not nil).
func (r *readiness) init(wasm, guarded []byte) {
	r.done = make(chan struct{})
	if wasm == nil {
		r.once.Do(func() {})
		close(r.done)
		return
	}
	r.wasm, r.guarded = wasm, guarded
}

// state reports whether the plugin is ready (done) and, if so, whether
// preparing it failed.
func (r *readiness) state() (bool, error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// Lazy reports whether the plugin was described from the sealed cache and
// has not been made ready yet: its compilation and first instance are
// still to come (Ready).
func (p *Plugin) Lazy() bool {
	done, _ := p.ready.state()
	return !done
}

// Ready compiles and instantiates a plugin that was described from the
// cache, in the background, and waits until that is done or ctx ends. It
// returns the error that makes the plugin fail closed, if any (the same
// error every call then returns). For a plugin loaded eagerly it returns
// nil at once.
func (p *Plugin) Ready(ctx context.Context) error {
	p.ready.once.Do(func() { go p.prepareLazy() })
	select {
	case <-p.ready.done:
		return p.ready.err
	case <-ctx.Done():
		return p.err(CodeCanceled, 0, "waiting for the plugin to be compiled and started: %v", ctx.Err())
	}
}

// prepareLazy runs prepare for a plugin described from the cache. It uses
// no caller's context: the work serves every caller, and the limits bound
// it (the first instance and describe run within LoadTimeout).
func (p *Plugin) prepareLazy() {
	ctx := context.Background()
	start := time.Now()
	wasm, guarded := p.ready.wasm, p.ready.guarded
	p.ready.wasm, p.ready.guarded = nil, nil
	err := p.prepare(ctx, wasm, guarded)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = p.err(CodeInvalidModule, 0, "%v", err)
		}
		p.pool.drain(ctx)
		_ = p.closeRuntime(ctx)
		p.noteStartFailure(e)
		err = e
	} else {
		p.rt.opts.Logger.Info("plugin started", "plugin", p.Name(), "from_cache", p.FromCache(), "elapsed", time.Since(start))
	}
	p.ready.err = err
	close(p.ready.done)
}

// noteStartFailure records in the plugin's health why it fails closed.
func (p *Plugin) noteStartFailure(e *Error) {
	now := p.rt.opts.Now()
	p.mu.Lock()
	s := &p.stats
	s.failures++
	s.consecutive++
	if s.byCode == nil {
		s.byCode = map[Code]uint64{}
	}
	s.byCode[e.Code]++
	s.lastErr, s.lastErrAt = e, now
	p.mu.Unlock()
	p.rt.opts.Logger.Warn("plugin failed to start; its calls fail", "plugin", p.label(), "code", string(e.Code), "error", e.Message)
}

// awaitReady makes a call of op wait until the plugin is ready and
// returns, when it failed to get ready, the error the call fails with.
func (p *Plugin) awaitReady(ctx context.Context, op Op) error {
	done, err := p.ready.state()
	if !done {
		err = p.waitReady(ctx)
	}
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return p.err(CodeInvalidModule, op, "%v", err)
	}
	c := *e
	c.Op = op.String()
	return &c
}

// waitReady is Ready with progress reports to the context's ProgressFunc.
func (p *Plugin) waitReady(ctx context.Context) error {
	report, _ := ctx.Value(progressKey{}).(ProgressFunc)
	if report == nil {
		return p.Ready(ctx)
	}
	start := time.Now()
	report(fmt.Sprintf("plugin %s is being compiled and started; the call runs when it is ready", p.label()))
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	result := make(chan error, 1)
	go func() { result <- p.Ready(ctx) }()
	for {
		select {
		case err := <-result:
			return err
		case <-tick.C:
			report(fmt.Sprintf("plugin %s is still being compiled and started (%s so far)", p.label(), time.Since(start).Round(100*time.Millisecond)))
		}
	}
}

// progressEvery paces the progress reports of a call that waits for its
// plugin.
const progressEvery = time.Second

// ProgressFunc receives progress messages of a plugin call that waits for
// its plugin to be compiled and started.
type ProgressFunc func(message string)

type progressKey struct{}

// WithProgress returns a context whose plugin calls report to fn, when
// they have to wait for their plugin to be compiled and started (a plugin
// described from the cache whose first use this is), that they wait and,
// every second, how long they have waited. The MCP server passes the
// context of a tool call with a progress token.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// cachedDescription returns the describe output the sealed cache keeps for
// digest under this host's rules.
func (r *Runtime) cachedDescription(digest string) ([]byte, bool) {
	if r.sealed == nil {
		return nil, false
	}
	return r.sealed.getBlob(blobDescription, digest, describeBinding)
}

// keepDescription seals a checked describe output for digest.
func (r *Runtime) keepDescription(digest string, out []byte) {
	if r.sealed == nil {
		return
	}
	if err := r.sealed.putBlob(blobDescription, digest, describeBinding, out); err != nil {
		r.opts.Logger.Warn("plugin cache: cannot keep a description", "sha256", digest, "err", err)
	}
}

// forgetDescription drops the description kept for digest.
func (r *Runtime) forgetDescription(digest string) {
	if r.sealed != nil {
		r.sealed.dropBlob(blobDescription, digest, describeBinding)
	}
}

// cachedGuarded returns the rewritten module the sealed cache keeps for
// digest under this version of wasmguard.
func (r *Runtime) cachedGuarded(digest string) ([]byte, bool) {
	if r.sealed == nil {
		return nil, false
	}
	return r.sealed.getBlob(blobGuarded, digest, guardBinding)
}

// keepGuarded seals the rewritten module of digest.
func (r *Runtime) keepGuarded(digest string, module []byte) {
	if r.sealed == nil {
		return
	}
	if err := r.sealed.putBlob(blobGuarded, digest, guardBinding, module); err != nil {
		r.opts.Logger.Warn("plugin cache: cannot keep a rewritten module", "sha256", digest, "err", err)
	}
}
