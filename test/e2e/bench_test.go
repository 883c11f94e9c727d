package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/hub/hubtest"
	"apconnect/host/mcpserver"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
	"apconnect/host/pluginhost"
	"apconnect/host/proto/adp"
	"apconnect/host/toolcatalog"
)

// Benchmarks of the MCP surface as a client sees it. Each reports the
// median (p50-ms) and 90th percentile (p90-ms) of its own measurements;
// test/benchreport holds them to the limits and relates them to a
// strict Ed25519 verification measured in the same run.

// percentiles reports p50 and p90 of durations in milliseconds.
func percentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Nanoseconds()) / 1e6 }
	b.ReportMetric(ms(d[len(d)/2]), "p50-ms")
	b.ReportMetric(ms(d[len(d)*9/10]), "p90-ms")
}

// localRead is the benchmarked tool call: the state of a known room from
// local verified state (it also records the head presented to the session).
func localRead(roomID string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "agent_protocols_room_state", Arguments: map[string]any{"room_id": roomID}}
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, params *mcp.CallToolParams) {
	for range 20 { // warm caches and connections
		if res, err := cs.CallTool(bg, params); err != nil || res.IsError {
			b.Fatalf("warm-up: %v %v", err, res)
		}
	}
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := cs.CallTool(bg, params)
		d = append(d, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
	b.StopTimer()
	percentiles(b, d)
}

// BenchmarkStdioLocalRead is one local read tool call, round trip, from a
// go-sdk client to an `apconnect mcp` process over stdio (target: p50 ≤ 2
// ms).
func BenchmarkStdioLocalRead(b *testing.B) {
	h := startHub(b)
	home := newHome(b, h, "alice")
	p := startMCP(b, home, "alice", procOptions{})
	roomID := createRoom(b, p, h.Origin(), "public", nil)
	benchCalls(b, p.cs, localRead(roomID))
}

// BenchmarkInMemoryLocalRead is the same call to the same server code
// in-process over in-memory transports: the baseline without the process
// boundary and the pipes.
func BenchmarkInMemoryLocalRead(b *testing.B) {
	h := startHub(b)
	cfg, err := config.Default(b.TempDir(), config.DefaultOptions{HostURL: h.Origin(), HostLabel: "hub", HostCAFile: h.CAFile()})
	if err != nil {
		b.Fatal(err)
	}
	conn, err := connector.New(bg, connector.Options{Config: cfg, Signer: hubtest.NewAgent(0xA1).Signer, WriteLimits: &adp.Limits{},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(conn, mcpserver.Options{}).Connect(bg, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(bg, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	now := time.Now().UnixMilli()
	res, err := cs.CallTool(bg, &mcp.CallToolParams{Name: "agent_protocols_room_create", Arguments: map[string]any{"host": h.Origin(),
		"topic": "bench", "visibility": "public", "start_time": now - 1000, "end_time": now + 3600_000}})
	if err != nil || res.IsError {
		b.Fatalf("room_create: %v %v", err, res)
	}
	benchCalls(b, cs, localRead(get(res.StructuredContent, "room", "room_id").(string)))
}

// BenchmarkStartToInitialize is the time from starting `apconnect mcp` to
// its answer to initialize (target: ≤ 200 ms).
func BenchmarkStartToInitialize(b *testing.B) {
	h := startHub(b)
	home := newHome(b, h, "alice")
	d := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "mcp", "--home", home, "--log-level", "warn")
		start := time.Now()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(context.Background(),
			&mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
		b.StopTimer()
		if err := cs.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	percentiles(b, d)
}

// BenchmarkProcessStart is the baseline of BenchmarkStartToInitialize: the
// same binary started and run to completion with `apconnect version`.
func BenchmarkProcessStart(b *testing.B) {
	d := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := exec.Command(bin, "version").Run(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	percentiles(b, d)
}

// pluginHome is a home whose config enables the five first-party plugins,
// built with plugintest and pinned by digest, for the start benchmarks.
func pluginHome(b *testing.B, h *hubtest.Hub) string {
	b.Helper()
	home := newHome(b, h, "alice")
	cfgFile := filepath.Join(home, config.FileName)
	text, err := os.ReadFile(cfgFile)
	if err != nil {
		b.Fatal(err)
	}
	cfgText := strings.Replace(string(text), "plugins = []\n", "", 1)
	for _, name := range firstParty {
		wasm := plugintest.Build(b, pluginDirs[name])
		data, err := os.ReadFile(wasm)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(home, name+".wasm")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		ins, err := plugintest.Runtime(b).Inspect(bg, path, plugin.Limits{LoadTimeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		grants, _ := json.Marshal(ins.Grants.Strings())
		cfgText += fmt.Sprintf("\n[[plugins]]\nname = %q\npath = %q\nsha256 = %q\ngrants = %s\n", name, path, ins.Digest, grants)
	}
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o600); err != nil {
		b.Fatal(err)
	}
	return home
}

// startTimes is what startOnce measures of one start.
type startTimes struct {
	initialized time.Duration // exec to the answer to initialize
	listed      time.Duration // exec to the answer to tools/list
	cpu         time.Duration // the process's user and system CPU time, start to exit
}

// startOnce starts `apconnect mcp` in home, connects, asks for the tool
// list, checks that it holds every plugin tool and stops the process.
func startOnce(b *testing.B, home string, wantTools int) startTimes {
	cmd := exec.Command(bin, "mcp", "--home", home, "--log-level", "warn")
	start := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	initialized := time.Since(start)
	list, err := cs.ListTools(bg, nil)
	listed := time.Since(start)
	b.StopTimer()
	defer b.StartTimer()
	if err != nil || len(list.Tools) != wantTools {
		b.Fatalf("tools: %v (%d listed, want %d)", err, len(list.Tools), wantTools)
	}
	if err := cs.Close(); err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	return startTimes{initialized, listed, cpu}
}

// startBench runs startOnce b.N times on home, "warm" (the cache filled by
// one start first) or "cold" (the compilation cache removed before each
// start), and reports the percentiles of the figure pick chooses. With
// cpu it also reports the median CPU time of the process (cpu-ms): on a
// shared machine the wall time moves with the load, the CPU time much
// less.
func startBench(b *testing.B, home string, tools int, pick func(startTimes) time.Duration, cpu bool) {
	cache := filepath.Join(home, config.DefaultStateDir, pluginhost.CacheDirName)
	run := func(b *testing.B, before func()) {
		d := make([]time.Duration, 0, b.N)
		c := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			before()
			b.StartTimer()
			st := startOnce(b, home, tools)
			d, c = append(d, pick(st)), append(c, st.cpu)
		}
		percentiles(b, d)
		if cpu {
			slices.Sort(c)
			b.ReportMetric(float64(c[len(c)/2].Nanoseconds())/1e6, "cpu-ms")
		}
	}
	b.Run("warm", func(b *testing.B) {
		startOnce(b, home, tools) // fills the cache
		b.ResetTimer()
		run(b, func() {})
	})
	b.Run("cold", func(b *testing.B) {
		run(b, func() {
			if err := os.RemoveAll(cache); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkStartToInitializePlugins is BenchmarkStartToInitialize with the
// five first-party plugins enabled: "warm" with their compiled code in the
// home's compilation cache (every start after the first, and after
// `apconnect doctor`), "cold" with the cache emptied before each start
// (the first start after installing or upgrading a plugin). Targets: ≤ 300
// ms warm, ≤ 3 s cold (test/benchreport relates them to the strict
// verification rate and to the start without plugins).
func BenchmarkStartToInitializePlugins(b *testing.B) {
	h := startHub(b)
	startBench(b, pluginHome(b, h), len(toolcatalog.Names())+len(firstParty),
		func(st startTimes) time.Duration { return st.initialized }, false)
}

// BenchmarkStartToToolsPlugins is the time from exec of `apconnect mcp`,
// with the five first-party plugins enabled, to the answer to tools/list
// that holds every tool (the standard ones and each plugin's): what an MCP
// client waits for before it can offer the plugin tools. `apconnect mcp`
// loads the plugins and registers their tools before it answers
// initialize, so the first tools/list after initialize already holds
// them all (the benchmark checks the count; it never waits for
// notifications/tools/list_changed). "warm": the compiled code is in the
// home's compilation cache (every start after the first, and after
// `apconnect doctor` or `plugin inspect`); "cold": the cache is emptied
// before each start. Issue 13's targets: ≤ 150 ms warm, ≤ 1.5 s cold
// (test/benchreport also relates them to the strict verification time).
func BenchmarkStartToToolsPlugins(b *testing.B) {
	h := startHub(b)
	startBench(b, pluginHome(b, h), len(toolcatalog.Names())+len(firstParty),
		func(st startTimes) time.Duration { return st.listed }, true)
}
