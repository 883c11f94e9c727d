package mcpserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckListen(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"127.0.0.1:8765", "127.0.0.1:0", "[::1]:8765"} {
		if err := CheckListen(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"0.0.0.0:8765", "[::]:8765", ":8765", "localhost:8765", "192.168.1.20:8765", "127.0.0.2:8765",
		"127.0.0.1", "127.0.0.1:http", "127.0.0.1:99999", "example.com:443", ""} {
		if err := CheckListen(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestLoadToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "http.token")
	if _, _, err := LoadToken(path, false); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file without create: %v", err)
	}
	tok, created, err := LoadToken(path, true)
	if err != nil || !created || len(tok) < 43 {
		t.Fatalf("create: %q %v %v", tok, created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v)", st.Mode(), err)
	}
	again, created, err := LoadToken(path, true)
	if err != nil || created || again != tok {
		t.Fatalf("reload: %q %v %v", again, created, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadToken(path, true); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("group-readable token file: %v", err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadToken(short, false); err == nil {
		t.Fatal("a short token was accepted")
	}
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// serveHTTP serves an agent's server on a loopback port behind the guards.
func serveHTTP(t *testing.T, a *tagent, token string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := HTTPHandler(a.srv, HTTPOptions{Addr: ln.Addr().String(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	})
	return ln.Addr().String()
}

func TestLoopbackHTTP(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	roomID := alice.createRoom("public", nil)
	token := strings.Repeat("t0k3n", 10)
	addr := serveHTTP(t, alice, token)
	_, port, _ := net.SplitHostPort(addr)
	url := "http://" + addr + HTTPPath

	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	post := func(edit func(r *http.Request)) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		edit(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b)
	}
	cases := []struct {
		name string
		edit func(r *http.Request)
		want int
	}{
		{"no token", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Repeat("x", 50)) }, http.StatusUnauthorized},
		{"not bearer", func(r *http.Request) { r.Header.Set("Authorization", "Basic "+token) }, http.StatusUnauthorized},
		{"foreign origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, http.StatusForbidden},
		{"null origin", func(r *http.Request) { r.Header.Set("Origin", "null") }, http.StatusForbidden},
		{"rebinding host", func(r *http.Request) { r.Host = "evil.example:" + port }, http.StatusForbidden},
		{"other port host", func(r *http.Request) { r.Host = "127.0.0.1:1" }, http.StatusForbidden},
		{"other path", func(r *http.Request) { r.URL.Path = "/" }, http.StatusNotFound},
		{"good", func(*http.Request) {}, http.StatusOK},
		{"localhost host, loopback origin", func(r *http.Request) {
			r.Host = "localhost:" + port
			r.Header.Set("Origin", "http://localhost:3000")
		}, http.StatusOK},
	}
	for _, c := range cases {
		code, body := post(c.edit)
		if code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, code, c.want, body)
		}
		if c.want == http.StatusUnauthorized && strings.Contains(body, token) {
			t.Errorf("%s: the token leaked", c.name)
		}
	}

	// Real MCP clients with the token. At 2025-11-25 each session keeps
	// its own presented heads; at 2026-07-28 (the SDK client's default,
	// stateless) each client program does, across requests.
	connect := func(name, protocol string) *mcp.ClientSession {
		hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "0"}, nil).Connect(bg,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	presented := func(cs *mcp.ClientSession, tool string) any {
		t.Helper()
		return get(structured(t, pfx+tool, callRaw(t, cs, pfx+tool, obj{"room_id": roomID})), "sync", "presented_seq")
	}
	for _, c := range []struct {
		protocol         string
		oneName, twoName string
	}{
		{"2025-11-25", "http-test", "http-test"},
		{"2026-07-28", "http-one", "http-two"},
	} {
		one, two := connect(c.oneName, c.protocol), connect(c.twoName, c.protocol)
		if v := one.InitializeResult().ProtocolVersion; v != c.protocol {
			t.Errorf("negotiated %s over HTTP, want %s", v, c.protocol)
		}
		if p := presented(one, "room_state"); num(p) != 1 {
			t.Fatalf("%s: client one: presented %v", c.protocol, p)
		}
		if p := presented(two, "room_members_list"); p != nil {
			t.Fatalf("%s: client two sees client one's presented head: %v", c.protocol, p)
		}
		if p := presented(one, "room_members_list"); num(p) != 1 {
			t.Fatalf("%s: client one lost its presented head: %v", c.protocol, p)
		}
	}
	// A second stateless client of the same program shares its heads.
	if p := presented(connect("http-one", "2026-07-28"), "room_members_list"); num(p) != 1 {
		t.Fatalf("a client program's heads are not kept across its connections: %v", p)
	}

	// The handler itself refuses what it cannot guard.
	if _, err := HTTPHandler(alice.srv, HTTPOptions{Addr: "0.0.0.0:8765", Token: token}); err == nil {
		t.Error("a non-loopback address was accepted")
	}
	if _, err := HTTPHandler(alice.srv, HTTPOptions{Addr: addr, Token: "short"}); err == nil {
		t.Error("a short token was accepted")
	}
}

// Cancellation over HTTP stops the work: in a 2025-11-25 session by
// notifications/cancelled (and the call's stream ends unanswered), at
// 2026-07-28 by closing the request.
func TestHTTPCancelStopsWork(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	started, stopped := make(chan struct{}, 1), make(chan error, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
			return nil, struct{}{}, ctx.Err()
		case <-time.After(10 * time.Second):
			stopped <- nil
			return &mcp.CallToolResult{}, struct{}{}, nil
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	token := strings.Repeat("k", 40)
	h, err := HTTPHandler(srv, HTTPOptions{Addr: ln.Addr().String(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + HTTPPath
	post := func(ctx context.Context, body string, hdr map[string]string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		return http.DefaultClient.Do(req)
	}
	waitStopped := func(what string) {
		t.Helper()
		select {
		case err := <-stopped:
			if err == nil {
				t.Fatalf("%s: the cancelled call ran to its end", what)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the cancelled call's work did not stop", what)
		}
	}

	// A session.
	resp, err := post(bg, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sess := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	if resp, err := post(bg, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess); err == nil {
		resp.Body.Close()
	}
	body := make(chan string, 1)
	go func() {
		resp, err := post(bg, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`, sess)
		if err != nil {
			body <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body <- string(b)
	}()
	<-started
	if resp, err := post(bg, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, sess); err == nil {
		resp.Body.Close()
	}
	waitStopped("session")
	select {
	case b := <-body:
		if strings.Contains(b, `"id":2`) {
			t.Fatalf("the cancelled call was answered: %s", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call's stream did not end")
	}

	// Stateless: the client closes the request.
	ctx, cancel := context.WithCancel(bg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := post(ctx, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "block"})
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	waitStopped("stateless")
	<-done
}
