package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

const (
	selfID  = "did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
	otherID = "did:agent:Speaker-00000000000000000000000000000000000"
	eventA  = "cJg9aS9kgYX-vm1vpgdjCuaGSffm_EW5RoAJbAbk-ts"
	eventB  = "QmFzZTY0dXJsLXByZXZpb3VzLXJlY29yZC1oYXNoMDA"
	roomID  = "d8ftedhpqhsusbg001tg"
)

// allGrants is everything the test plugin "full" describes.
var allGrants = plugin.Grants{Validate: true, Watch: true, Tools: true, Packs: true, Propose: []string{"demo.vote"}}

// hostileLimits keep the hostile tests fast: a loop in a tool is stopped
// after 300 ms instead of 2 s.
var hostileLimits = plugin.Limits{ToolTimeout: 300 * time.Millisecond}

// Module paths, built once per test binary.
const (
	fullDir  = "testdata/full"
	rawDir   = "testdata/raw"
	helloDir = "../../examples/plugins/hello"
)

func ctx() context.Context { return context.Background() }

// loadFull loads the SDK test plugin with all its grants and limits.
func loadFull(t testing.TB, limits plugin.Limits) *plugin.Plugin {
	t.Helper()
	return plugintest.LoadWith(t, plugintest.Runtime(t), plugintest.Build(t, fullDir), allGrants, limits)
}

func room() *plugin.RoomContext {
	return &plugin.RoomContext{
		RoomID: roomID, Status: "active", Creator: otherID,
		Self:    &plugin.Self{AgentID: selfID, Role: "speaker"},
		Members: []plugin.Member{{AgentID: otherID, Role: "moderator"}, {AgentID: selfID, Role: "speaker"}},
		Types:   []plugin.TypeInfo{{Type: "demo.poll", Kind: "message"}, {Type: "demo.vote", Kind: "signal"}},
	}
}

func payload(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// wantCode fails unless err is an *plugin.Error with code and a message
// containing every fragment.
func wantCode(t *testing.T, err error, code plugin.Code, fragments ...string) *plugin.Error {
	t.Helper()
	var e *plugin.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a %s error, got %v", code, err)
	}
	if e.Code != code {
		t.Fatalf("want code %s, got %s: %v", code, e.Code, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err.Error(), f)
		}
	}
	return e
}

// callText runs a tool of p and returns its first text.
func callText(t *testing.T, p *plugin.Plugin, tool string, args string) string {
	t.Helper()
	res, err := p.CallTool(ctx(), tool, json.RawMessage(args), nil)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.Content[0].Text
}

// healthy checks that p can still make an instance (within the load
// deadline: a call that needs one creates it within its own, which a Go
// plugin under the race detector, about 150 ms, may not meet) and answers
// a normal call.
func healthy(t *testing.T, p *plugin.Plugin) {
	t.Helper()
	if err := p.Warm(ctx(), 1); err != nil {
		t.Fatalf("no new instance after the failure: %v", err)
	}
	if got := callText(t, p, "echo", `{"text":"still here"}`); got != "echo: still here" {
		t.Fatalf("echo after the failure = %q", got)
	}
}

// wasmModule hand-assembles a tiny WebAssembly module, for load-time tests
// of shapes no Go compiler produces.
type wasmModule struct {
	imports []wasmImport
	funcs   []wasmFunc
	memory  bool
	exports []wasmExport
}

type wasmImport struct{ module, name, sig string }

// wasmFunc has a signature like "ii>i" (params > results, i = i32) and a
// body of raw instructions (without locals and end).
type wasmFunc struct {
	sig  string
	body []byte
}

type wasmExport struct {
	name string
	kind byte // 0 function, 2 memory
	idx  int
}

func leb(n int) []byte {
	var out []byte
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func wasmName(s string) []byte { return append(leb(len(s)), s...) }

func wasmVec(items [][]byte) []byte {
	out := leb(len(items))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func wasmSection(id byte, body []byte) []byte {
	return append(append([]byte{id}, leb(len(body))...), body...)
}

func (m wasmModule) bytes() []byte {
	var sigs []string
	sigIndex := func(sig string) int {
		for i, s := range sigs {
			if s == sig {
				return i
			}
		}
		sigs = append(sigs, sig)
		return len(sigs) - 1
	}
	var imports, funcs, codes, exports [][]byte
	for _, im := range m.imports {
		imports = append(imports, append(append(wasmName(im.module), wasmName(im.name)...), append([]byte{0}, leb(sigIndex(im.sig))...)...))
	}
	for _, f := range m.funcs {
		funcs = append(funcs, leb(sigIndex(f.sig)))
		body := append([]byte{0}, f.body...) // no locals
		body = append(body, 0x0b)
		codes = append(codes, append(leb(len(body)), body...))
	}
	for _, e := range m.exports {
		exports = append(exports, append(append(wasmName(e.name), e.kind), leb(e.idx)...))
	}
	var types [][]byte
	for _, s := range sigs {
		params, results, _ := strings.Cut(s, ">")
		t := []byte{0x60}
		t = append(t, leb(len(params))...)
		for range params {
			t = append(t, 0x7f)
		}
		t = append(t, leb(len(results))...)
		for range results {
			t = append(t, 0x7f)
		}
		types = append(types, t)
	}
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	out = append(out, wasmSection(1, wasmVec(types))...)
	if len(imports) > 0 {
		out = append(out, wasmSection(2, wasmVec(imports))...)
	}
	out = append(out, wasmSection(3, wasmVec(funcs))...)
	if m.memory {
		out = append(out, wasmSection(5, wasmVec([][]byte{{0, 1}}))...)
	}
	out = append(out, wasmSection(7, wasmVec(exports))...)
	out = append(out, wasmSection(10, wasmVec(codes))...)
	return out
}

// Instruction snippets.
var (
	i32Const = func(v byte) []byte { return []byte{0x41, v} }
	spinBody = []byte{0x03, 0x40, 0x0c, 0x00, 0x0b} // loop br 0 end
)

// reactor is a well-formed module of the ABI whose functions do nothing
// useful; tests break one thing at a time.
func reactor() wasmModule {
	return wasmModule{
		memory: true,
		funcs: []wasmFunc{
			{sig: ">i", body: i32Const(1)},   // 0 apconnect_abi_version
			{sig: "ii>i", body: i32Const(0)}, // 1 apconnect_call
		},
		exports: []wasmExport{
			{name: "apconnect_abi_version", idx: 0},
			{name: "apconnect_call", idx: 1},
			{name: "memory", kind: 2, idx: 0},
		},
	}
}

func loadBytes(t *testing.T, wasm []byte, grants plugin.Grants, limits plugin.Limits) (*plugin.Plugin, error) {
	t.Helper()
	p, err := plugintest.Runtime(t).LoadBytes(ctx(), t.Name(), wasm, plugin.Digest(wasm), grants, limits)
	if p != nil {
		t.Cleanup(func() { p.Close(ctx()) })
	}
	return p, err
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
