package connector_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"apconnect/host/adp"
	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/tlsca"
)

// envHubDir makes the test binary serve a hub instead of running tests (the
// memory benchmark runs the hub in its own process so that the connector's
// resident memory is measured alone).
const envHubDir = "APCONNECT_BENCH_HUB_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envHubDir); dir != "" {
		os.Exit(serveHub(dir))
	}
	os.Exit(m.Run())
}

// serveHub serves a hub with quotas off until stdin closes, after printing
// "<origin> <ca file>" on stdout.
func serveHub(dir string) int {
	o := hub.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: slog.New(slog.DiscardHandler)}
	o.Limits.Discourse.Rules.MessageRate = -1
	o.Limits.Discourse.Rules.SignalRate = -1
	o.Limits.Discourse.Rules.ControlRate = -1
	h, err := hub.New(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := h.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s %s\n", h.Origin(), h.CAFile())
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	h.Close()
	return 0
}

// rssMB returns the process's resident set size in MiB.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkMemoryAfterSync measures the connector's resident memory after
// syncing 1,000 rooms (10 records each) in which it is an active member,
// with background live sync running (16 streams, the rest polled). The hub
// runs in a child process. Metrics: rss-MB of the benchmark process (target
// ≤ 200) and heap-MB (Go heap in use).
func BenchmarkMemoryAfterSync(b *testing.B) {
	const rooms, perRoom = 1000, 10
	dir := b.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envHubDir+"="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	parts := strings.Fields(line)
	origin, caFile := parts[0], parts[1]
	pool, err := tlsca.LoadPool(caFile)
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig(pool), ForceAttemptHTTP2: true}, Timeout: 30 * time.Second}
	post := func(path string, body []byte) []byte {
		resp, err := hc.Post(origin+path, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			b.Fatalf("%s: %d %s", path, resp.StatusCode, out)
		}
		return out
	}
	creator := hubtest.NewAgent(0x51)
	now := time.Now()
	ids := make([]string, rooms)
	for i := range ids {
		out := post("/v1/rooms", creator.ADPEvent(b, time.Now(), adp.TypeRoomCreate, "", nil, map[string]any{
			"host": origin, "topic": fmt.Sprintf("room %d", i), "visibility": "public",
			"start_time": now.UnixMilli() - 1000, "end_time": now.Add(24 * time.Hour).UnixMilli()}))
		var res struct {
			ID   string `json:"id"`
			Hash string `json:"hash"`
		}
		_ = json.Unmarshal(out, &res)
		ids[i] = res.ID
		head := adp.Link{Seq: 1, Hash: res.Hash}
		for j := 2; j <= perRoom-1; j++ {
			out := post("/v1/rooms/"+res.ID, creator.ADPEvent(b, time.Now(), adp.TypeMessageCreate, res.ID, &head,
				map[string]any{"content_type": "text/plain", "content": fmt.Sprintf("message %d", j)}))
			var rec struct {
				Seq  int64  `json:"seq"`
				Hash string `json:"hash"`
			}
			_ = json.Unmarshal(out, &rec)
			head = adp.Link{Seq: rec.Seq, Hash: rec.Hash}
		}
	}
	hc.CloseIdleConnections()
	runtime.GC()
	debug.FreeOSMemory()
	before := rssMB()

	home := b.TempDir()
	cfg, err := config.Default(home, config.DefaultOptions{HostURL: origin, HostLabel: "hub", HostCAFile: caFile})
	if err != nil {
		b.Fatal(err)
	}
	c, err := connector.New(ctx, connector.Options{Config: cfg, Signer: hubtest.NewAgent(0x52).Signer, WriteLimits: &adp.Limits{}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	for _, id := range ids {
		res, err := c.RoomJoin(ctx, "bench", connector.RoomJoinInput{Host: origin, RoomID: id, Role: "speaker"})
		if err != nil || res.Status != connector.JoinJoined {
			b.Fatalf("join %s: %v", id, err)
		}
	}
	b.Logf("joined and synced %d rooms in %v", rooms, time.Since(start))
	c.Start(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s, p := c.Following(); s+p == rooms {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	streams, polled := c.Following()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	after := rssMB()
	for b.Loop() {
		// The figures are states, not rates: nothing to repeat.
	}
	b.ReportMetric(after, "rss-MB")
	b.ReportMetric(after-before, "rss-delta-MB")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(streams), "streams")
	b.ReportMetric(float64(polled), "polled")
}
