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
// entries in it (the five are described from the cache: nothing is
// compiled or instantiated), "cold" with the cache removed before each
// load (each described by an interpreted instance, GOMAXPROCS at a time).
// It isolates what test/e2e's BenchmarkStartToToolsPlugins measures end to
// end, for profiling (-cpuprofile). "warm-ready" and "cold-ready" add what
// the load defers: compiling each plugin (from the cache, or afresh) and
// starting its first instance (pluginhost's background warm-up, or the
// first calls).
func BenchmarkLoadFirstParty(b *testing.B) {
	var entries []config.Plugin
	for _, name := range []string{"reactions", "deliberation", "curation", "moderation", "realtime"} {
		entries = append(entries, entry(b, name, plugintest.Build(b, "../../plugins/"+name), "validate", "watch", "tools"))
	}
	cfg := newConfig(b, entries...)
	load := func(b *testing.B, warm, ready bool) {
		set := pluginhost.Load(ctx, cfg, pluginhost.Options{NoWarmUp: true})
		defer set.Close(ctx)
		if n := len(set.Registry.Plugins()); n != len(entries) {
			for _, e := range set.Entries {
				b.Log(e.Config.Name, e.Err)
			}
			b.Fatalf("%d plugins loaded", n)
		}
		for _, p := range set.Registry.Plugins() {
			if ready {
				if err := p.Ready(ctx); err != nil {
					b.Fatal(err)
				}
			}
			if p.FromCache() != warm || p.Lazy() == ready {
				b.Fatalf("%s: from the cache %v, lazy %v (warm %v, ready %v)", p.Name(), p.FromCache(), p.Lazy(), warm, ready)
			}
		}
	}
	cache := pluginhost.CacheDir(cfg)
	b.Run("warm", func(b *testing.B) {
		load(b, false, true) // fills the cache
		for b.Loop() {
			load(b, true, false)
		}
	})
	b.Run("warm-ready", func(b *testing.B) {
		for b.Loop() {
			load(b, true, true)
		}
	})
	for _, ready := range []bool{false, true} {
		name := map[bool]string{false: "cold", true: "cold-ready"}[ready]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if err := os.RemoveAll(cache); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				load(b, false, ready)
			}
		})
	}
}
