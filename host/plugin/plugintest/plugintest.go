// Package plugintest runs apconnect plugins under the real runtime from go
// test: Build compiles a plugin module for wasip1 exactly as operators will
// (a c-shared reactor), and Load loads the result with the grants a config
// would give it.
//
//	func TestMyPlugin(t *testing.T) {
//		wasm := plugintest.Build(t, ".")
//		p := plugintest.Load(t, wasm, plugin.AllGrants())
//		errs, err := p.ValidateEvent(ctx, proposal, room)
//		...
//	}
//
// Builds are cached per test binary (a cold build takes about 10 s, a cached
// one well under a second), and every Runtime made here shares one
// compilation cache, kept on disk under the user cache directory, so a
// module is compiled to machine code once per machine rather than once per
// test binary (see cache.go); under the race detector, which slows wazero's
// compiler tenfold, Build has a helper built without it fill the cache
// (see precompile.go).
package plugintest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"

	"apconnect/host/plugin"
	"apconnect/host/plugin/internal/gobuild"
)

// Build compiles the plugin in dir as `make build` does and returns the
// path of the .wasm file, a copy in t.TempDir(): a Rust crate (a dir with
// src/lib.rs, such as the first-party plugins of plugins/) with BuildRust,
// otherwise a Go module with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
// The build runs once per directory per test binary; a failed build fails
// the test with the compiler's output.
func Build(t testing.TB, dir string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "src", "lib.rs")); err == nil {
		return BuildRust(t, dir)
	}
	wasm, err := gobuild.Build(dir)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(filepath.Clean(dir))+".wasm")
	if err := os.WriteFile(out, wasm, 0o600); err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	precompile(out, plugin.Digest(wasm))
	return out
}

var (
	sharedOnce  sync.Once
	shared      *plugin.Runtime
	sharedErr   error
	sharedCache = newSharedCache()
)

// Runtime returns the Runtime that Load uses, shared by every test of the
// test binary: real clock, every input envelope checked against its schema
// (Options.CheckWatchInputs). It is never closed.
func Runtime(t testing.TB) *plugin.Runtime {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = plugin.NewRuntime(context.Background(), plugin.Options{CheckWatchInputs: true, Cache: sharedCache})
	})
	if sharedErr != nil {
		t.Fatalf("plugintest: %v", sharedErr)
	}
	return shared
}

// NewRuntime returns a Runtime with opts (CheckWatchInputs forced on), closed
// when the test ends; use it to control the clock. Unless opts names a cache,
// it shares the test binary's compilation cache, so nothing is compiled
// twice.
func NewRuntime(t testing.TB, opts plugin.Options) *plugin.Runtime {
	t.Helper()
	opts.CheckWatchInputs = true
	if opts.Cache == nil && opts.CacheDir == "" {
		opts.Cache = sharedCache
	}
	rt, err := plugin.NewRuntime(context.Background(), opts)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// Load loads the plugin at wasmPath into the shared Runtime with grants and
// default limits, pinning its own digest. The plugin is closed when the test
// ends; a refusal fails the test.
func Load(t testing.TB, wasmPath string, grants plugin.Grants) *plugin.Plugin {
	t.Helper()
	return LoadWith(t, Runtime(t), wasmPath, grants, plugin.Limits{})
}

// LoadWith is Load into rt with limits.
func LoadWith(t testing.TB, rt *plugin.Runtime, wasmPath string, grants plugin.Grants, limits plugin.Limits) *plugin.Plugin {
	t.Helper()
	p, err := TryLoad(t, rt, wasmPath, grants, limits)
	if err != nil {
		t.Fatalf("plugintest: loading %s: %v", wasmPath, err)
	}
	return p
}

// TryLoad is LoadWith that returns the refusal instead of failing, for
// tests of load-time checks. A loaded plugin is closed when the test ends.
func TryLoad(t testing.TB, rt *plugin.Runtime, wasmPath string, grants plugin.Grants, limits plugin.Limits) (*plugin.Plugin, error) {
	t.Helper()
	data, err := os.ReadFile(wasmPath)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	p, err := rt.Load(context.Background(), wasmPath, plugin.Digest(data), grants, limits)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p, nil
}

// CompilationCache returns the compilation cache every Runtime of this
// package uses, for tests that build their own plugin.Options.
func CompilationCache() wazero.CompilationCache { return sharedCache }
