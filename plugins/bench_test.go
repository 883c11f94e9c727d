package plugins_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// BenchmarkFirstPartyWatch is the cost per record of a sync page of 256
// records through a registry of all five first-party plugins, in the
// production configuration (watch envelopes not schema-checked): 3/8 of
// the page is message.create and reaction.create (watched by none), the
// rest open polls, questions, claim handoffs and session offers. In
// "aimed" every one of those is for this agent and becomes an inbox item
// (the worst case); in "others" only the polls do (every member may vote),
// the rest concern other agents and cost a member read or two each. The
// "go/…" rows run the Go versions of the plugins (examples/plugins).
// Compare with host/plugin's BenchmarkWatchPerRecord.
func BenchmarkFirstPartyWatch(b *testing.B) {
	rt, err := plugin.NewRuntime(ctx(), plugin.Options{Cache: plugintest.CompilationCache(), Now: func() time.Time { return time.UnixMilli(now) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx()) })
	for variant, prefix := range []string{"", "go/"} {
		reg := plugin.NewRegistry(nil)
		for _, fp := range firstParty {
			dir := builds(fp.dir)[variant]
			data, err := os.ReadFile(build(b, dir))
			if err != nil {
				b.Fatal(err)
			}
			grants := plugin.Grants{Validate: true, Watch: true, Tools: true}
			p, err := rt.LoadBytes(ctx(), dir, data, plugin.Digest(data), grants, plugin.Limits{LoadTimeout: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			if err := reg.Add(p); err != nil {
				b.Fatal(err)
			}
		}
		benchWatchPage(b, prefix, reg)
	}
}

// benchWatchPage runs BenchmarkFirstPartyWatch's pages through reg.
func benchWatchPage(b *testing.B, prefix string, reg *plugin.Registry) {
	for _, aimed := range []bool{true, false} {
		target, perspective, name, want := "me", "Developer experience", "aimed", 4*32
		if !aimed {
			target, perspective, name, want = "alice", "Security", "others", 32
		}
		r := newRoom()
		for i := 0; r.lastSeq() < 4+256; i++ {
			n := itoa(int64(i))
			switch i % 8 {
			case 0:
				r.add("poll.create", "alice", with(pollPayload("p"+n, "yes", "no"), "closes_at", now+3600_000))
			case 1:
				r.add("question.create", "bob", obj{"question": "What about " + n + "?", "target_perspectives": []string{perspective}})
			case 2:
				r.add("claim.update", "alice", obj{"claim_id": "c" + n, "owner": agent("bob"), "state": "handoff", "handoff_to": agent(target)})
			case 3:
				r.add("session.offer", "bob", offerPayload("s"+n, []string{agent(target)}, []string{"audio"}))
			case 4:
				r.add("reaction.create", "bob", obj{"event_id": id43("event", n), "reaction": "agree"})
			default:
				r.add("message.create", "bob", obj{"text": "Note " + n + ": the retry loop can starve the writer queue under sustained load."})
			}
		}
		rc := r.base()
		b.Run(prefix+name, func(b *testing.B) {
			for b.Loop() {
				items, errs := reg.Watch(ctx(), r.records, rc)
				if len(errs) != 0 || len(items) != want {
					b.Fatalf("%d items, %v", len(items), errs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/256, "µs/record")
		})
	}
}

// BenchmarkColdStart is the cold start of the reactions plugin
// (plugins/reactions, Rust: "reactions_rust") and of its Go version
// (examples/plugins/reactions_go: "reactions"), and of examples/plugins/hello (the smallest Go module:
// the SDK's ABI core and nothing else), as apconnect pays it for a plugin
// it has never compiled: a new runtime with an empty compilation cache,
// then load (compile, first instance, describe), then close. It also
// reports the module's size. bench/report.json has the ratios.
func BenchmarkColdStart(b *testing.B) {
	type module struct {
		bench, dir, name string
		grants           plugin.Grants
	}
	mods := []module{{bench: "hello", dir: "../examples/plugins/hello", name: "hello",
		grants: plugin.Grants{Validate: true, Watch: true, Tools: true, Packs: true}}}
	// The bench names are those of the report's rows: "reactions" is the
	// Go build, "reactions_rust" the plugin.
	for bench, dir := range map[string]string{"reactions": builds(reactionsDir)[1], "reactions_rust": reactionsDir} {
		mods = append(mods, module{bench: bench, dir: dir, name: "reactions", grants: plugin.Grants{Validate: true, Tools: true}})
	}
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.bench, b.bench) })
	for _, bd := range mods {
		data, err := os.ReadFile(build(b, bd.dir))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bd.bench, func(b *testing.B) {
			for b.Loop() {
				rt, err := plugin.NewRuntime(ctx(), plugin.Options{}) // its own, empty, in-memory cache
				if err != nil {
					b.Fatal(err)
				}
				p, err := rt.LoadBytes(ctx(), bd.dir, data, plugin.Digest(data), bd.grants, plugin.Limits{LoadTimeout: time.Minute})
				if err != nil || p.Name() != bd.name {
					b.Fatal(err)
				}
				if err := rt.Close(ctx()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data)), "module-bytes")
		})
	}
}
