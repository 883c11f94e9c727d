package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/plugin"
	"apconnect/host/toolcatalog"
)

// The server announces exactly tools and resources (with subscribe): no
// logging, sampling, roots, prompts or completions (SEP-2577), and speaks
// both 2025-11-25 and 2026-07-28.
func TestCapabilitiesAndVersions(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	for _, v := range []struct{ ask, want string }{{"", "2026-07-28"}, {"2026-07-28", "2026-07-28"}, {"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}} {
		a := newAgent(t, h, "alice", 0xA1, agentOptions{protocol: v.ask})
		init := a.cs.InitializeResult()
		if init.ProtocolVersion != v.want {
			t.Errorf("asked %q, negotiated %s", v.ask, init.ProtocolVersion)
		}
		c := init.Capabilities
		//lint:ignore SA1019 the test checks that the deprecated logging capability stays off
		if c.Tools == nil || c.Resources == nil || !c.Resources.Subscribe || c.Logging != nil || c.Prompts != nil || c.Completions != nil {
			data, _ := json.Marshal(c)
			t.Errorf("capabilities %s", data)
		}
		if init.Instructions != a.conn.Instructions() || init.ServerInfo.Name != "apconnect" {
			t.Errorf("instructions or server info: %+v", init.ServerInfo)
		}
		tools, err := a.cs.ListTools(bg, nil)
		if err != nil || len(tools.Tools) != len(toolcatalog.Names()) {
			t.Fatalf("tools/list: %v (%d tools)", err, len(tools.Tools))
		}
		for _, tool := range tools.Tools {
			want, _ := Tool(tool.Name)
			if canonical(t, tool) != canonical(t, want) {
				t.Errorf("%s is not served as the catalog defines it", tool.Name)
			}
		}
	}
}

// progress records progress notifications.
type progress struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
}

func (p *progress) on(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, r.Params)
}

func (p *progress) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.notes)
}

func TestProgressOfLongSyncs(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	roomID := alice.createRoom("public", nil)
	for i := range 5 {
		alice.call("room_send_message", obj{"room_id": roomID, "content": strings.Repeat("x", i+1), "on_head_mismatch": "send_anyway"})
	}
	p := &progress{}
	bob := newAgent(t, h, "bob", 0xB0, agentOptions{client: &mcp.ClientOptions{ProgressNotificationHandler: p.on}})
	params := &mcp.CallToolParams{Name: pfx + "room_open", Arguments: obj{"host": h.Origin(), "room_id": roomID}}
	params.SetProgressToken("open-1")
	structured(t, pfx+"room_open", callRaw2(t, bob.cs, params))
	eventually(t, 5*time.Second, "a progress notification", func() bool { return len(p.all()) > 0 })
	last := p.all()[len(p.all())-1]
	if last.ProgressToken != "open-1" || last.Progress != 6 || last.Total != 6 || !strings.Contains(last.Message, roomID) {
		t.Fatalf("progress %+v", last)
	}
	// Without a token, no notification.
	n := len(p.all())
	bob.call("room_state", obj{"room_id": roomID, "refresh": true})
	time.Sleep(100 * time.Millisecond)
	if len(p.all()) != n {
		t.Fatal("progress without a progress token")
	}
	// A refresh that finds nothing new reports the final position once.
	params = &mcp.CallToolParams{Name: pfx + "room_timeline", Arguments: obj{"room_id": roomID, "refresh": true}}
	params.SetProgressToken(7)
	structured(t, pfx+"room_timeline", callRaw2(t, bob.cs, params))
	eventually(t, 5*time.Second, "the refresh's progress", func() bool { return len(p.all()) == n+1 })
}

func callRaw2(t testing.TB, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(bg, params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	return res
}

// reportProgress sends increasing positions while the work runs and the
// final one after it.
func TestReportProgress(t *testing.T) {
	t.Parallel()
	positions := [][2]int64{{0, 0}, {1000, 3000}, {1000, 3000}, {2000, 3000}, {3000, 3000}}
	var mu sync.Mutex
	i := 0
	pos := func(context.Context, bool) (int64, int64, string, bool) {
		mu.Lock()
		defer mu.Unlock()
		p := positions[min(i, len(positions)-1)]
		i++
		return p[0], p[1], "verified", p[0] > 0
	}
	var got []float64
	notify := func(_ context.Context, p *mcp.ProgressNotificationParams) error {
		if p.Total != 3000 {
			t.Errorf("total %v", p.Total)
		}
		got = append(got, p.Progress)
		return nil
	}
	err := reportProgress(bg, time.Millisecond, pos, notify, func() error {
		for {
			mu.Lock()
			done := i >= len(positions)
			mu.Unlock()
			if done {
				return nil
			}
			time.Sleep(time.Millisecond)
		}
	})
	if err != nil || !slices.Equal(got, []float64{1000, 2000, 3000}) {
		t.Fatalf("progress %v, err %v", got, err)
	}
	// A failing call reports no final position.
	got = nil
	boom := errors.New("boom")
	if err := reportProgress(bg, time.Hour, pos, notify, func() error { return boom }); err != boom || len(got) != 0 {
		t.Fatalf("failed call: %v %v", err, got)
	}
}

// fakeTools is a Go tool provider standing in for a plugin.
type fakeTools struct{}

func (fakeTools) Name() string { return "tally" }
func (fakeTools) Tools() []plugin.ToolDef {
	return []plugin.ToolDef{{Plugin: "tally", Name: "count", MCPName: "tally_count", Description: "Counts words.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []any{"text"}},
		ReadOnly:    true}}
}
func (fakeTools) CallTool(_ context.Context, name string, args json.RawMessage, _ *plugin.ToolContext) (*plugin.ToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: "counted"}}, Structured: map[string]any{"words": len(strings.Fields(in.Text))},
		Proposals: []plugin.Proposal{{Type: "poll.vote", Payload: map[string]any{"choice": "a"}}}}, nil
}

// firstOf returns the first element of a JSON array value, or nil.
func firstOf(v any) any {
	if a, ok := v.([]any); ok && len(a) > 0 {
		return a[0]
	}
	return nil
}

func TestPluginToolsAreListedAndCalled(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	a := newAgent(t, h, "alice", 0xA1, agentOptions{tools: []plugin.ToolProvider{fakeTools{}}})
	tools, err := a.cs.ListTools(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "tally_count" })
	if i < 0 || len(tools.Tools) != len(toolcatalog.Names())+1 || !tools.Tools[i].Annotations.ReadOnlyHint || !strings.Contains(tools.Tools[i].Description, "untrusted") {
		t.Fatalf("plugin tool not listed as expected (%d tools)", len(tools.Tools))
	}
	// A provider without propose grants proposes nothing: the proposal is
	// reported as refused and nothing is signed.
	res := callRaw(t, a.cs, "tally_count", obj{"text": "one two three"})
	if res.IsError || get(res.StructuredContent, "words") != float64(3) ||
		get(firstOf(get(res.StructuredContent, "proposal_results")), "status") != "refused" ||
		get(firstOf(get(res.StructuredContent, "proposal_results")), "error", "code") != "plugin_not_granted" {
		t.Fatalf("plugin call %s", text(res))
	}
}
