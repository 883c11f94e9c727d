package plugin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Plugin is one loaded plugin: its checked description, its instance pool
// and its health. It implements Validator, Watcher, ToolProvider and
// PackProvider; every method is safe for concurrent use. An operation the
// plugin did not describe (or was not granted) fails with CodeUnknown.
type Plugin struct {
	rt       *Runtime
	source   string
	digest   string
	grants   Grants
	limits   Limits
	wrt      wazero.Runtime
	compiled wazero.CompiledModule
	pool     *pool
	log      *ringLog
	stdout   *lineWriter
	stderr   *lineWriter
	loadedAt time.Time

	// Set once by describe during load, read-only afterwards.
	desc      *Description
	tools     map[string]*toolEntry
	validates map[string]bool
	watches   map[string]bool
	proposes  map[string]bool
	packs     map[string]*Pack

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

func newPlugin(ctx context.Context, rt *Runtime, source string, wasm []byte, digest string, grants Grants, limits Limits) (_ *Plugin, err error) {
	p := &Plugin{
		rt:       rt,
		source:   source,
		digest:   digest,
		grants:   grants,
		limits:   limits,
		pool:     newPool(limits.MaxInstances),
		log:      newRingLog(limits.LogLines, rt.opts.Now),
		loadedAt: rt.opts.Now(),
	}
	p.stdout = &lineWriter{log: p.log, source: "stdout", level: "info"}
	p.stderr = &lineWriter{log: p.log, source: "stderr", level: "error"}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(rt.cache).
		WithMemoryLimitPages(limits.memoryPages()).
		WithCloseOnContextDone(true)
	p.wrt = wazero.NewRuntimeWithConfig(ctx, cfg)
	defer func() {
		if err != nil {
			_ = p.wrt.Close(ctx)
		}
	}()
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, p.wrt); err != nil {
		return nil, p.loadErr(CodeInvalidModule, "cannot provide WASI: %v", err)
	}
	if err := instantiateHostModule(ctx, p.wrt); err != nil {
		return nil, p.loadErr(CodeInvalidModule, "cannot provide the host module: %v", err)
	}
	lctx, cancel := context.WithTimeout(ctx, limits.LoadTimeout)
	defer cancel()
	p.compiled, err = p.wrt.CompileModule(lctx, wasm)
	if err != nil {
		return nil, p.loadErr(CodeInvalidModule, "not a valid WebAssembly module: %v", err)
	}
	if err := checkModuleShape(p.compiled); err != nil {
		return nil, p.loadErr(CodeInvalidModule, "%v", err)
	}
	// The first instance proves the module initialises within the limits;
	// it serves describe and stays in the pool.
	inst, err := p.spawn(ctx)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Code != CodeInvalidModule {
			e.Code, e.Message = CodeInvalidModule, "first instance: "+e.Message
		}
		return nil, err
	}
	p.pool.adopt(inst)
	if err := p.describe(ctx); err != nil {
		return nil, err
	}
	return p, nil
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
	return nil
}

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

// spawn instantiates a fresh instance: no arguments, no environment, no
// files, no sockets, fake clocks, deterministic randomness, stdout and
// stderr into the ring log.
func (p *Plugin) spawn(ctx context.Context) (*instance, error) {
	ictx, cancel := context.WithTimeout(ctx, p.limits.LoadTimeout)
	defer cancel()
	logMark := p.log.count()
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithStdout(p.stdout).
		WithStderr(p.stderr)
	mod, err := p.wrt.InstantiateModule(ictx, p.compiled, cfg)
	if err != nil {
		code := CodeTrap
		switch {
		case ctx.Err() != nil:
			code = CodeCanceled
		case ictx.Err() != nil:
			code = CodeTimeout
		}
		return nil, p.err(code, 0, "cannot instantiate: %s%s", firstLine(err.Error()), p.stderrHint(logMark))
	}
	res, err := mod.ExportedFunction(ExportABIVersion).Call(ictx)
	if err != nil {
		_ = mod.Close(ctx)
		return nil, p.err(CodeTrap, 0, "%s failed: %s", ExportABIVersion, firstLine(err.Error()))
	}
	if v := api.DecodeI32(res[0]); v != ABIVersion {
		_ = mod.Close(ctx)
		return nil, p.err(CodeInvalidModule, 0, "the module speaks ABI version %d; this host speaks %d", v, ABIVersion)
	}
	return &instance{mod: mod, call: mod.ExportedFunction(ExportCall)}, nil
}

// Name returns the plugin's described name.
func (p *Plugin) Name() string { return p.desc.Name }

// Source returns the path (or source label) the plugin was loaded from.
func (p *Plugin) Source() string { return p.source }

// Digest returns the hex SHA-256 of the plugin module.
func (p *Plugin) Digest() string { return p.digest }

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
	p.rt.forget(p)
	return p.wrt.Close(ctx)
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
	n = min(n, p.limits.MaxInstances)
	for p.pool.size() < n {
		if p.isClosed() {
			return p.err(CodeClosed, 0, "the plugin is closed")
		}
		inst, err := p.spawn(ctx)
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
