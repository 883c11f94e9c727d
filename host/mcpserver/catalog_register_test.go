package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/toolcatalog"
)

// connect serves s over in-memory transports and returns a client session.
func connect(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func newTestServer() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "apconnect", Version: "test"}, &mcp.ServerOptions{Instructions: "the loop"})
}

type recorder struct {
	mu    sync.Mutex
	calls map[string][]string
}

func (r *recorder) handler(name string) ToolHandler {
	return func(_ context.Context, _ *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls[name] = append(r.calls[name], string(args))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
}

func TestServedThroughTheSDK(t *testing.T) {
	t.Parallel()
	rec := &recorder{calls: map[string][]string{}}
	handlers := map[string]ToolHandler{}
	for _, n := range toolcatalog.Names() {
		handlers[n] = rec.handler(n)
	}
	s := newTestServer()
	if err := AddCatalog(s, handlers); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	ctx := context.Background()

	if got := cs.InitializeResult().Instructions; got != "the loop" {
		t.Errorf("instructions not served: %q", got)
	}

	// tools/list serves exactly the catalog: same JSON for every tool.
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]*mcp.Tool{}
	for _, tool := range listed.Tools {
		served[tool.Name] = tool
	}
	if len(served) != len(toolcatalog.Names()) {
		t.Fatalf("tools/list returned %d tools", len(served))
	}
	for _, want := range Catalog() {
		got, ok := served[want.Name]
		if !ok {
			t.Errorf("%s not listed", want.Name)
			continue
		}
		if g, w := canonical(t, got), canonical(t, want); g != w {
			t.Errorf("%s served differently:\n got %s\nwant %s", want.Name, g, w)
		}
	}

	// Valid calls reach the handler with the arguments; a call with no
	// arguments reaches it as {}.
	for short, args := range minimalArgs {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: pfx + short, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", short, err)
		}
		if res.IsError {
			t.Errorf("%s: minimal call failed: %s", short, text(res))
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: pfx + "inbox_next"}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	calls := slices.Clone(rec.calls[pfx+"inbox_next"])
	rec.mu.Unlock()
	if !slices.Equal(calls, []string{"{}", "{}"}) {
		t.Errorf("inbox_next handler saw %q", calls)
	}

	// Invalid calls never reach the handler: an isError result with a
	// structured error body and one issue per problem.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Name:      pfx + "room_timeline",
		Arguments: map[string]any{"room_id": testRoom, "limit": 0, "unknown": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("invalid call: IsError=%v StructuredContent=%v", res.IsError, res.StructuredContent)
	}
	var body ToolErrorBody
	if err := json.Unmarshal([]byte(text(res)), &body); err != nil {
		t.Fatalf("error body %q: %v", text(res), err)
	}
	if body.Error.Code != toolcatalog.ErrCodeInvalidInput || !strings.Contains(body.Error.Message, "/limit") {
		t.Errorf("error body %+v", body.Error)
	}
	data, _ := body.Error.Data.(map[string]any)
	issues, _ := data["issues"].([]any)
	if data["tool"] != pfx+"room_timeline" || len(issues) != 2 {
		t.Errorf("error data %v", body.Error.Data)
	}
	rec.mu.Lock()
	n := len(rec.calls[pfx+"room_timeline"])
	rec.mu.Unlock()
	if n != 1 {
		t.Errorf("room_timeline handler ran %d times, want 1 (the valid call only)", n)
	}

	// A tool with required inputs called with none gets a clear error.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: pfx + "room_send_message"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "/content: required field is missing") || !strings.Contains(text(res), "/room_id: required field is missing") {
		t.Errorf("no-argument call: %v %s", res.IsError, text(res))
	}
}

func TestAddCatalogRequiresExactlyTheCatalog(t *testing.T) {
	t.Parallel()
	h := func(context.Context, *mcp.CallToolRequest, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, nil
	}
	handlers := map[string]ToolHandler{}
	for _, n := range toolcatalog.Names()[1:] {
		handlers[n] = h
	}
	handlers["agent_protocols_extra"] = h
	err := AddCatalog(newTestServer(), handlers)
	if err == nil || !strings.Contains(err.Error(), toolcatalog.Names()[0]) || !strings.Contains(err.Error(), "agent_protocols_extra") {
		t.Errorf("AddCatalog: %v", err)
	}
	if err := AddCatalogTool(newTestServer(), "agent_protocols_nope", h); err == nil {
		t.Error("unknown tool registered")
	}
	if err := AddCatalogTool(newTestServer(), toolcatalog.Names()[0], nil); err == nil {
		t.Error("nil handler registered")
	}
}

func TestErrorResult(t *testing.T) {
	t.Parallel()
	res := ErrorResult("room_head_mismatch", "the room moved", map[string]any{"current_seq": 42})
	if !res.IsError || res.StructuredContent != nil || len(res.Content) != 1 {
		t.Fatalf("%+v", res)
	}
	want := `{"error":{"code":"room_head_mismatch","message":"the room moved","data":{"current_seq":42}}}`
	if got := text(res); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got := text(ErrorResult("x", "y", func() {})); got != `{"error":{"code":"x","message":"y"}}` {
		t.Errorf("unmarshalable data: %s", got)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// canonical renders v as JSON with object keys sorted, for comparisons.
func canonical(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
