package wasmguard_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"apconnect/host/plugin/internal/gobuild"
	"apconnect/host/plugin/internal/wasmguard"
	"apconnect/host/plugin/plugintest"
)

var ctx = context.Background()

// instantiate instantiates an instrumented module in a fresh runtime as
// the host does: its stack budget set, then its start function run.
func instantiate(t *testing.T, wasm []byte, budget uint64) api.Module {
	t.Helper()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	mod.ExportedGlobal(wasmguard.StackExport).(api.MutableGlobal).Set(budget)
	if f := mod.ExportedFunction(wasmguard.StartExport); f != nil {
		if _, err := f.Call(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return mod
}

// TestInstrumentKeepsBehaviour runs every export of a module that uses
// each kind of instruction immediate in the original and the rewritten
// module: the results must be the same, and the stack budget back where it
// started after each call.
func TestInstrumentKeepsBehaviour(t *testing.T) {
	wasm, err := os.ReadFile(plugintest.BuildWat(t, "testdata/kitchen.wat"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := wasmguard.Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if !res.HasStart || res.Functions < 10 || res.MaxFrame == 0 {
		t.Errorf("result %+v", res)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	orig, err := rt.Instantiate(ctx, wasm) // runs the start function
	if err != nil {
		t.Fatal(err)
	}
	guarded := instantiate(t, res.Module, 1<<20)
	budget := guarded.ExportedGlobal(wasmguard.StackExport)
	exports := orig.ExportedFunctionDefinitions()
	if len(exports) < 10 {
		t.Fatalf("%d exports", len(exports))
	}
	for name := range exports {
		want, err := orig.ExportedFunction(name).Call(ctx)
		if err != nil {
			t.Fatalf("%s (original): %v", name, err)
		}
		got, err := guarded.ExportedFunction(name).Call(ctx)
		if err != nil {
			t.Fatalf("%s (instrumented): %v", name, err)
		}
		if len(got) != len(want) || len(got) > 0 && got[0] != want[0] {
			t.Errorf("%s: instrumented %v, original %v", name, got, want)
		}
		if b := budget.Get(); b != 1<<20 {
			t.Errorf("%s: the stack budget is %d after the call", name, int64(b))
		}
	}
	if got, _ := guarded.ExportedFunction("started").Call(ctx); got[0] != 42 {
		t.Errorf("the start function did not run: %v", got)
	}
}

// TestStackLimit: recursion traps when the counted frames exhaust the
// budget, and a larger budget allows deeper recursion.
func TestStackLimit(t *testing.T) {
	wasm, err := os.ReadFile(plugintest.BuildWat(t, "testdata/kitchen.wat"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := wasmguard.Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	// fib(25) recurses 25 deep; each frame weighs at most MaxFrame.
	enough := 30 * res.MaxFrame
	mod := instantiate(t, res.Module, enough)
	if _, err := mod.ExportedFunction("deep").Call(ctx); err != nil {
		t.Fatalf("fib(25) within %d bytes: %v", enough, err)
	}
	// Far less than 25 frames of fib (each weighs at least 128 bytes).
	mod = instantiate(t, res.Module, 1000)
	_, err = mod.ExportedFunction("deep").Call(ctx)
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("fib(25) within 1000 bytes: %v", err)
	}
	if b := int64(mod.ExportedGlobal(wasmguard.StackExport).Get()); b != -1 {
		t.Errorf("after the trap the budget is %d, not -1", b)
	}
	// A fresh instance starts with a budget of 0: nothing runs before the
	// host sets it.
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	fresh, err := rt.InstantiateWithConfig(ctx, res.Module, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.ExportedFunction("fib").Call(ctx); err == nil {
		t.Error("a call ran before the limit was set")
	}
}

// TestGoPluginInstruments: a real Go plugin (the SDK test plugin) is
// accepted; its instructions are all of the enabled features. (The plugin
// package's tests compile and run it rewritten.)
func TestGoPluginInstruments(t *testing.T) {
	wasm, err := gobuild.Build("../../testdata/full")
	if err != nil {
		t.Fatal(err)
	}
	res, err := wasmguard.Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if res.Functions < 1000 || res.HasStart || len(res.Module) < len(wasm)/2 {
		t.Errorf("result: %d functions, start %v, %d bytes", res.Functions, res.HasStart, len(res.Module))
	}
}

// Hand-assembled modules for refusals wat2wasm cannot write.
func module(sections ...[]byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		out = append(out, s...)
	}
	return out
}

func sec(id byte, body ...byte) []byte {
	return append([]byte{id, byte(len(body))}, body...)
}

func TestRefusals(t *testing.T) {
	manyGlobals := []byte{6}
	{
		n := wasmguard.MaxGlobals + 1
		body := []byte{byte(n&0x7f | 0x80), byte(n>>7&0x7f | 0x80), byte(n >> 14)}
		for range n {
			body = append(body, 0x7f, 0, 0x41, 0, 0x0b)
		}
		size := len(body)
		manyGlobals = append(manyGlobals, byte(size&0x7f|0x80), byte(size>>7&0x7f|0x80), byte(size>>14))
		manyGlobals = append(manyGlobals, body...)
	}
	voidType := sec(1, 1, 0x60, 0, 0)
	oneFunc := sec(3, 1, 0)
	code := func(body ...byte) []byte {
		return sec(10, append([]byte{1, byte(len(body))}, body...)...)
	}
	cases := []struct {
		name string
		wasm []byte
		frag string
	}{
		{"not wasm", []byte("hello world"), "not a WebAssembly binary"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "unsupported binary version"},
		{"truncated section", append(module(), 1, 10, 0), "unexpected end"},
		{"table too large", module(sec(4, 1, 0x70, 0, 0x81, 0x80, 0x04)), "table 0 declares 65537 elements"},
		{"imported table", module(sec(2, 1, 1, 'a', 1, 'b', 1, 0x70, 0, 0)), "imports a table"},
		{"imported global", module(sec(2, 1, 1, 'a', 1, 'b', 3, 0x7f, 0)), "imports a global"},
		{"too many globals", module(manyGlobals), "65537 globals"},
		{"too many locals", module(voidType, oneFunc, code(1, 0x80, 0x80, 0x08, 0x7f, 0x0b)), "more than 65536 locals"},
		{"atomics", module(voidType, oneFunc, code(0, 0xfe, 0x03, 0x00, 0x0b)), "unsupported opcode"},
		{"tail call", module(voidType, oneFunc, code(0, 0x12, 0x00, 0x0b)), "unsupported opcode"},
		{"exceptions", module(voidType, oneFunc, code(0, 0x06, 0x40, 0x0b, 0x0b)), "unsupported opcode"},
		{"typed reference block", module(voidType, oneFunc, code(0, 0x02, 0x63, 0x70, 0x0b, 0x0b)), "unsupported block type"},
		{"bytes after end", module(voidType, oneFunc, code(0, 0x0b, 0x01)), "bytes follow the function's final end"},
		{"body without end", module(voidType, oneFunc, code(0, 0x01)), "ends inside a block"},
		{"overlong LEB", module(voidType, oneFunc, code(0, 0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a, 0x0b)), "longer than 5 bytes"},
		{"start out of range", module(voidType, oneFunc, sec(8, 1), code(0, 0x0b)), "function index 1 is out of range"},
		{"export out of range", module(sec(7, 1, 1, 'x', 3, 0)), "global index 0 is out of range"},
		{"reserved export", module(voidType, oneFunc, sec(7, append(append([]byte{1, byte(len(wasmguard.StartExport))}, wasmguard.StartExport...), 0, 0)...), code(0, 0x0b)), "reserved for the host"},
		{"global.get out of range in data", module(sec(5, 1, 0, 1), sec(11, 1, 0, 0x23, 0, 0x0b, 0)), "global index 0 is out of range"},
		{"ref.func out of range in global", module(sec(6, 1, 0x70, 0, 0xd2, 0, 0x0b)), "function index 0 is out of range"},
		{"section out of order", module(sec(3, 0), sec(1, 0)), "out of order"},
		{"unknown section", module(sec(14, 0)), "unsupported section 14"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := wasmguard.Instrument(c.wasm)
			if err == nil || !errors.Is(err, wasmguard.ErrInvalid) || !strings.Contains(err.Error(), c.frag) {
				t.Fatalf("want a refusal naming %q, got %v", c.frag, err)
			}
		})
	}
}

// TestTablesGetAMaximum: a table without a maximum, or with a larger one,
// gets MaxTableElements; table.grow beyond it fails inside the guest.
func TestTablesGetAMaximum(t *testing.T) {
	// (table 1 funcref) (func (export "grow") (result i32)
	//   (table.grow 0 (ref.null func) (i32.const 100000)))
	wasm := module(
		sec(1, 1, 0x60, 0, 1, 0x7f),
		sec(3, 1, 0),
		sec(4, 1, 0x70, 0, 1),
		sec(7, 1, 4, 'g', 'r', 'o', 'w', 0, 0),
		sec(10, 1, 11, 0, 0xd0, 0x70, 0x41, 0xa0, 0x8d, 0x06, 0xfc, 0x0f, 0x00, 0x0b),
	)
	res, err := wasmguard.Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	mod := instantiate(t, res.Module, 1<<20)
	got, err := mod.ExportedFunction("grow").Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if int32(got[0]) != -1 {
		t.Errorf("table.grow by 100000 returned %d", int32(got[0]))
	}
	if !bytes.Contains(res.Module, []byte{0x70, 1, 1, 0x80, 0x80, 0x04}) {
		t.Error("the table's maximum is not 65536")
	}
}

// FuzzInstrument: no input makes Instrument panic, and what it accepts it
// writes as a module it can read back (the reserved exports then refuse a
// second pass, by design).
func FuzzInstrument(f *testing.F) {
	if wasm, err := os.ReadFile(plugintest.BuildWat(f, "testdata/kitchen.wat")); err == nil {
		f.Add(wasm)
	}
	f.Add(module(sec(1, 1, 0x60, 0, 1, 0x7f), sec(3, 1, 0), sec(10, 1, 4, 0, 0x41, 1, 0x0b)))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, wasm []byte) {
		res, err := wasmguard.Instrument(wasm)
		if err != nil {
			if !errors.Is(err, wasmguard.ErrInvalid) {
				t.Fatalf("an error that is not ErrInvalid: %v", err)
			}
			return
		}
		if _, err := wasmguard.Instrument(res.Module); err == nil || !strings.Contains(err.Error(), "reserved for the host") {
			t.Fatalf("second pass: %v", err)
		}
	})
}

// BenchmarkCallOverhead is the cost of 1000 calls of a leaf function in a
// loop, in the original module and rewritten (the stack accounting adds a
// global read, a compare and two global writes to each call).
func BenchmarkCallOverhead(b *testing.B) {
	wasm, err := os.ReadFile(plugintest.BuildWat(b, "testdata/calls.wat"))
	if err != nil {
		b.Fatal(err)
	}
	res, err := wasmguard.Instrument(wasm)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		wasm []byte
	}{{"original", wasm}, {"guarded", res.Module}} {
		b.Run(c.name, func(b *testing.B) {
			rt := wazero.NewRuntime(ctx)
			defer rt.Close(ctx)
			mod, err := rt.InstantiateWithConfig(ctx, c.wasm, wazero.NewModuleConfig().WithStartFunctions())
			if err != nil {
				b.Fatal(err)
			}
			if g := mod.ExportedGlobal(wasmguard.StackExport); g != nil {
				g.(api.MutableGlobal).Set(1 << 20)
			}
			run := mod.ExportedFunction("run")
			for b.Loop() {
				if _, err := run.Call(ctx, 1000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInstrumentGoPlugin is the rewrite of a real Go plugin (the SDK
// test plugin, about 5 MB), which every load pays.
func BenchmarkInstrumentGoPlugin(b *testing.B) {
	wasm, err := gobuild.Build("../../testdata/full")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := wasmguard.Instrument(wasm); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStopFlag: setting the stop flag (and emptying the fuel) from another
// goroutine ends a guest that spins in a loop and one that recurses without
// a loop and without ever going deep (which no stack budget stops), and a
// guest runs normally while the flag is clear. The runtime has no
// WithCloseOnContextDone: the flag is the only way to stop them, and the
// checkpoints' returns to Go are what lets the test's own goroutines (its
// timers, the garbage collector's stop-the-world) run meanwhile.
func TestStopFlag(t *testing.T) {
	wasm, err := os.ReadFile(plugintest.BuildWat(t, "testdata/stop.wat"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := wasmguard.Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, export := range []string{"spin", "fan"} {
		t.Run(export, func(t *testing.T) {
			mod := instantiate(t, res.Module, 1<<20)
			stop := mod.ExportedGlobal(wasmguard.StopExport).(api.MutableGlobal)
			fuel := mod.ExportedGlobal(wasmguard.FuelExport).(api.MutableGlobal)
			if got, err := mod.ExportedFunction("quick").Call(ctx); err != nil || got[0] != 1000 {
				t.Fatalf("quick: %v %v", got, err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := mod.ExportedFunction(export).Call(ctx)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("%s returned before the flag was set: %v", export, err)
			case <-time.After(50 * time.Millisecond):
			}
			runtime.GC() // a stop-the-world while the guest runs
			start := time.Now()
			stop.Set(1)
			fuel.Set(0)
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "unreachable") {
					t.Fatalf("%s after the flag: %v", export, err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("%s took %v to stop", export, d)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s did not stop", export)
			}
			if b := int64(mod.ExportedGlobal(wasmguard.StackExport).Get()); b == -1 {
				t.Error("a stopped call looks like an exhausted stack")
			}
		})
	}
}
