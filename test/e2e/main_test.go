// Package e2e runs apconnect end to end: the real binary, built once in
// TestMain, as `apconnect mcp` subprocesses driven by go-sdk MCP clients
// over stdio (and `apconnect serve` over loopback HTTP), against a real
// local hub.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
)

// bin is the apconnect binary under test.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apconnect-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "apconnect")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command(goTool(), append(args, "apconnect/cmd/apconnect")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building apconnect:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var bg = context.Background()

// startHub starts a real local hub with its write quotas lifted.
func startHub(t testing.TB) *hubtest.Hub {
	t.Helper()
	return hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
		o.Limits.Discourse.Rules.SignalRate = -1
		o.Limits.Discourse.Rules.ControlRate = -1
		o.Limits.Delegation.EventsPage = 2
	}))
}

// apconnect runs the binary to completion.
func apconnect(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("apconnect %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// newHome makes one home with an identity per name, all trusting the hub.
func newHome(t testing.TB, h *hubtest.Hub, names ...string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	for _, n := range names {
		if code, out, errOut := apconnect(t, "init", "--home", home, "--name", n, "--unencrypted-key", "--host", h.Origin(), "--ca", h.CAFile()); code != 0 {
			t.Fatalf("init %s: %s %s", n, out, errOut)
		}
	}
	return home
}

// lockedBuffer collects a process's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a running `apconnect mcp` and the client session to it.
type proc struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *lockedBuffer
	closed bool
}

type procOptions struct {
	protocol string // client protocol version ("" for the SDK's latest)
	client   *mcp.ClientOptions
}

// startMCP starts `apconnect mcp --home home --agent name` and connects an
// MCP client to it over its stdin and stdout.
func startMCP(t testing.TB, home, name string, o procOptions) *proc {
	t.Helper()
	p := &proc{t: t, name: name, stderr: &lockedBuffer{}}
	p.cmd = exec.Command(bin, "mcp", "--home", home, "--agent", name)
	p.cmd.Stderr = p.stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-" + name, Version: "0"}, o.client).Connect(bg,
		&mcp.CommandTransport{Command: p.cmd, TerminateDuration: 10 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		t.Fatalf("start apconnect mcp --agent %s: %v\n%s", name, err, p.stderr.String())
	}
	p.cs = cs
	t.Cleanup(func() { p.stop() })
	return p
}

// stop closes stdin, waits for the process to exit and checks it exited
// cleanly and logged no failure.
func (p *proc) stop() {
	if p.closed {
		return
	}
	p.closed = true
	start := time.Now()
	if err := p.cs.Close(); err != nil {
		p.t.Errorf("%s: close: %v", p.name, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		p.t.Errorf("%s: apconnect mcp took %s to stop after stdin closed", p.name, d)
	}
	if st := p.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		p.t.Errorf("%s: apconnect mcp did not exit cleanly after stdin closed: %v\n%s", p.name, st, p.stderr.String())
	}
	if s := p.stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "level=ERROR") {
		p.t.Errorf("%s logged a failure:\n%s", p.name, s)
	}
}

// goTool is the go command of the Go installation running the tests: the go
// on PATH (the one "go test" was started with), else $GOROOT/bin/go.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}
