package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"apconnect/host/plugin/internal/wasmguard"
)

// Plugin is one loaded plugin: its checked description, its instance pool
// and its health. It implements Validator, Watcher, ToolProvider and
// PackProvider; every method is safe for concurrent use. An operation the
// plugin did not describe (or was not granted) fails with CodeUnknown.
//
// A plugin described from the sealed cache (Runtime.Load) is compiled and
// instantiated later, by Ready: its first call waits for that (lazy.go).
type Plugin struct {
	rt       *Runtime
	source   string
	digest   string
	grants   Grants
	limits   Limits
	pool     *pool
	memory   experimental.MemoryAllocator // nil: wazero's default
	log      *ringLog
	stdout   *lineWriter
	stderr   *lineWriter
	loadedAt time.Time

	// code is the compiled module, set once by prepare (under mu); calls
	// read it after Ready.
	code *compiledCode
	// fromCache is set at load when the description came from the sealed
	// cache, and by compile when the compiled code came from it.
	fromCache bool

	// Set once during load, read-only afterwards.
	desc       *Description
	descOut    []byte // the describe output desc was built from
	descCached bool   // descOut came from the sealed cache
	tools      map[string]*toolEntry
	validates  map[string]bool
	watches    map[string]bool
	proposes   map[string]bool
	packs      map[string]*Pack

	ready readiness

	// life ends when the plugin is closed, which stops its running guests.
	life    context.Context
	endLife context.CancelFunc

	mu     sync.Mutex
	closed bool
	stats  stats
}

// toolEntry is a described tool with its compiled schemas.
type toolEntry struct {
	def *ToolDef
	in  *jsonschema.Schema
	out *jsonschema.Schema // nil without an output schema
}

// compiledCode is a plugin's wazero runtime (its memory cap, WASI, the
// host module) with the module compiled in it.
type compiledCode struct {
	wrt    wazero.Runtime
	module wazero.CompiledModule
	cache  wazero.CompilationCache // the runtime's own cache (sealed or fallback); nil with a shared one
}

func (c *compiledCode) close(ctx context.Context) error {
	if c == nil {
		return nil
	}
	var errs []error
	errs = append(errs, c.wrt.Close(ctx))
	if c.cache != nil {
		errs = append(errs, c.cache.Close(ctx))
	}
	return errors.Join(errs...)
}

func newPlugin(ctx context.Context, rt *Runtime, source string, wasm []byte, digest string, grants Grants, limits Limits) (*Plugin, error) {
	p := &Plugin{
		rt:       rt,
		source:   source,
		digest:   digest,
		grants:   grants,
		limits:   limits,
		pool:     newPool(limits.MaxInstances),
		memory:   newMemoryPool(),
		log:      newRingLog(limits.LogLines, rt.opts.Now),
		loadedAt: rt.opts.Now(),
	}
	p.stdout = &lineWriter{log: p.log, source: "stdout", level: "info"}
	p.stderr = &lineWriter{log: p.log, source: "stderr", level: "error"}
	p.life, p.endLife = context.WithCancel(context.Background())
	if out, ok := rt.cachedDescription(digest); ok {
		// Described by this module's first instance on an earlier start:
		// checked again now, compiled and instantiated by Ready.
		if err := p.describeFrom(out); err != nil {
			return nil, err
		}
		p.descOut, p.descCached, p.fromCache = out, true, true
		p.ready.init(wasm, nil)
		return p, nil
	}
	if rt.sealed != nil {
		// A module this cache has not seen: described by an interpreted
		// instance, compiled by Ready (interpret.go).
		guarded, err := p.guard(wasm)
		if err != nil {
			return nil, err
		}
		if err := p.describeInterpreted(ctx, guarded); err != nil {
			return nil, err
		}
		p.ready.init(wasm, guarded)
		return p, nil
	}
	p.ready.init(nil, nil)
	if err := p.prepare(ctx, wasm, nil); err != nil {
		_ = p.closeRuntime(ctx)
		return nil, err
	}
	return p, nil
}

// prepare makes the plugin runnable: the module rewritten by wasmguard
// (from the sealed cache when it holds it), compiled (likewise), its
// imports and exports checked, and a first instance, which proves that
// the module initialises within the limits, stays in the pool. That
// instance describes the plugin: at load, the description is checked and
// installed and the sealed cache keeps it; for a plugin described from
// the cache, its answer must be the cached one, byte for byte, or the
// plugin fails closed (every call fails with CodeInvalidDescription).
func (p *Plugin) prepare(ctx context.Context, wasm, guarded []byte) error {
	if guarded == nil {
		var err error
		if guarded, err = p.guard(wasm); err != nil {
			return err
		}
	}
	code, fromCache, err := p.compile(ctx, guarded)
	if err != nil {
		return err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = code.close(ctx)
		return p.err(CodeClosed, 0, "the plugin was closed while it was being compiled")
	}
	p.code = code
	p.fromCache = fromCache
	p.mu.Unlock()
	if err := checkModuleShape(code.module); err != nil {
		return p.loadErr(CodeInvalidModule, "%v", err)
	}
	inst, err := p.spawn(ctx, p.limits.LoadTimeout)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Code != CodeInvalidModule {
			e.Code, e.Message = CodeInvalidModule, "first instance: "+e.Message
		}
		return err
	}
	p.pool.adopt(inst)
	out, err := p.describeRaw(ctx)
	if err != nil {
		return err
	}
	if p.descOut != nil {
		if !bytes.Equal(out, p.descOut) {
			p.rt.forgetDescription(p.digest)
			what := "the description the cache kept for it"
			if !p.descCached {
				what = "its interpreted instance at load"
			}
			return p.err(CodeInvalidDescription, OpDescribe, "the module's first instance describes it differently from "+
				"%s (a describe that depends on now_ms?); the plugin is not used", what)
		}
		return nil
	}
	if err := p.describeFrom(out); err != nil {
		return err
	}
	p.descOut = out
	p.rt.keepDescription(p.digest, out)
	return nil
}

// guard returns the module as wasmguard rewrites it, from the sealed cache
// when it holds it for this digest and this version of the rewrite.
func (p *Plugin) guard(wasm []byte) ([]byte, error) {
	if g, ok := p.rt.cachedGuarded(p.digest); ok {
		return g, nil
	}
	// The module runs as rewritten by wasmguard: every function counts its
	// frame against the instance's stack limit, and tables are bounded.
	guarded, err := wasmguard.Instrument(wasm)
	if err != nil {
		return nil, p.loadErr(CodeInvalidModule, "not a valid WebAssembly module: %v", strings.TrimPrefix(err.Error(), wasmguard.ErrInvalid.Error()+": "))
	}
	p.rt.keepGuarded(p.digest, guarded.Module)
	return guarded.Module, nil
}

// compile compiles module in a new wazero runtime of the plugin, through
// the Runtime's cache: the shared one, or the sealed on-disk cache, where
// a miss stores the new entry and an entry wazero refuses is dropped and
// compiled afresh. fromCache reports code taken from the sealed cache.
func (p *Plugin) compile(ctx context.Context, module []byte) (code *compiledCode, fromCache bool, err error) {
	rt := p.rt
	if rt.sealed == nil {
		// The Runtime's cache: shared, not the plugin's to close.
		code, err := p.compileIn(ctx, wazero.NewRuntimeConfig().WithCompilationCache(rt.cache), nil, module)
		return code, false, err
	}
	for attempt := 0; ; attempt++ {
		load, err := rt.sealed.begin(module, p.digest, attempt > 0)
		if err != nil {
			rt.opts.Logger.Warn("plugin compilation cache unusable for this load; compiling in memory", "plugin", p.source, "err", err)
			code, err := p.compileWith(ctx, wazero.NewCompilationCache(), module)
			return code, false, err
		}
		code, err := p.compileWith(ctx, load.cache, module)
		if err == nil {
			fromCache := load.used()
			load.finish()
			return code, fromCache, nil
		}
		load.discard()
		if !load.placed || attempt > 0 {
			return nil, false, err
		}
		rt.opts.Logger.Warn("plugin compilation cache: wazero refused a cached entry; recompiling", "plugin", p.source, "entry", load.entry, "err", err)
		_ = os.Remove(load.entry)
	}
}

// compileWith compiles module in a new runtime over cache. The returned
// code owns cache; on failure cache is closed.
func (p *Plugin) compileWith(ctx context.Context, cache wazero.CompilationCache, module []byte) (*compiledCode, error) {
	return p.compileIn(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache), cache, module)
}

// compileIn compiles module in a new runtime of cfg with the plugin's
// memory cap, deadlines, WASI and the host module. The returned code owns
// cache (which may be nil); on failure cache is closed.
func (p *Plugin) compileIn(ctx context.Context, cfg wazero.RuntimeConfig, cache wazero.CompilationCache, module []byte) (_ *compiledCode, err error) {
	// No WithCloseOnContextDone: the guard's checkpoints return to Go and
	// honour the stop flag (stop.go), at a fraction of its cost.
	cfg = cfg.WithMemoryLimitPages(p.limits.memoryPages())
	code := &compiledCode{wrt: wazero.NewRuntimeWithConfig(ctx, cfg), cache: cache}
	defer func() {
		if err != nil {
			_ = code.close(ctx)
		}
	}()
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, code.wrt); err != nil {
		return nil, p.loadErr(CodeInvalidModule, "cannot provide WASI: %v", err)
	}
	if err := instantiateHostModule(ctx, code.wrt); err != nil {
		return nil, p.loadErr(CodeInvalidModule, "cannot provide the host module: %v", err)
	}
	lctx, cancel := context.WithTimeout(ctx, p.limits.LoadTimeout)
	defer cancel()
	if code.module, err = code.wrt.CompileModule(lctx, module); err != nil {
		return nil, p.loadErr(CodeInvalidModule, "not a valid WebAssembly module: %v", err)
	}
	return code, nil
}

// closeRuntime closes the plugin's wazero runtime and its own cache.
func (p *Plugin) closeRuntime(ctx context.Context) error {
	p.mu.Lock()
	code := p.code
	p.code = nil
	p.mu.Unlock()
	return code.close(ctx)
}

// checkModuleShape checks imports and exports against the ABI before any
// instance exists. Each refusal names the fix in every language with an
// SDK, since the cause is usually a build flag.
func checkModuleShape(cm wazero.CompiledModule) error {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != ImportModule && mod != wasi_snapshot_preview1.ModuleName {
			return fmt.Errorf("the module imports %s.%s, which the host does not provide (only apconnect.input, output and log "+
				"and wasi_snapshot_preview1 exist); in Rust and C an extern function that nothing defines becomes such an import: "+
				"define it or stop calling it", mod, name)
		}
	}
	for _, m := range cm.ImportedMemories() {
		mod, name, _ := m.Import()
		return fmt.Errorf("the module imports memory %s.%s; it must define and export its own (C: drop -Wl,--import-memory; "+
			"Rust: drop -C link-arg=--import-memory)", mod, name)
	}
	exports := cm.ExportedFunctions()
	if _, ok := exports["_start"]; ok {
		return fmt.Errorf("the module is a WASI command (exports _start); build a reactor: " +
			"Go: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared; " +
			"Rust: rustc --crate-type cdylib (Cargo: crate-type = [\"cdylib\"]), with no fn main; " +
			"C: clang --target=wasm32-wasi -mexec-model=reactor, with no main (docs/PLUGINS.md, section 2)")
	}
	want := map[string]struct{ params, results []api.ValueType }{
		ExportABIVersion: {nil, []api.ValueType{api.ValueTypeI32}},
		ExportCall:       {[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	}
	sigs := map[string]string{ExportABIVersion: "() -> i32", ExportCall: "(op: i32, in_len: i32) -> i32"}
	for _, name := range []string{ExportABIVersion, ExportCall} {
		f, ok := exports[name]
		if !ok {
			return fmt.Errorf("the module does not export %s: Go: import apconnect/sdk-guest/plugin and call plugin.Register; "+
				"Rust: use the apconnect_plugin crate and export_plugin!(your_fn); "+
				"C: compile sdk-guest/c/apconnect_plugin.c into the module and define AP_PLUGIN(...)", name)
		}
		w := want[name]
		if !sameTypes(f.ParamTypes(), w.params) || !sameTypes(f.ResultTypes(), w.results) {
			return fmt.Errorf("export %s has the wrong signature (ABI version 1 wants %s)", name, sigs[name])
		}
	}
	if len(cm.ExportedMemories()) == 0 {
		return fmt.Errorf("the module exports no memory (C: drop -Wl,--no-export-memory or an --export list without memory)")
	}
	if f, ok := exports[exportInitialize]; ok && (len(f.ParamTypes()) != 0 || len(f.ResultTypes()) != 0) {
		return fmt.Errorf("export %s has the wrong signature (it takes and returns nothing)", exportInitialize)
	}
	return nil
}

// exportInitialize is a reactor's initialisation export (WASI).
const exportInitialize = "_initialize"

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// spawn instantiates a fresh instance within timeout: no arguments, no
// environment, no files, no sockets, fake clocks, deterministic randomness,
// stdout and stderr into the ring log. Instantiation runs no guest code;
// spawn sets the instance's stack limit, then runs the module's start
// function, _initialize and apconnect_abi_version, all within timeout. A
// call that needs a new instance passes its own deadline, so that creating
// the instance counts against it.
func (p *Plugin) spawn(ctx context.Context, timeout time.Duration) (*instance, error) {
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer context.AfterFunc(p.life, cancel)() // Close stops it too
	logMark := p.log.count()
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdout(p.stdout).
		WithStderr(p.stderr)
	fail := func(inst *instance, what string, err error) error {
		code := CodeTrap
		msg := firstLine(err.Error())
		var exit *sys.ExitError
		switch {
		case p.isClosed():
			code, msg = CodeClosed, "the plugin was closed"
		case ctx.Err() != nil:
			code = CodeCanceled
		case ictx.Err() != nil:
			code, msg = CodeTimeout, fmt.Sprintf("did not finish within %v", timeout)
		case inst != nil && inst.stackExhausted():
			msg = p.stackMessage()
		case errors.As(err, &exit):
			msg = fmt.Sprintf("exited with code %d", exit.ExitCode())
		}
		if inst != nil {
			_ = inst.mod.Close(context.WithoutCancel(ctx))
		}
		return p.err(code, 0, "%s: %s%s", what, msg, p.stderrHint(logMark))
	}
	p.mu.Lock()
	code := p.code
	p.mu.Unlock()
	if code == nil {
		return nil, p.err(CodeClosed, 0, "the plugin is closed")
	}
	mod, err := code.wrt.InstantiateModule(experimental.WithMemoryAllocator(ictx, p.memory), code.module, cfg)
	if err != nil {
		return nil, fail(nil, "cannot instantiate", err)
	}
	inst := &instance{
		mod:    mod,
		call:   mod.ExportedFunction(ExportCall),
		budget: mod.ExportedGlobal(wasmguard.StackExport).(api.MutableGlobal),
		stop:   mod.ExportedGlobal(wasmguard.StopExport).(api.MutableGlobal),
		fuel:   mod.ExportedGlobal(wasmguard.FuelExport).(api.MutableGlobal),
	}
	inst.budget.Set(p.limits.StackBytes)
	release := inst.stopWhenDone(ictx)
	defer release()
	for _, name := range []string{wasmguard.StartExport, exportInitialize} {
		if f := mod.ExportedFunction(name); f != nil {
			if _, err := f.Call(ictx); err != nil {
				what := "cannot instantiate: " + name + " failed"
				if name == wasmguard.StartExport {
					what = "cannot instantiate: the start function failed"
				}
				return nil, fail(inst, what, err)
			}
		}
	}
	res, err := mod.ExportedFunction(ExportABIVersion).Call(ictx)
	if err != nil {
		return nil, fail(inst, ExportABIVersion+" failed", err)
	}
	if v := api.DecodeI32(res[0]); v != ABIVersion {
		_ = mod.Close(ctx)
		return nil, p.err(CodeInvalidModule, 0, "the module speaks ABI version %d; this host speaks %d", v, ABIVersion)
	}
	return inst, nil
}

// stackMessage describes an exhausted call stack.
func (p *Plugin) stackMessage() string {
	return fmt.Sprintf("call stack exhausted: the guest's active calls passed its stack limit of %d KiB (recursion too deep)", p.limits.StackBytes>>10)
}

// Name returns the plugin's described name.
func (p *Plugin) Name() string { return p.desc.Name }

// Source returns the path (or source label) the plugin was loaded from.
func (p *Plugin) Source() string { return p.source }

// Digest returns the hex SHA-256 of the plugin module.
func (p *Plugin) Digest() string { return p.digest }

// FromCache reports whether loading the plugin compiled nothing: its
// description came from the Runtime's sealed on-disk cache
// (Options.CacheDir) and, once it is compiled (Ready), its compiled code
// too. It is false after a compilation, and always with an in-memory or
// shared cache (Options.Cache), where the Runtime cannot tell.
func (p *Plugin) FromCache() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fromCache
}

// Grants returns the plugin's grants.
func (p *Plugin) Grants() Grants { return p.grants }

// Limits returns the plugin's effective limits.
func (p *Plugin) Limits() Limits { return p.limits }

// Description returns a copy of the checked description.
func (p *Plugin) Description() *Description {
	d := *p.desc
	return &d
}

// Close closes every instance and the plugin's wazero runtime. Calls in
// flight fail; later calls fail with CodeClosed.
func (p *Plugin) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.endLife()
	p.rt.forget(p)
	return p.closeRuntime(ctx)
}

func (p *Plugin) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// label names the plugin in errors: its name once described, else its source.
func (p *Plugin) label() string {
	if p.desc != nil {
		return p.desc.Name
	}
	return p.source
}

func (p *Plugin) err(code Code, op Op, format string, args ...any) *Error {
	opName := "load"
	if op != 0 {
		opName = op.String()
	}
	return errorf(code, p.label(), opName, format, args...)
}

func (p *Plugin) loadErr(code Code, format string, args ...any) *Error {
	return errorf(code, p.source, "load", format, args...)
}

// stderrHint returns the first line the guest wrote to stderr after log
// line n that explains a crash ("fatal error: out of memory", "panic: ..."),
// formatted for an error message, or "".
func (p *Plugin) stderrHint(n uint64) string {
	for _, l := range p.log.since(n) {
		if l.Source != "stderr" {
			continue
		}
		for _, prefix := range []string{"panic:", "fatal error:", "runtime:", "error:"} {
			if strings.HasPrefix(l.Text, prefix) {
				return "; guest stderr: " + l.Text
			}
		}
	}
	return ""
}

// Warm instantiates instances until n (at most MaxInstances) exist, so that
// the first calls after start do not pay for instantiation (about 20 ms for
// a Go plugin). Failures are returned and counted like call failures.
func (p *Plugin) Warm(ctx context.Context, n int) error {
	if err := p.awaitReady(ctx, 0); err != nil {
		return err
	}
	n = min(n, p.limits.MaxInstances)
	for p.pool.size() < n {
		if p.isClosed() {
			return p.err(CodeClosed, 0, "the plugin is closed")
		}
		inst, err := p.spawn(ctx, p.limits.LoadTimeout)
		if err != nil {
			return err
		}
		if !p.pool.adoptIfRoom(inst, n) {
			_ = inst.mod.Close(ctx)
			return nil
		}
	}
	return nil
}
