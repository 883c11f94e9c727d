package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var viewLine = regexp.MustCompile(`operator view: (http://\S+/login\?token=\S+)`)

// viewURL waits for the "operator view:" line on a serve's stderr.
func (s *served) viewURL(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := viewLine.FindStringSubmatch(s.stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("serve printed no operator view line\n%s", s.stderr.String())
	return ""
}

// viewGet fetches a URL with a browser-like client (cookies, no redirects).
func viewGet(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The operator view of `apconnect serve`: the login line on stderr, one
// record per identity so that two identities' serve processes are never
// mixed up, `apconnect view` for a fresh one-time URL, the processes of the
// identity from their heartbeats, and the MCP endpoint beside it.
func TestServeOperatorView(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	home := newHome(t, h, "alice", "bob")
	alice := startServe(t, home, "alice", "")
	bob := startServe(t, home, "bob", "")
	first := alice.viewURL(t)
	if !strings.HasPrefix(first, "http://"+alice.hostport+"/login?token=") || !strings.HasPrefix(bob.viewURL(t), "http://"+bob.hostport+"/") {
		t.Fatalf("view lines %q %q", first, bob.viewURL(t))
	}
	for name, s := range map[string]*served{"alice": alice, "bob": bob} {
		if _, err := os.Stat(filepath.Join(home, "state", "serve", name+".json")); err != nil {
			t.Fatalf("no serve record for %s: %v", name, err)
		}
		code, out, errOut := apconnect(t, "view", "--home", home, "--agent", name)
		m := viewLine.FindStringSubmatch(errOut)
		if code != 0 || m == nil || !strings.HasPrefix(m[1], "http://"+s.hostport+"/") || out != "" {
			t.Fatalf("view --agent %s: %d %q %q", name, code, out, errOut)
		}
	}
	// A stdio mcp of alice's identity shows with its client and last call.
	p := startMCP(t, home, "alice", procOptions{})
	call(t, p, "identity_current", map[string]any{})
	// A call of alice's identity leaves its heartbeat (stopped) behind.
	if code, out, errOut := apconnect(t, "call", "--home", home, "--agent", "alice", "identity_current"); code != 0 {
		t.Fatalf("call: %s %s", out, errOut)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if code, _ := viewGet(t, c, first); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	if code, _ := viewGet(t, c, first); code != http.StatusForbidden {
		t.Fatalf("a used login URL: %d", code)
	}
	var code int
	var page string
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, page = viewGet(t, c, "http://"+alice.hostport+"/")
		if strings.Contains(page, "e2e-alice 0") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{`data-state="online"`, "this view", ">call <", ">serve <", ">mcp <", "e2e-alice 0",
		"agent_protocols_identity_current", "stopped", h.Origin()} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("status page (%d) lacks %q", code, want)
		}
	}
	// Bob's serve is not in alice's view: each identity has its own store.
	if strings.Count(page, ">serve <") != 1 {
		t.Errorf("alice's view lists %d serve processes", strings.Count(page, ">serve <"))
	}
	// The MCP endpoint is still behind its bearer token.
	if resp, err := http.Post("http://"+alice.hostport+"/mcp", "application/json", strings.NewReader(`{}`)); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("MCP without a token: %v %v", resp, err)
	}
	// Stopped, serve removes its record, and view says nothing runs.
	if err := alice.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = alice.cmd.Wait()
	code2, _, errOut := apconnect(t, "view", "--home", home, "--agent", "alice")
	if code2 != 1 || !strings.Contains(errOut, "no apconnect serve is running for identity alice") {
		t.Fatalf("view after serve stopped: %d %s\n%s", code2, errOut, alice.stderr.String())
	}
}
