package e2e

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

var serveURL = regexp.MustCompile(`listening on (http://(\S+)/mcp)`)

// `apconnect serve` as a process: loopback only, token required, Origin and
// Host checked, MCP over Streamable HTTP with the token.
func TestServeProcess(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice", "bob")
	for _, addr := range []string{"0.0.0.0:8765", "10.0.0.1:8765", "localhost:8765"} {
		if code, _, errOut := apconnect(t, "serve", "--home", home, "--listen", addr); code != 2 || !strings.Contains(errOut, "127.0.0.1 or ::1") {
			t.Errorf("--listen %s: exit %d: %s", addr, code, errOut)
		}
	}
	cmd := exec.Command(bin, "serve", "--home", home, "--agent", "bob", "--listen", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	var url, hostport string
	for url == "" && sc.Scan() {
		if m := serveURL.FindStringSubmatch(sc.Text()); m != nil {
			url, hostport = m[1], m[2]
		}
	}
	if url == "" {
		t.Fatalf("serve printed no address\n%s", stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	tokenFile := filepath.Join(home, "http.token")
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	raw, _ := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(raw))

	try := func(edit func(r *http.Request)) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		edit(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := try(func(r *http.Request) { r.Header.Del("Authorization") }); c != http.StatusUnauthorized {
		t.Errorf("no token: %d", c)
	}
	if c := try(func(r *http.Request) { r.Header.Set("Origin", "https://attacker.example") }); c != http.StatusForbidden {
		t.Errorf("foreign origin: %d", c)
	}
	if c := try(func(r *http.Request) { r.Host = "attacker.example:" + strings.Split(hostport, ":")[1] }); c != http.StatusForbidden {
		t.Errorf("rebinding host: %d", c)
	}

	hc := &http.Client{Transport: bearerTransport(token)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, nil).Connect(bg,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(bg, &mcp.CallToolParams{Name: "agent_protocols_identity_current"})
	if err != nil || res.IsError {
		t.Fatalf("identity_current: %v %v", err, res)
	}
	_, idOut, _ := apconnect(t, "id", "--home", home, "--agent", "bob")
	if id := get(res.StructuredContent, "agent_id"); id == nil || !strings.Contains(idOut, id.(string)) {
		t.Errorf("serve --agent bob signs as %v", id)
	}
	cs.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}
