package plugin

import (
	"context"

	"github.com/tetratelabs/wazero"
)

// A cold start without blocking on the compiler.
//
// Compiling a Go plugin takes over a second of CPU (the Go runtime alone
// is 1.8 MB of WebAssembly); a start that finds no description of a module
// in the sealed cache would wait for that before it can list the plugin's
// tools. wazero's interpreter prepares the same module about ten times
// faster (it validates and translates it, with no register allocation or
// machine code), and its instance behaves as the compiled one, slower:
// the sandbox is the same (the module as wasmguard rewrote it, the same
// host module and WASI, the memory cap, the stack budget, the deadline),
// so the interpreted first instance proves that the module initialises
// within the limits and answers describe, whose output the load checks as
// usual, and which the sealed cache keeps for the next starts. The
// interpreter is then dropped: Ready compiles the module (into the sealed
// cache) and its first compiled instance must describe it the same, byte
// for byte, before any call runs — otherwise the plugin fails closed and
// the description leaves the cache.

// describeInterpreted instantiates guarded in the interpreter within
// LoadTimeout, asks it to describe itself and installs the checked
// description (p.descOut). The interpreter's runtime and instance are
// closed before it returns.
func (p *Plugin) describeInterpreted(ctx context.Context, guarded []byte) error {
	code, err := p.compileIn(ctx, wazero.NewRuntimeConfigInterpreter(), nil, guarded)
	if err != nil {
		return err
	}
	defer code.close(ctx)
	if err := checkModuleShape(code.module); err != nil {
		return p.loadErr(CodeInvalidModule, "%v", err)
	}
	// The plugin is not published yet: its pool and code are the
	// interpreter's until describe returned.
	p.mu.Lock()
	p.code = code
	p.mu.Unlock()
	defer func() {
		p.pool.drain(ctx)
		p.pool = newPool(p.limits.MaxInstances)
		p.mu.Lock()
		p.code = nil
		p.mu.Unlock()
	}()
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
	if err := p.describeFrom(out); err != nil {
		return err
	}
	p.descOut = out
	p.rt.keepDescription(p.digest, out)
	return nil
}
