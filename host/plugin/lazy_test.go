package plugin_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"apconnect/host/plugin"
	"apconnect/host/plugin/internal/wasmguard"
	"apconnect/host/plugin/plugintest"
)

// These tests cover a start from the sealed cache: the description and
// the rewritten module are kept beside the compiled code, bound to the
// module's digest and to the host's rules, and a plugin described from the
// cache is compiled and instantiated on first use (lazy.go).

// cachedRuntime opens a Runtime on the cache in dir.
func cachedRuntime(t *testing.T, dir string) *plugin.Runtime {
	t.Helper()
	rt, err := plugin.NewRuntime(ctx(), plugin.Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx()) })
	return rt
}

// fillCache loads wasm through the cache in dir and makes it ready, which
// leaves its description, rewritten module and compiled code there.
func fillCache(t *testing.T, dir, wasm string, grants plugin.Grants) *plugin.Plugin {
	t.Helper()
	p, err := cachedRuntime(t, dir).Load(ctx(), wasm, moduleDigest(t, wasm), grants, plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Ready(ctx()); err != nil {
		t.Fatal(err)
	}
	return p
}

func moduleDigest(t *testing.T, wasm string) string {
	t.Helper()
	data, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return plugin.Digest(data)
}

// A start from a warm cache describes the plugin without compiling or
// instantiating it; its first call does both and then behaves as usual.
// A start from an empty cache describes it with an interpreted instance
// and leaves the compilation to Ready too, which fills the cache.
func TestWarmStartDefersCompilation(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	dir := t.TempDir()
	digest := moduleDigest(t, honest)
	rt := cachedRuntime(t, dir)
	first, err := rt.Load(ctx(), honest, digest, plugin.AllGrants(), plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Lazy() || first.FromCache() || first.Health(0).Instances != 0 {
		t.Fatalf("a load through an empty cache: lazy %v, from the cache %v", first.Lazy(), first.FromCache())
	}
	if _, err := os.Stat(plugin.BlobPath(rt, "description", digest, plugin.DescribeBinding)); err != nil {
		t.Fatalf("the interpreted description is not in the cache: %v", err)
	}
	if err := first.Ready(ctx()); err != nil || first.FromCache() || first.Lazy() {
		t.Fatalf("Ready: %v, from the cache %v", err, first.FromCache())
	}
	p, err := cachedRuntime(t, dir).Load(ctx(), honest, digest, plugin.AllGrants(), plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Lazy() || !p.FromCache() {
		t.Fatalf("a load through a warm cache: lazy %v, from the cache %v", p.Lazy(), p.FromCache())
	}
	if h := p.Health(0); h.Instances != 0 || !h.Loaded || h.Calls != 0 {
		t.Fatalf("before its first call: %+v", h)
	}
	if got, want := p.Description(), first.Description(); got.Name != want.Name || len(got.Tools) != 1 || got.Tools[0].MCPName != "cached_ping" {
		t.Fatalf("description from the cache %+v, want %+v", got, want)
	}
	res, err := p.CallTool(ctx(), "ping", nil, nil)
	if err != nil || res.Content[0].Text != "pong" {
		t.Fatalf("first call: %v %v", res, err)
	}
	if p.Lazy() || !p.FromCache() || p.Health(0).Instances != 1 {
		t.Fatalf("after its first call: lazy %v, from the cache %v, %d instances", p.Lazy(), p.FromCache(), p.Health(0).Instances)
	}
}

// The grants are checked against a cached description as against a fresh
// one: a start whose grants no longer cover it refuses the plugin.
func TestCachedDescriptionIsCheckedAgainstGrants(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	dir := t.TempDir()
	digest := moduleDigest(t, honest)
	fillCache(t, dir, honest, plugin.AllGrants())
	_, err := cachedRuntime(t, dir).Load(ctx(), honest, digest, plugin.Grants{Validate: true}, plugin.Limits{})
	var e *plugin.Error
	if !errors.As(err, &e) || e.Code != plugin.CodeNotGranted || !strings.Contains(e.Message, `tool "ping"`) {
		t.Fatalf("want plugin_not_granted naming the tool, got %v", err)
	}
}

// A cached description or rewritten module made for another module, or
// under other host rules (another ABI, another version of the rewrite or
// of the description rules), is never used, even when it is sealed with
// the cache's own key and placed where this module's would be. The
// controls show that the same forgery bound to this module and these rules
// would be used (only a holder of the key can make one).
func TestCacheEntriesOfAnotherDigestOrABIAreNeverUsed(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	swapped := plugintest.BuildWat(t, "testdata/cache/swapped.wat")
	hd, sd := moduleDigest(t, honest), moduleDigest(t, swapped)
	forgedDescription := []byte(`{"name":"forged","version":"1","abi_version":1,"tools":[{"name":"ping","description":"answers","input_schema":{"type":"object"}}]}`)
	swappedData, err := os.ReadFile(swapped)
	if err != nil {
		t.Fatal(err)
	}
	g, err := wasmguard.Instrument(swappedData)
	if err != nil {
		t.Fatal(err)
	}
	forgedModule := g.Module // answers EVIL
	for _, tc := range []struct {
		name, kind, digest, binding string
		data                        []byte
		used                        bool
	}{
		{"description of another digest", "description", sd, plugin.DescribeBinding, forgedDescription, false},
		{"description under another ABI", "description", hd, strings.Replace(plugin.DescribeBinding, "abi1", "abi2", 1), forgedDescription, false},
		{"description under another rewrite", "description", hd, strings.Replace(plugin.DescribeBinding, wasmguard.Version, wasmguard.Version+"x", 1), forgedDescription, false},
		{"description under other description rules", "description", hd, plugin.DescribeBinding + "x", forgedDescription, false},
		{"control: a description bound to this module", "description", hd, plugin.DescribeBinding, forgedDescription, true},
		{"rewritten module of another digest", "guarded", sd, plugin.GuardBinding, forgedModule, false},
		{"rewritten module of another rewrite", "guarded", hd, plugin.GuardBinding + "x", forgedModule, false},
		{"control: a rewritten module bound to this module", "guarded", hd, plugin.GuardBinding, forgedModule, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rt := cachedRuntime(t, dir)
			if p, err := rt.Load(ctx(), honest, hd, plugin.AllGrants(), plugin.Limits{}); err != nil || p.Ready(ctx()) != nil {
				t.Fatal(err)
			}
			// Sealed with this cache's key, bound to tc's digest and
			// binding, at the path of honest's entry of that kind.
			pathBinding := plugin.DescribeBinding
			if tc.kind == "guarded" {
				pathBinding = plugin.GuardBinding
			}
			if err := plugin.SealBlob(rt, tc.kind, tc.digest, tc.binding, pathBinding, tc.data); err != nil {
				t.Fatal(err)
			}
			if tc.digest != hd {
				// Sealed under the other module's name: moved to honest's.
				if err := os.Rename(plugin.BlobPath(rt, tc.kind, tc.digest, pathBinding), plugin.BlobPath(rt, tc.kind, hd, pathBinding)); err != nil {
					t.Fatal(err)
				}
			}
			forged, _ := os.ReadFile(plugin.BlobPath(rt, tc.kind, hd, pathBinding))
			if tc.kind == "guarded" {
				// Without a description the start compiles at once.
				if err := os.Remove(plugin.BlobPath(rt, "description", hd, plugin.DescribeBinding)); err != nil {
					t.Fatal(err)
				}
			}
			p, err := cachedRuntime(t, dir).Load(ctx(), honest, hd, plugin.AllGrants(), plugin.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind == "description" {
				if used := p.Name() == "forged"; used != tc.used {
					t.Fatalf("the plugin describes itself as %q (forged description used: %v, want %v)", p.Name(), used, tc.used)
				}
				if tc.used {
					return
				}
			}
			res, err := p.CallTool(ctx(), "ping", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if used := res.Content[0].Text == "EVIL"; used != tc.used {
				t.Fatalf("ping answers %q (forged module used: %v, want %v)", res.Content[0].Text, used, tc.used)
			}
			if kept, _ := os.ReadFile(plugin.BlobPath(rt, tc.kind, hd, pathBinding)); !tc.used && bytes.Equal(kept, forged) {
				t.Error("the entry that failed its check is still in the cache")
			}
		})
	}
}

// When the module's first instance describes it differently from the
// description the cache kept (sealed with the right key and binding, as a
// describe that depends on now_ms would leave it), the plugin fails closed:
// every call fails with plugin_invalid_description, its health says so,
// and the description is dropped from the cache.
func TestFirstInstanceDisagreeingWithTheCacheFailsClosed(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	hd := moduleDigest(t, honest)
	dir := t.TempDir()
	rt := cachedRuntime(t, dir)
	if p, err := rt.Load(ctx(), honest, hd, plugin.AllGrants(), plugin.Limits{}); err != nil || p.Ready(ctx()) != nil {
		t.Fatal(err)
	}
	other := []byte(`{"name":"cached","version":"2","abi_version":1,"tools":[{"name":"ping","description":"answers","input_schema":{"type":"object"}}]}`)
	if err := plugin.SealBlob(rt, "description", hd, plugin.DescribeBinding, plugin.DescribeBinding, other); err != nil {
		t.Fatal(err)
	}
	p, err := cachedRuntime(t, dir).Load(ctx(), honest, hd, plugin.AllGrants(), plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Description().Version != "2" || !p.Lazy() {
		t.Fatalf("the start did not use the cached description: %+v", p.Description())
	}
	for range 2 {
		_, err = p.CallTool(ctx(), "ping", nil, nil)
		var e *plugin.Error
		if !errors.As(err, &e) || e.Code != plugin.CodeInvalidDescription || e.Op != "tool" || !strings.Contains(e.Message, "describes it differently") {
			t.Fatalf("want plugin_invalid_description, got %v", err)
		}
	}
	if err := p.Ready(ctx()); err == nil {
		t.Fatal("Ready reports no error")
	}
	h := p.Health(0)
	if h.Loaded || h.LastErrorCode != plugin.CodeInvalidDescription || h.Instances != 0 {
		t.Fatalf("health: %+v", h)
	}
	if _, err := os.Stat(plugin.BlobPath(rt, "description", hd, plugin.DescribeBinding)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the disagreeing description is still cached: %v", err)
	}
	// The next start describes the module afresh.
	q, err := cachedRuntime(t, dir).Load(ctx(), honest, hd, plugin.AllGrants(), plugin.Limits{})
	if err != nil || q.FromCache() || q.Description().Version != "1" || q.Ready(ctx()) != nil {
		t.Fatalf("next start: %v", err)
	}
}

// A cached start defers the proof that the module initialises within the
// limits to its first use: a memory cap the module no longer fits makes
// the plugin fail closed there, with the error an eager load gives.
func TestCachedStartChecksTheLimitsOnFirstUse(t *testing.T) {
	wasm := plugintest.BuildWat(t, "testdata/cache/big_memory.wat")
	digest := moduleDigest(t, wasm)
	dir := t.TempDir()
	fillCache(t, dir, wasm, plugin.AllGrants())
	small := plugin.Limits{MemoryBytes: 1 << 20}
	_, eagerErr := plugintest.Runtime(t).Load(ctx(), wasm, digest, plugin.AllGrants(), small)
	var eager *plugin.Error
	if !errors.As(eagerErr, &eager) || eager.Code != plugin.CodeInvalidModule {
		t.Fatalf("an eager load under 1 MiB: %v", eagerErr)
	}
	p, err := cachedRuntime(t, dir).Load(ctx(), wasm, digest, plugin.AllGrants(), small)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.CallTool(ctx(), "ping", nil, nil)
	var e *plugin.Error
	if !errors.As(err, &e) || e.Code != eager.Code || e.Op != "tool" {
		t.Fatalf("first call: %v, want %s", err, eager.Code)
	}
	if h := p.Health(0); h.Loaded || h.LastErrorCode != eager.Code {
		t.Fatalf("health: %+v", h)
	}
}

// A call that waits for its plugin to be compiled reports so to the
// context's progress function.
func TestWaitingCallReportsProgress(t *testing.T) {
	honest := plugintest.BuildWat(t, "testdata/cache/honest.wat")
	digest := moduleDigest(t, honest)
	dir := t.TempDir()
	fillCache(t, dir, honest, plugin.AllGrants())
	p, err := cachedRuntime(t, dir).Load(ctx(), honest, digest, plugin.AllGrants(), plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	pctx := plugin.WithProgress(ctx(), func(m string) { msgs = append(msgs, m) })
	if _, err := p.CallTool(pctx, "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || !strings.Contains(msgs[0], "plugin cached is being compiled") {
		t.Fatalf("progress: %q", msgs)
	}
	msgs = nil
	if _, err := p.CallTool(pctx, "ping", nil, nil); err != nil || len(msgs) != 0 {
		t.Fatalf("a call of a ready plugin reported %q (%v)", msgs, err)
	}
}
