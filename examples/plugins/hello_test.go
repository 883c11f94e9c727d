package plugins_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// helloBuild is one of the three hello examples: the same plugin in Go,
// Rust and C, differing only in name (and so in the MCP name of its tool
// and the owner of its pack).
type helloBuild struct {
	name  string
	build func(testing.TB, string) string
	dir   string
}

var helloBuilds = []helloBuild{
	{"hello", plugintest.Build, "hello"},
	{"hello_rust", plugintest.BuildRust, "hello_rust"},
	{"hello_c", plugintest.BuildC, "hello_c"},
}

// TestHelloExamples runs the same behavioural test against the Go, Rust
// and C hello plugins, each built as `make build` builds it and loaded
// under the real runtime with the grants inspect prints.
func TestHelloExamples(t *testing.T) {
	for _, hb := range helloBuilds {
		t.Run(hb.name, func(t *testing.T) {
			t.Parallel()
			testHello(t, hb)
		})
	}
}

func testHello(t *testing.T, hb helloBuild) {
	wasm := hb.build(t, hb.dir)
	rt := plugintest.NewRuntime(t, plugin.Options{Now: func() time.Time { return time.UnixMilli(now) }})
	ins, err := rt.Inspect(context.Background(), wasm, plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ins.Grants.Strings(), " "); got != "validate watch tools packs" {
		t.Fatalf("grants %q", got)
	}
	limits := plugin.Limits{ValidateTimeout: 10 * time.Second, WatchTimeout: 10 * time.Second, ToolTimeout: 10 * time.Second}
	p := plugintest.LoadWith(t, rt, wasm, ins.Grants, limits)
	ctx := context.Background()

	// describe
	d := p.Description()
	packName := hb.name + ":greetings"
	if d.Name != hb.name || d.Version != "0.1.0" || d.ABIVersion != 1 ||
		strings.Join(d.Validates, ",") != "hello.greeting" || strings.Join(d.Watches, ",") != "hello.greeting" || len(d.Proposes) != 0 {
		t.Errorf("description %+v", d)
	}
	if len(d.Tools) != 1 || d.Tools[0].Name != "wave" || d.Tools[0].MCPName != hb.name+"_wave" || d.Tools[0].Description != "Waves back." ||
		!sameJSON(d.Tools[0].InputSchema, `{"type":"object"}`) || d.Tools[0].OutputSchema != nil || !d.Tools[0].ReadOnly {
		t.Errorf("tools %+v", d.Tools)
	}
	const schema = `{"type":"object","required":["to"],"properties":{"to":{"type":"string"}}}`
	if len(d.Packs) != 1 || d.Packs[0].ID() != packName+"/1.0" || len(d.Packs[0].Types) != 1 {
		t.Fatalf("packs %+v", d.Packs)
	}
	if ty := d.Packs[0].Types[0]; ty.Type != "hello.greeting" || ty.Kind != "signal" || ty.Title != "Greeting" || !sameJSON(ty.Schema, schema) {
		t.Errorf("pack type %+v", ty)
	}

	// validate: nobody greets themselves; escapes in the payload (the host
	// writes <, >, & and U+2028 as \u escapes) reach the plugin intact.
	room := &plugin.RoomContext{RoomID: roomID, Status: "active", Self: &plugin.Self{AgentID: agent("me"), Role: "speaker"},
		Members: []plugin.Member{{AgentID: agent("me"), Role: "speaker"}, {AgentID: agent("bob"), Role: "moderator"}}}
	greet := func(actor, to string) plugin.Proposal {
		return plugin.Proposal{Type: "hello.greeting", Actor: agent(actor), Payload: map[string]any{"to": agent(to), "note": "<b>&\u2028\"é😀"}}
	}
	errs, err := p.ValidateEvent(ctx, greet("me", "me"), room)
	if err != nil || len(errs) != 1 || errs[0].Path != "/payload/to" || errs[0].Message != "do not greet yourself" || errs[0].Plugin != hb.name {
		t.Errorf("self greeting: %+v %v", errs, err)
	}
	if errs, err := p.ValidateEvent(ctx, greet("me", "bob"), room); err != nil || len(errs) != 0 {
		t.Errorf("greeting bob: %+v %v", errs, err)
	}
	if _, err := p.ValidateEvent(ctx, plugin.Proposal{Type: "hello.other", Payload: map[string]any{}}, room); plugin.CodeOf(err) != plugin.CodeUnknown {
		t.Errorf("unvalidated type: %v", err)
	}

	// watch: a greeting to the active agent becomes an item, others and
	// redacted records do not; a full batch of 256 works.
	rec := func(seq int64, to string) plugin.Record {
		return plugin.Record{Seq: seq, EventID: eventID(int(seq)), Type: "hello.greeting", Actor: agent("bob"),
			CreatedAt: now - 1000, AcceptedAt: now - 900, Payload: json.RawMessage(`{"to":"` + agent(to) + `"}`)}
	}
	records := []plugin.Record{rec(3, "me"), rec(4, "bob"), {Seq: 5, EventID: eventID(5), Type: "hello.greeting", AcceptedAt: now, Redacted: true}}
	items, err := p.Watch(ctx, records, room)
	if err != nil || len(items) != 1 {
		t.Fatalf("watch: %+v %v", items, err)
	}
	if it := items[0]; it.Plugin != hb.name || it.Seq != 3 || it.EventID != eventID(3) || it.Summary != "Someone greeted you" ||
		it.Priority != "normal" || it.RequiresResponse || strings.Join(it.SuggestedTools, ",") != hb.name+"_wave" {
		t.Errorf("item %+v", it)
	}
	var batch []plugin.Record
	for i := int64(0); i < 256; i++ {
		batch = append(batch, rec(10+i, map[bool]string{true: "me", false: "olga"}[i%2 == 0]))
	}
	if items, err := p.Watch(ctx, batch, room); err != nil || len(items) != 128 || items[127].Seq != 10+254 {
		t.Errorf("batch of 256: %d items, %v", len(items), err)
	}

	// tool
	for i := 0; i < 50; i++ { // one instance serves call after call
		res, err := p.CallTool(ctx, "wave", nil, &plugin.ToolContext{Self: &plugin.Self{AgentID: agent("me")}})
		if err != nil || len(res.Content) != 1 || res.Content[0].Text != "👋" || res.Content[0].Type != "text" || res.IsError ||
			res.Structured != nil || len(res.Proposals) != 0 {
			t.Fatalf("wave: %+v %v", res, err)
		}
	}
	if _, err := p.CallTool(ctx, "shout", nil, nil); plugin.CodeOf(err) != plugin.CodeUnknown {
		t.Errorf("unknown tool: %v", err)
	}

	// pack
	pk, err := p.Pack(ctx, packName+"/1.0")
	if err != nil || pk.Name != packName || pk.Version != "1.0" || len(pk.Types) != 1 || !sameJSON(pk.Types[0].Schema, schema) {
		t.Errorf("pack: %+v %v", pk, err)
	}
	if h := p.Health(0); h.Failures != 0 || h.DiscardedInstances != 0 {
		t.Errorf("health %+v", h)
	}
}

func sameJSON(v any, want string) bool {
	got, _ := json.Marshal(v)
	var a, b any
	_ = json.Unmarshal(got, &a)
	_ = json.Unmarshal([]byte(want), &b)
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
