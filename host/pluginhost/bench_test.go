package pluginhost_test

import (
	"os"
	"testing"

	"apconnect/host/config"
	"apconnect/host/plugin/plugintest"
	"apconnect/host/pluginhost"
)

// BenchmarkLoadFirstParty is the plugins' share of an `apconnect mcp`
// start with the five first-party plugins: pluginhost.Load through the
// home's sealed on-disk compilation cache, "warm" with every plugin's
// entry in it, "cold" with the cache removed before each load (all five
// compiled, GOMAXPROCS at a time). It isolates what
// test/e2e's BenchmarkStartToToolsPlugins measures end to end, for
// profiling (-cpuprofile).
func BenchmarkLoadFirstParty(b *testing.B) {
	var entries []config.Plugin
	for _, name := range []string{"reactions", "deliberation", "curation", "moderation", "realtime"} {
		entries = append(entries, entry(b, name, plugintest.Build(b, "../../plugins/"+name), "validate", "watch", "tools"))
	}
	cfg := newConfig(b, entries...)
	load := func(b *testing.B, warm bool) {
		set := pluginhost.Load(ctx, cfg, pluginhost.Options{})
		defer set.Close(ctx)
		if n := len(set.Registry.Plugins()); n != len(entries) {
			for _, e := range set.Entries {
				b.Log(e.Config.Name, e.Err)
			}
			b.Fatalf("%d plugins loaded", n)
		}
		for _, p := range set.Registry.Plugins() {
			if p.FromCache() != warm {
				b.Fatalf("%s: from the cache %v, want %v", p.Name(), p.FromCache(), warm)
			}
		}
	}
	cache := pluginhost.CacheDir(cfg)
	b.Run("warm", func(b *testing.B) {
		load(b, false) // fills the cache
		for b.Loop() {
			load(b, true)
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if err := os.RemoveAll(cache); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			load(b, false)
		}
	})
}
