package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// benchRecords are sync-page records of a watched type: ~480 bytes each, a
// tenth of them matching the rule (mentioned and urgent).
func benchRecords(n int, typ string) []plugin.Record {
	recs := make([]plugin.Record, n)
	for i := range recs {
		recs[i] = plugin.Record{
			Seq: int64(i + 1), EventID: eventA, Type: typ, Actor: otherID,
			CreatedAt: 1779753700000, AcceptedAt: 1779753700123,
			Mentions: []string{selfID},
			Payload: json.RawMessage(fmt.Sprintf(`{"text":"Note %d: the retry loop can starve the writer queue under sustained load; see the linked resource.","urgent":%v,"refs":["%s"]}`,
				i, i%10 == 0, eventA)),
		}
	}
	return recs
}

// BenchmarkWatchPerRecord is the cost per record of a watch rule through
// WebAssembly: host encoding, the call, the guest SDK's decoding, the rule,
// and the host's checks of the output. "default" is the production
// configuration; "checked" also validates each watch envelope against its
// schema (Options.CheckWatchInputs, as in tests).
func BenchmarkWatchPerRecord(b *testing.B) {
	wasm := plugintest.Build(b, fullDir)
	for _, mode := range []struct {
		name  string
		check bool
	}{{"default", false}, {"checked", true}} {
		rt, err := plugin.NewRuntime(context.Background(), plugin.Options{CheckWatchInputs: mode.check, Cache: plugintest.CompilationCache()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { rt.Close(context.Background()) })
		// A deadline far beyond the calls: a loaded machine must not fail
		// the benchmark, which measures cost.
		p := plugintest.LoadWith(b, rt, wasm, allGrants, plugin.Limits{WatchTimeout: 10 * time.Second})
		for _, n := range []int{1, 16, 64, 256} {
			b.Run(fmt.Sprintf("%s/batch=%d", mode.name, n), func(b *testing.B) {
				recs := benchRecords(n, "demo.bench")
				r := &plugin.RoomContext{RoomID: roomID, Self: &plugin.Self{AgentID: selfID}}
				for b.Loop() {
					items, err := p.Watch(ctx(), recs, r)
					if err != nil {
						b.Fatal(err)
					}
					if len(items) != (n+9)/10 {
						b.Fatalf("%d items", len(items))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
			})
		}
	}
}

// BenchmarkValidate is one validate call with a room window of 20 records.
func BenchmarkValidate(b *testing.B) {
	p := loadFullB(b)
	r := room()
	for i := range 19 {
		r.Records = append(r.Records, benchRecords(1, "demo.note")[0])
		r.Records[i].Seq = int64(i + 1)
	}
	r.Records = append(r.Records, pollRecord(20, time.Now().Add(time.Hour).UnixMilli()))
	prop := plugin.Proposal{Type: "demo.vote", Actor: selfID, Payload: map[string]any{"poll_event_id": eventB, "option": "yes"}}
	for b.Loop() {
		errs, err := p.ValidateEvent(ctx(), prop, r)
		if err != nil || len(errs) != 0 {
			b.Fatal(errs, err)
		}
	}
}

// BenchmarkToolCall is one call of a small tool with argument and output
// schemas.
func BenchmarkToolCall(b *testing.B) {
	p := loadFullB(b)
	args := json.RawMessage(`{"text":"hello"}`)
	for b.Loop() {
		if _, err := p.CallTool(ctx(), "echo", args, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadWarmCache is a plugin's share of apconnect's start with a warm
// on-disk compilation cache: read and hash the file, load the compiled code,
// instantiate, describe.
func BenchmarkLoadWarmCache(b *testing.B) {
	wasm := plugintest.Build(b, fullDir)
	data, _ := os.ReadFile(wasm)
	digest := plugin.Digest(data)
	dir := b.TempDir()
	warm := func() *plugin.Runtime {
		rt, err := plugin.NewRuntime(ctx(), plugin.Options{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		return rt
	}
	rt := warm()
	if _, err := rt.Load(ctx(), wasm, digest, allGrants, plugin.Limits{}); err != nil {
		b.Fatal(err)
	}
	rt.Close(ctx())
	for b.Loop() {
		rt := warm()
		if _, err := rt.Load(ctx(), wasm, digest, allGrants, plugin.Limits{}); err != nil {
			b.Fatal(err)
		}
		rt.Close(ctx())
	}
}

func loadFullB(b *testing.B) *plugin.Plugin {
	return plugintest.LoadWith(b, plugintest.Runtime(b), plugintest.Build(b, fullDir), allGrants, plugin.Limits{})
}
