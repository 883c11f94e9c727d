package pluginhost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
	"apconnect/host/pluginhost"
)

var ctx = context.Background()

// entry is a [[plugins]] entry for the module at path, pinning its digest.
func entry(t testing.TB, name, path string, grants ...string) config.Plugin {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return config.Plugin{Name: name, Path: path, SHA256: plugin.Digest(data), Grants: grants, Limits: config.DefaultPluginLimits(), Enabled: true}
}

func newConfig(t testing.TB, plugins ...config.Plugin) *config.Config {
	t.Helper()
	cfg, err := config.Default(t.TempDir(), config.DefaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins = plugins
	return cfg
}

func load(t *testing.T, cfg *config.Config, parallel int) *pluginhost.Set {
	t.Helper()
	set := pluginhost.Load(ctx, cfg, pluginhost.Options{Cache: plugintest.CompilationCache(), Parallel: parallel,
		Limits: func(_ string, l *plugin.Limits) { l.LoadTimeout = time.Minute }})
	t.Cleanup(func() { _ = set.Close(ctx) })
	return set
}

// Every enabled entry is loaded; each refusal is recorded with its reason
// and code, and the others load anyway. The entries and the registry keep
// the config's order however many plugins load at once.
func TestLoad(t *testing.T) {
	for _, parallel := range []int{1, 3, 0} {
		t.Run(fmt.Sprintf("parallel=%d", parallel), func(t *testing.T) { testLoad(t, parallel) })
	}
}

func testLoad(t *testing.T, parallel int) {
	delib := plugintest.Build(t, "../../plugins/deliberation")
	hello := plugintest.Build(t, "../../examples/plugins/hello")
	badpack := plugintest.Build(t, "testdata/badpack")

	wrongDigest := entry(t, "reactions", delib, "validate", "watch", "tools")
	wrongDigest.SHA256 = strings.Repeat("ab", 32)
	disabled := entry(t, "standup", hello)
	disabled.Enabled = false
	limits := entry(t, "deliberation", delib, "validate", "watch", "tools")
	limits.Limits.ValidateMS = 1234
	cfg := newConfig(t,
		limits,
		wrongDigest,
		entry(t, "hello", hello, "validate"), // describes more than it is granted
		entry(t, "curation", delib, "validate", "watch", "tools"), // the module is not the plugin the config names
		entry(t, "badpack", badpack, "packs"),                     // a pack type against the ADP type schema profile
		entry(t, "other", hello, "validate", "watch", "bogus"),    // a grant that does not parse
		config.Plugin{Name: "missing", Path: filepath.Join(t.TempDir(), "none.wasm"), SHA256: strings.Repeat("0", 64), Enabled: true}, // no file
		disabled,
	)
	set := load(t, cfg, parallel)

	want := []struct {
		name string
		code plugin.Code
		text string
	}{
		{"deliberation", "", ""},
		{"reactions", plugin.CodeDigestMismatch, "the config pins " + strings.Repeat("ab", 32)},
		{"hello", plugin.CodeNotGranted, `not granted "watch"`},
		{"curation", plugin.CodeInvalidConfig, `the config names this plugin "curation" but it describes itself as "deliberation"`},
		{"badpack", plugin.CodeInvalidDescription, "pack test:bad/1.0: type bad.note: "},
		{"other", plugin.CodeInvalidConfig, `unknown grant "bogus"`},
		{"missing", plugin.CodeUnreadable, "none.wasm"},
		{"standup", "", ""},
	}
	if len(set.Entries) != len(want) {
		t.Fatalf("%d entries", len(set.Entries))
	}
	for i, w := range want {
		e := set.Entries[i]
		if e.Config.Name != w.name || plugin.CodeOf(e.Err) != w.code || (w.text != "" && !strings.Contains(e.Err.Error(), w.text)) {
			t.Errorf("entry %d (%s): %v", i, e.Config.Name, e.Err)
		}
	}
	if e := set.Entries[0]; e.Plugin == nil || e.Plugin.Limits().ValidateTimeout != 1234*time.Millisecond ||
		e.Plugin.Limits().MemoryBytes != 64<<20 || e.Plugin.Limits().WatchTimeout != 250*time.Millisecond {
		t.Fatalf("deliberation: %+v", e.Plugin)
	}
	if e := set.Entries[7]; !e.Disabled || e.Plugin != nil || e.Err != nil {
		t.Fatalf("disabled entry %+v", e)
	}
	if ps := set.Registry.Plugins(); len(ps) != 1 || ps[0].Name() != "deliberation" {
		t.Fatalf("registry %s", set.Registry)
	}
	fails := set.Failures()
	if len(fails) != 6 || fails[0].Name != "reactions" || fails[0].Loaded || fails[0].LastErrorCode != plugin.CodeDigestMismatch ||
		len(fails[0].Grants) != 3 || fails[0].Source != delib {
		t.Fatalf("failures %+v", fails)
	}
	if h := set.Health(0); len(h) != 7 || h[0].Name != "deliberation" || !h[0].Loaded || h[1].Name != "reactions" || h[1].Loaded {
		t.Fatalf("health %+v", h)
	}
	if got, want := pluginhost.CacheDir(cfg), filepath.Join(cfg.StateDir(), "plugin-cache"); got != want {
		t.Fatalf("cache dir %s", got)
	}
}

// Plugins loaded concurrently land in the registry in config order, not
// in the order their loads finish (the small hello module compiles far
// faster than the first-party ones before it).
func TestLoadKeepsConfigOrder(t *testing.T) {
	cfg := newConfig(t,
		entry(t, "realtime", plugintest.Build(t, "../../plugins/realtime"), "validate", "watch", "tools"),
		entry(t, "deliberation", plugintest.Build(t, "../../plugins/deliberation"), "validate", "watch", "tools"),
		entry(t, "hello", plugintest.Build(t, "../../examples/plugins/hello"), "validate", "watch", "tools", "packs"),
		entry(t, "curation", plugintest.Build(t, "../../plugins/curation"), "validate", "watch", "tools"),
	)
	set := load(t, cfg, 2)
	var names []string
	for _, p := range set.Registry.Plugins() {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, ","); got != "realtime,deliberation,hello,curation" {
		for _, e := range set.Entries {
			t.Logf("%s: %v", e.Config.Name, e.Err)
		}
		t.Fatalf("registry order %s", got)
	}
	for _, e := range set.Entries {
		if e.Plugin == nil || e.Elapsed <= 0 {
			t.Fatalf("%s: %v (elapsed %s)", e.Config.Name, e.Err, e.Elapsed)
		}
	}
}

// Nothing enabled: no runtime at all.
func TestLoadNothing(t *testing.T) {
	set := pluginhost.Load(ctx, newConfig(t), pluginhost.Options{})
	if set.Runtime != nil || len(set.Registry.Plugins()) != 0 || len(set.Failures()) != 0 || set.Close(ctx) != nil {
		t.Fatalf("%+v", set)
	}
}

// A running apconnect reports its plugins' run-time failures for doctor.
func TestReport(t *testing.T) {
	full := plugintest.Build(t, "../plugin/testdata/full")
	cfg := newConfig(t, entry(t, "full", full, "validate", "watch", "tools", "packs", "propose:demo.vote"))
	set := load(t, cfg, 0)
	p := set.Entries[0].Plugin
	if p == nil {
		t.Fatal(set.Entries[0].Err)
	}
	// The spinning validator fails at the config's deadline.
	if _, err := p.ValidateEvent(ctx, plugin.Proposal{Type: "demo.loop"}, &plugin.RoomContext{RoomID: "r"}); plugin.CodeOf(err) != plugin.CodeTimeout {
		t.Fatalf("spin: %v", err)
	}
	path := pluginhost.ReportPath(cfg, "mcp", "Alice Bot")
	if filepath.Base(path) != "mcp-alice_bot.json" || filepath.Dir(path) != pluginhost.ReportDir(cfg) {
		t.Fatalf("report path %s", path)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		set.KeepReport(rctx, path, "mcp alice", time.Hour, func(err error) { t.Error(err) })
		close(done)
	}()
	cancel()
	<-done
	reports, err := pluginhost.ReadReports(cfg)
	if err != nil || len(reports) != 1 {
		t.Fatalf("reports %v %v", reports, err)
	}
	r := reports[0]
	if r.Process != "mcp alice" || r.PID != os.Getpid() || len(r.Plugins) != 1 || r.Plugins[0].Failures != 1 ||
		r.Plugins[0].FailuresByCode["plugin_timeout"] != 1 || time.Since(r.WrittenAt) > time.Minute {
		t.Fatalf("report %+v", r)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("report file: %v %v", info, err)
	}
}

// The home's compilation cache (state/plugin-cache) is the sealed one: its
// key is private, and an entry copied over a pinned module's is not run.
func TestHomeCompilationCacheIsSealed(t *testing.T) {
	honest := plugintest.BuildWat(t, "../plugin/testdata/cache/honest.wat")
	swapped := plugintest.BuildWat(t, "../plugin/testdata/cache/swapped.wat")
	ping := func(cfg *config.Config) string {
		t.Helper()
		set := pluginhost.Load(ctx, cfg, pluginhost.Options{})
		defer set.Close(ctx)
		p := set.Entries[0].Plugin
		if p == nil {
			t.Fatal(set.Entries[0].Err)
		}
		res, err := p.CallTool(ctx, "ping", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].Text
	}
	cfg := newConfig(t, entry(t, "cached", honest, "tools"))
	if ping(cfg) != "pong" {
		t.Fatal("honest")
	}
	// The same home, the other module: both entries are now in the cache.
	both := *cfg
	both.Plugins = []config.Plugin{entry(t, "cached", swapped, "tools")}
	if ping(&both) != "EVIL" {
		t.Fatal("swapped")
	}
	dir := filepath.Join(pluginhost.CacheDir(cfg), "apconnect-sealed-v1")
	key, err := os.Stat(filepath.Join(dir, "key"))
	if err != nil || key.Mode().Perm() != 0o600 {
		t.Fatalf("cache key: %v %v", key, err)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "*.entry"))
	if len(entries) != 2 {
		t.Fatalf("entries %v", entries)
	}
	// Copy each entry over the other: the pinned modules still run their
	// own code.
	a, _ := os.ReadFile(entries[0])
	b, _ := os.ReadFile(entries[1])
	if err := os.WriteFile(entries[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entries[1], a, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ping(cfg); got != "pong" {
		t.Fatalf("the honest plugin answers %q", got)
	}
	if got := ping(&both); got != "EVIL" {
		t.Fatalf("the other plugin answers %q", got)
	}
}
