package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/toolcatalog"
)

// twoAgentHome starts a hub and makes one home with two identities, alice
// (the default) and bob, both trusting the hub.
func twoAgentHome(t *testing.T) (*hubtest.Hub, string) {
	t.Helper()
	h := hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
	}))
	home := filepath.Join(t.TempDir(), "home")
	for _, name := range []string{"alice", "bob"} {
		if code, out, errOut := runCLI(t, "init", "--home", home, "--name", name, "--unencrypted-key", "--host", h.Origin(), "--ca", h.CAFile()); code != 0 {
			t.Fatalf("init %s: %d %s %s", name, code, out, errOut)
		}
	}
	return h, home
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCommand runs an apconnect command in-process in the background.
func startCommand(t *testing.T, ctx context.Context, stdin io.Reader, stdout io.Writer, args ...string) (stderr *syncBuffer, done <-chan int) {
	t.Helper()
	stderr = &syncBuffer{}
	ch := make(chan int, 1)
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: func(string) string { return "" }, now: time.Now}
	go func() { ch <- run(ctx, e, args) }()
	return stderr, ch
}

func TestMCPCommandOverStdio(t *testing.T) {
	t.Parallel()
	h, home := twoAgentHome(t)
	for _, agent := range []string{"alice", "bob"} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		stderr, done := startCommand(t, context.Background(), inR, outW, "mcp", "--home", home, "--agent", agent)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(bg, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v\nstderr: %s", agent, err, stderr.String())
		}
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Errorf("negotiated %s", v)
		}
		res, err := cs.CallTool(bg, &mcp.CallToolParams{Name: "agent_protocols_identity_current"})
		if err != nil || res.IsError {
			t.Fatalf("%s: identity_current: %v %v", agent, err, res)
		}
		_, idOut, _ := runCLI(t, "id", "--home", home, "--agent", agent)
		if id, _ := res.StructuredContent.(map[string]any)["agent_id"].(string); id == "" || !strings.Contains(idOut, id) {
			t.Errorf("%s signs as %v, `apconnect id` says %s", agent, res.StructuredContent, idOut)
		}
		if hosts := res.StructuredContent.(map[string]any)["hosts"].([]any); len(hosts) != 1 || hosts[0].(map[string]any)["host"] != h.Origin() {
			t.Errorf("hosts %v", hosts)
		}
		// Closing stdin stops the server cleanly.
		cs.Close()
		inW.Close()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("%s: exit %d\n%s", agent, code, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: mcp did not stop after stdin closed", agent)
		}
		outW.Close()
		if !strings.Contains(stderr.String(), "serving MCP over stdio") {
			t.Errorf("no log on stderr: %s", stderr.String())
		}
	}
	// An identity the config does not have.
	code, _, errOut := runCLI(t, "mcp", "--home", home, "--agent", "carol")
	if code != 1 || !strings.Contains(errOut, "alice") || !strings.Contains(errOut, "bob") {
		t.Errorf("unknown identity: %d %s", code, errOut)
	}
}

func TestMCPCommandStopsOnSignal(t *testing.T) {
	t.Parallel()
	_, home := twoAgentHome(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	defer outW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stderr, done := startCommand(t, ctx, inR, outW, "mcp", "--home", home)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(bg, &mcp.IOTransport{Reader: outR, Writer: inW},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated %s", v)
	}
	cancel() // what SIGINT/SIGTERM do through signal.NotifyContext
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stderr.String(), "signal") {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcp did not stop on the signal")
	}
}

func TestCallCommand(t *testing.T) {
	t.Parallel()
	h, home := twoAgentHome(t)
	code, out, errOut := runCLI(t, "call", "--home", home, "--list")
	if code != 0 || strings.Count(out, "\nagent_protocols_") != len(toolcatalog.Names()) || !strings.Contains(out, "signed write") {
		t.Fatalf("--list: %d %s %s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "call", "--home", home, "--list", "--json")
	var tools []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &tools) != nil || len(tools) != len(toolcatalog.Names()) {
		t.Fatalf("--list --json: %d %.200s", code, out)
	}
	code, out, _ = runCLI(t, "call", "--home", home, "--agent", "bob", "identity_current")
	var id map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &id) != nil || !strings.HasPrefix(id["agent_id"].(string), "did:agent:") {
		t.Fatalf("identity_current: %d %s", code, out)
	}
	now := time.Now().UnixMilli()
	create := `{"host":"` + h.Origin() + `","topic":"From the shell","visibility":"public","start_time":` + itoa(now-1000) + `,"end_time":` + itoa(now+3600_000) + `}`
	code, out, errOut = runCLI(t, "call", "--home", home, "agent_protocols_room_create", create)
	var created map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil {
		t.Fatalf("room_create: %d %s %s", code, out, errOut)
	}
	roomID := created["room"].(map[string]any)["room_id"].(string)
	// The shell's calls share a session: the message is based on the head
	// room_create presented.
	code, out, _ = runCLIStdin(t, `{"room_id":"`+roomID+`","content":"hello from a script"}`, "call", "--home", home, "room_send_message", "-")
	if code != 0 || !strings.Contains(out, `"status": "sent"`) {
		t.Fatalf("send: %d %s", code, out)
	}
	// A failed call prints the error object and exits 1.
	code, out, _ = runCLI(t, "call", "--home", home, "room_state", `{"room_id":"not valid"}`)
	var failed struct {
		Error struct{ Code string } `json:"error"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &failed) != nil || failed.Error.Code != "invalid_input" {
		t.Fatalf("bad input: %d %s", code, out)
	}
	for _, bad := range [][]string{{"call", "--home", home}, {"call", "--home", home, "no_such_tool"}, {"call", "--home", home, "room_state", "[1]"},
		{"call", "--home", home, "room_state", "{", "x"}, {"call", "--home", home, "--list", "room_state"}} {
		if code, _, errOut := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d (%s)", bad, code, errOut)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// runCLIStdin is runCLI with stdin.
func runCLIStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, now: time.Now}
	code := run(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

var listeningRE = regexp.MustCompile(`listening on (http://\S+/mcp)`)

func TestServeCommand(t *testing.T) {
	t.Parallel()
	_, home := twoAgentHome(t)
	for _, bad := range []string{"0.0.0.0:8765", "192.168.1.20:8765", "localhost:8765", "[::]:8765"} {
		if code, _, errOut := runCLI(t, "serve", "--home", home, "--listen", bad); code != 2 || !strings.Contains(errOut, "127.0.0.1 or ::1") {
			t.Errorf("--listen %s: exit %d %s", bad, code, errOut)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &syncBuffer{}
	stderr, done := startCommand(t, ctx, strings.NewReader(""), stdout, "serve", "--home", home, "--agent", "bob", "--listen", "127.0.0.1:0")
	var url string
	deadline := time.Now().Add(10 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		if m := listeningRE.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("serve did not start:\n%s\n%s", stdout.String(), stderr.String())
	}
	tokenFile := filepath.Join(home, "http.token")
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(stdout.String(), tokenFile) {
		t.Fatalf("token file %v %v\n%s", st, err, stdout.String())
	}
	tok, _ := os.ReadFile(tokenFile)
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	hc := &http.Client{Transport: tokenTransport(strings.TrimSpace(string(tok)))}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(bg, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(bg, &mcp.CallToolParams{Name: "agent_protocols_identity_current"})
	if err != nil || res.IsError {
		t.Fatalf("identity over HTTP: %v %v", err, res)
	}
	_, idOut, _ := runCLI(t, "id", "--home", home, "--agent", "bob")
	if !strings.Contains(idOut, res.StructuredContent.(map[string]any)["agent_id"].(string)) {
		t.Errorf("serve --agent bob signs as %v", res.StructuredContent)
	}
	cs.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

type tokenTransport string

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}

var bg = context.Background()
