package plugin_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

func TestLoadChecksTheDigest(t *testing.T) {
	wasm := plugintest.Build(t, fullDir)
	rt := plugintest.Runtime(t)
	data, _ := os.ReadFile(wasm)
	good := plugin.Digest(data)

	wrong := strings.Repeat("0", 64)
	_, err := rt.Load(ctx(), wasm, wrong, allGrants, plugin.Limits{})
	wantCode(t, err, plugin.CodeDigestMismatch, good, wrong)

	// A changed file is refused even with the old digest.
	tampered := filepath.Join(t.TempDir(), "tampered.wasm")
	os.WriteFile(tampered, append(slices.Clone(data), 0), 0o600)
	_, err = rt.Load(ctx(), tampered, good, allGrants, plugin.Limits{})
	wantCode(t, err, plugin.CodeDigestMismatch)

	_, err = rt.Load(ctx(), wasm, "sha256:xyz", allGrants, plugin.Limits{})
	wantCode(t, err, plugin.CodeInvalidConfig, "not 64 hexadecimal digits")
	_, err = rt.Load(ctx(), filepath.Join(t.TempDir(), "missing.wasm"), good, allGrants, plugin.Limits{})
	wantCode(t, err, plugin.CodeUnreadable)

	// The prefixed, upper-case form of the right digest loads.
	p, err := rt.Load(ctx(), wasm, "sha256:"+strings.ToUpper(good), allGrants, plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx())
	if p.Digest() != good || p.Name() != "full" || p.Description().Version != "1.2.3" {
		t.Errorf("loaded %s %s %s", p.Name(), p.Description().Version, p.Digest())
	}
}

func TestLoadRefusesClaimsBeyondGrants(t *testing.T) {
	wasm := plugintest.Build(t, fullDir)
	cases := []struct {
		drop  func(g *plugin.Grants)
		fragm []string
	}{
		{func(g *plugin.Grants) { g.Validate = false }, []string{"validates demo.loop, demo.panic, demo.vote", `"validate"`}},
		{func(g *plugin.Grants) { g.Watch = false }, []string{"watches demo.bench", `"watch"`}},
		{func(g *plugin.Grants) { g.Tools = false }, []string{`adds tool "echo"`, `"tools"`}},
		{func(g *plugin.Grants) { g.Packs = false }, []string{`pack "demo:polls"`, `"packs"`}},
		{func(g *plugin.Grants) { g.Propose = nil }, []string{"proposes demo.vote", `"propose:demo.vote"`}},
		{func(g *plugin.Grants) { g.Propose = []string{"demo.poll"} }, []string{`"propose:demo.vote"`}},
	}
	for _, c := range cases {
		g := allGrants
		g.Propose = slices.Clone(g.Propose)
		c.drop(&g)
		_, err := plugintest.TryLoad(t, plugintest.Runtime(t), wasm, g, plugin.Limits{})
		e := wantCode(t, err, plugin.CodeNotGranted, c.fragm...)
		if e.Plugin != "full" || e.Op != "describe" {
			t.Errorf("error names plugin %q op %q", e.Plugin, e.Op)
		}
	}
	// Extra grants are fine, but propose nothing the plugin did not
	// describe.
	g := allGrants
	g.Propose = []string{"demo.vote", "other.type"}
	p := plugintest.LoadWith(t, plugintest.Runtime(t), wasm, g, plugin.Limits{})
	if !p.CanPropose("propose", "demo.vote") || p.CanPropose("propose", "other.type") {
		t.Error("CanPropose: a grant without the description counts")
	}
}

func TestLoadRefusesMalformedModules(t *testing.T) {
	cases := []struct {
		name   string
		mod    func() []byte
		limits plugin.Limits
		frag   string
	}{
		{"not wasm", func() []byte { return []byte("#!/bin/sh\necho hi\n") }, plugin.Limits{}, "not a valid WebAssembly module"},
		{"wrong ABI version", func() []byte {
			m := reactor()
			m.funcs[0].body = i32Const(2)
			return m.bytes()
		}, plugin.Limits{}, "ABI version 2"},
		{"missing call export", func() []byte {
			m := reactor()
			m.exports = slices.DeleteFunc(m.exports, func(e wasmExport) bool { return e.name == "apconnect_call" })
			return m.bytes()
		}, plugin.Limits{}, "does not export apconnect_call"},
		{"wrong call signature", func() []byte {
			m := reactor()
			m.funcs[1] = wasmFunc{sig: ">i", body: i32Const(0)}
			return m.bytes()
		}, plugin.Limits{}, "wrong signature"},
		{"command module", func() []byte {
			m := reactor()
			m.funcs = append(m.funcs, wasmFunc{sig: ">"})
			m.exports = append(m.exports, wasmExport{name: "_start", idx: 2})
			return m.bytes()
		}, plugin.Limits{}, "WASI command"},
		{"foreign import", func() []byte {
			m := reactor()
			m.imports = []wasmImport{{"env", "open_socket", ">"}}
			for i := range m.exports {
				if m.exports[i].kind == 0 {
					m.exports[i].idx++
				}
			}
			return m.bytes()
		}, plugin.Limits{}, "imports env.open_socket"},
		{"no memory", func() []byte {
			m := reactor()
			m.memory = false
			m.exports = m.exports[:2]
			return m.bytes()
		}, plugin.Limits{}, "exports no memory"},
		{"initialiser that never ends", func() []byte {
			m := reactor()
			m.funcs = append(m.funcs, wasmFunc{sig: ">", body: spinBody})
			m.exports = append(m.exports, wasmExport{name: "_initialize", idx: 2})
			return m.bytes()
		}, plugin.Limits{LoadTimeout: 200 * time.Millisecond}, "cannot instantiate"},
		{"call without output", reactor().bytes, plugin.Limits{}, "without output"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadBytes(t, c.mod(), plugin.AllGrants(), c.limits)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), c.frag) {
				t.Errorf("error %q does not mention %q", err, c.frag)
			}
			if code := plugin.CodeOf(err); code != plugin.CodeInvalidModule && code != plugin.CodeInvalidDescription {
				t.Errorf("code %s", code)
			}
		})
	}
}

func TestLoadRefusesTooLittleMemory(t *testing.T) {
	// A Go guest declares about 2.6 MiB of initial memory.
	_, err := plugintest.TryLoad(t, plugintest.Runtime(t), plugintest.Build(t, fullDir), allGrants, plugin.Limits{MemoryBytes: 1 << 20})
	wantCode(t, err, plugin.CodeInvalidModule)
}

func TestLoadRefusesBadLimits(t *testing.T) {
	wasm := plugintest.Build(t, fullDir)
	for _, l := range []plugin.Limits{{MaxInstances: 100}, {MaxOutputDepth: 1000}, {MaxInputBytes: 10}, {MemoryBytes: 1}} {
		_, err := plugintest.TryLoad(t, plugintest.Runtime(t), wasm, allGrants, l)
		wantCode(t, err, plugin.CodeInvalidConfig)
	}
}

func TestInspect(t *testing.T) {
	wasm := plugintest.Build(t, fullDir)
	in, err := plugintest.Runtime(t).Inspect(ctx(), wasm, plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(wasm)
	if in.Digest != plugin.Digest(data) || in.Size != len(data) || in.Description.Name != "full" {
		t.Errorf("inspection %+v", in)
	}
	want := []string{"validate", "watch", "tools", "packs", "propose:demo.vote"}
	if got := in.Grants.Strings(); !slices.Equal(got, want) {
		t.Errorf("grants %v, want %v", got, want)
	}
	// The grants Inspect derived load the plugin.
	plugintest.LoadWith(t, plugintest.Runtime(t), wasm, in.Grants, plugin.Limits{})
}

func TestParseGrants(t *testing.T) {
	g, err := plugin.ParseGrants([]string{"watch", "propose:poll.vote", "validate", "propose:claim.update"})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Watch || !g.Validate || g.Tools || !g.CanPropose("poll.vote") || !g.ProposesAny() {
		t.Errorf("%+v", g)
	}
	if got := strings.Join(g.Strings(), " "); got != "validate watch propose:claim.update propose:poll.vote" {
		t.Errorf("Strings = %s", got)
	}
	for _, bad := range [][]string{{"root"}, {"watch", "watch"}, {"propose:"}, {"propose:Poll"}, {"propose:nodot"}} {
		if _, err := plugin.ParseGrants(bad); err == nil {
			t.Errorf("ParseGrants(%q) accepted", bad)
		}
	}
}
