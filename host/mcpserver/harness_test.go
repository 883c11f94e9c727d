package mcpserver

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
	"apconnect/host/toolcatalog"
)

// The harness: a real local hub (hubtest), connectors of test agents on it,
// and MCP clients talking to mcpserver.New over in-memory transports.

var bg = context.Background()

// startHub starts a real hub with its write quotas lifted (tests write
// faster than agents).
func startHub(t testing.TB) *hubtest.Hub {
	t.Helper()
	return hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
		o.Limits.Discourse.Rules.SignalRate = -1
		o.Limits.Discourse.Rules.ControlRate = -1
		o.Limits.Delegation.EventsPage = 2
	}))
}

// countingTransport counts the requests a connector sends to hosts.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// tagent is one agent: its connector, its MCP server and a client session.
type tagent struct {
	t        testing.TB
	name     string
	id       string
	hub      *hubtest.Hub
	cfg      *config.Config
	conn     *connector.Connector
	srv      *mcp.Server
	server   *server
	cs       *mcp.ClientSession
	requests *atomic.Int64
	log      *logBuffer
}

type agentOptions struct {
	start  bool // run the connector's background sync
	tools  []plugin.ToolProvider
	client *mcp.ClientOptions
	// protocol is the client's protocol version ("" for the SDK default,
	// 2026-07-28).
	protocol string
	// home reuses an agent's home (a restart); grants, when set, replaces
	// the hub's [[hosts]] grants.
	home   string
	grants *[]string
}

// newAgent builds an agent whose key seed repeats seed.
func newAgent(t testing.TB, h *hubtest.Hub, name string, seed byte, o agentOptions) *tagent {
	t.Helper()
	home := o.home
	if home == "" {
		home = t.TempDir()
	}
	cfg, err := config.Default(home, config.DefaultOptions{IdentityName: name, HostURL: h.Origin(), HostLabel: "hub",
		HostCAFile: h.CAFile(), ProfileServices: []string{h.Origin()}})
	if err != nil {
		t.Fatal(err)
	}
	if o.grants != nil {
		cfg.Hosts[0].Grants = *o.grants
	}
	sig := hubtest.NewAgent(seed).Signer
	n := &atomic.Int64{}
	lb := &logBuffer{}
	conn, err := connector.New(bg, connector.Options{
		Config: cfg, Signer: sig, WriteLimits: &adp.Limits{}, PollInterval: 30 * time.Second, Tools: o.tools,
		Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelWarn})),
		HTTPClient: func(_ string, roots *x509.CertPool) (*http.Client, error) {
			c := client.NewHTTPClient(roots, 0)
			c.Transport = countingTransport{next: c.Transport, n: n}
			return c, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	if o.start {
		conn.Start(ctx)
	}
	a := &tagent{t: t, name: name, id: sig.AgentID(), hub: h, cfg: cfg, conn: conn, requests: n, log: lb}
	a.server = newServer(conn, Options{Version: "test", StrictOutput: true, ChangePoll: 50 * time.Millisecond, ProgressPoll: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	a.srv = a.server.srv
	t.Cleanup(func() {
		cancel()
		conn.Close()
		if s := lb.String(); strings.Contains(s, "panic") || strings.Contains(s, "does not match its output schema") {
			t.Errorf("%s logged a problem:\n%s", name, s)
		}
	})
	a.cs = a.connect(o.client, o.protocol)
	return a
}

// connect opens a new MCP client session to the agent's server.
func (a *tagent) connect(opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	a.t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := a.srv.Connect(bg, st, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-" + a.name, Version: "0"}, opts).Connect(bg, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Close()
	})
	return cs
}

// logBuffer collects log output safely.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// obj is a decoded JSON object.
type obj = map[string]any

// callRaw calls a tool on cs and returns the result.
func callRaw(t testing.TB, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: tool}
	if args != nil {
		params.Arguments = args
	}
	res, err := cs.CallTool(bg, params)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return res
}

// structured checks a successful result the way a strict client would —
// structured content matching the output schema, a summary and the same
// JSON as text — and returns the structured content.
func structured(t testing.TB, tool string, res *mcp.CallToolResult) obj {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s failed: %s", tool, text(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if sch, ok := toolcatalog.OutputSchema(tool); ok {
		if err := sch.ValidateJSON(data); err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, data)
		}
	}
	if len(res.Content) != 2 {
		t.Fatalf("%s: want a summary and the JSON as content, got %d items", tool, len(res.Content))
	}
	js, ok := res.Content[1].(*mcp.TextContent)
	if !ok || canonicalJSON(t, js.Text) != canonicalJSON(t, string(data)) {
		t.Fatalf("%s: the JSON text content differs from the structured content", tool)
	}
	if sum, ok := res.Content[0].(*mcp.TextContent); !ok || sum.Text == "" || strings.HasPrefix(sum.Text, "{") {
		t.Fatalf("%s: no readable summary first", tool)
	}
	var m obj
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// call calls a tool that must succeed.
func (a *tagent) call(tool string, args any) obj {
	a.t.Helper()
	return structured(a.t, pfx+tool, callRaw(a.t, a.cs, pfx+tool, args))
}

// toolErr is a failed call's error body.
type toolErr struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// errorOf returns the error of a failed result, failing the test when the
// result is not a well-formed tool error.
func errorOf(t testing.TB, tool string, res *mcp.CallToolResult) toolErr {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: want an error, got %s", tool, text(res))
	}
	if res.StructuredContent != nil {
		t.Fatalf("%s: an error result carries structured content", tool)
	}
	var body struct {
		Error *toolErr `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(text(res)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Error == nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("%s: malformed error result %q (%v)", tool, text(res), err)
	}
	return *body.Error
}

// callErr calls a tool that must fail and returns the error.
func (a *tagent) callErr(tool string, args any) toolErr {
	a.t.Helper()
	return errorOf(a.t, pfx+tool, callRaw(a.t, a.cs, pfx+tool, args))
}

func canonicalJSON(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// createRoom creates a room as a through MCP and returns its id. A public
// test room lets speakers and observers join directly unless extra sets
// another policy (the public default is observers only).
func (a *tagent) createRoom(visibility string, extra obj) string {
	a.t.Helper()
	now := time.Now().UnixMilli()
	args := obj{"host": a.hub.Origin(), "topic": "Review the signature section", "visibility": visibility,
		"start_time": now - 1000, "end_time": now + 3600_000}
	if visibility == "public" {
		args["policy"] = obj{"open_roles": []any{"speaker", "observer"}}
	}
	for k, v := range extra {
		args[k] = v
	}
	r := a.call("room_create", args)
	return r["room"].(obj)["room_id"].(string)
}

// eventually retries cond until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// num reads a JSON number.
func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// get walks a path of object keys.
func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(obj)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// subscribed reports whether the server's watcher has a subscription to uri.
func (a *tagent) subscribed(uri string) bool {
	w := a.server.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.subs[uri]
	return ok
}
