package discourse_test

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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/tlsca"
	"apconnect/host/proto/adp"
)

// envHubDir makes the test binary serve a hub instead of running tests: the
// benchmarks that account for CPU or memory run the hub in its own process,
// so the connector's figures are its own (the two still share the
// machine's cores).
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

// childHub is a hub served by a child process of the benchmark.
type childHub struct {
	origin, caFile string
	cmd            *exec.Cmd
	hc             *http.Client
}

// startChildHub starts a hub in a child process; it stops with the
// benchmark.
func startChildHub(b *testing.B) *childHub {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envHubDir+"="+b.TempDir())
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
	pool, err := tlsca.LoadPool(parts[1])
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig(pool), ForceAttemptHTTP2: true}, Timeout: 30 * time.Second}
	b.Cleanup(hc.CloseIdleConnections)
	return &childHub{origin: parts[0], caFile: parts[1], cmd: cmd, hc: hc}
}

// post sends a signed write and returns the answer (status 0 when it
// could not be sent: the error is reported, and post may run on any
// goroutine).
func (h *childHub) post(b *testing.B, path string, body []byte) (int, []byte) {
	resp, err := h.hc.Post(h.origin+path, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// cpu returns the CPU time the hub process used so far.
func (h *childHub) cpu(b *testing.B) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", h.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// After the command name in parentheses: field 14 utime, 15 stime, in
	// clock ticks (USER_HZ, 100 on Linux).
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// selfCPU returns the CPU time the benchmark process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// agent connects a fresh connector of the agent seed to the hub.
func (h *childHub) agent(b *testing.B, seed byte) *connector.Connector {
	b.Helper()
	cfg, err := config.Default(b.TempDir(), config.DefaultOptions{HostURL: h.origin, HostLabel: "hub", HostCAFile: h.caFile})
	if err != nil {
		b.Fatal(err)
	}
	c, err := connector.New(ctx, connector.Options{Config: cfg, Signer: hubtest.NewAgent(seed).Signer, WriteLimits: &adp.Limits{},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// poster sends a signed write to a hub and returns the status and body.
type poster func(path string, body []byte) (int, []byte)

func (h *childHub) poster(b *testing.B) poster {
	return func(path string, body []byte) (int, []byte) { return h.post(b, path, body) }
}

// fillRoom creates a public room on the hub at origin and posts n-1
// messages to it (n records in all), each on the record before it.
func fillRoom(b *testing.B, post poster, origin string, a *hubtest.Agent, n int) string {
	b.Helper()
	now := time.Now()
	status, body := post("/v1/rooms", a.ADPEvent(b, now, adp.TypeRoomCreate, "", nil, map[string]any{
		"host": origin, "topic": "bench", "visibility": "public",
		"start_time": now.UnixMilli() - 1000, "end_time": now.Add(24 * time.Hour).UnixMilli(),
	}))
	if status != http.StatusCreated {
		b.Fatalf("create: %d %s", status, body)
	}
	var created struct {
		ID   string `json:"id"`
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		b.Fatal(err)
	}
	head := adp.Link{Seq: 1, Hash: created.Hash}
	for i := 2; i <= n; i++ {
		status, body := post("/v1/rooms/"+created.ID, a.ADPEvent(b, time.Now(), adp.TypeMessageCreate, created.ID, &head, map[string]any{
			"content_type": "text/plain", "content": fmt.Sprintf("message %d of the catch-up benchmark, a line of ordinary length.", i),
		}))
		if status != http.StatusOK && status != http.StatusCreated {
			b.Fatalf("post %d: %d %s", i, status, body)
		}
		var rec struct {
			Seq  int64  `json:"seq"`
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal(body, &rec); err != nil {
			b.Fatal(err)
		}
		head = adp.Link{Seq: rec.Seq, Hash: rec.Hash}
	}
	return created.ID
}
