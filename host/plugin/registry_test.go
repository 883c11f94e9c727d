package plugin_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

func TestRegistry(t *testing.T) {
	// Three instances ready: the looping validator and watcher below each
	// lose one, and a call that finds none creates one within its own
	// 50 ms deadline, which a loaded machine may miss. This test is about
	// dispatch, not about that.
	full := loadFull(t, plugin.Limits{MaxInstances: 3})
	if err := full.Warm(ctx(), 3); err != nil {
		t.Fatal(err)
	}
	hello := plugintest.Load(t, plugintest.Build(t, helloDir), plugin.AllGrants())
	reg := plugin.NewRegistry(nil)
	if err := reg.Add(full); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(hello); err != nil {
		t.Fatal(err)
	}
	// The same name twice is refused.
	again := loadFull(t, plugin.Limits{})
	wantCode(t, reg.Add(again), plugin.CodeInvalidConfig, `another plugin named "full"`)

	// Tools by MCP name, sorted.
	var names []string
	for _, td := range reg.Tools() {
		names = append(names, td.MCPName)
	}
	if !slices.IsSorted(names) || !slices.Contains(names, "hello_wave") || !slices.Contains(names, "full_echo") {
		t.Errorf("tools %v", names)
	}
	res, err := reg.CallTool(ctx(), "full_echo", json.RawMessage(`{"text":"via registry"}`), nil)
	if err != nil || res.Content[0].Text != "echo: via registry" {
		t.Errorf("CallTool: %+v %v", res, err)
	}
	_, err = reg.CallTool(ctx(), "agent_protocols_room_state", nil, nil)
	wantCode(t, err, plugin.CodeUnknown)

	// Validators by type.
	if vs := reg.Validators("hello.greeting"); len(vs) != 1 || vs[0].Name() != "hello" {
		t.Errorf("validators %v", vs)
	}
	errs, err := reg.ValidateEvent(ctx(), plugin.Proposal{Type: "hello.greeting", Actor: selfID, Payload: map[string]any{"to": selfID}}, room())
	if err != nil || len(errs) != 1 || errs[0].Plugin != "hello" {
		t.Errorf("ValidateEvent: %+v %v", errs, err)
	}
	// Types nobody validates pass.
	if errs, err := reg.ValidateEvent(ctx(), plugin.Proposal{Type: "other.type", Payload: map[string]any{}}, room()); err != nil || len(errs) != 0 {
		t.Errorf("unvalidated type: %v %v", errs, err)
	}
	// A validator that fails is an error naming the plugin: fail closed.
	_, err = reg.ValidateEvent(ctx(), plugin.Proposal{Type: "demo.loop", Payload: map[string]any{}}, room())
	if e := wantCode(t, err, plugin.CodeTimeout); e.Plugin != "full" || e.Op != "validate" {
		t.Errorf("error names %s/%s", e.Plugin, e.Op)
	}

	// Watch: items of every watcher, suggested tools limited to existing ones,
	// a failing watcher skipped and reported.
	records := []plugin.Record{
		pollRecord(4, 0),
		{Seq: 5, EventID: eventA, Type: "hello.greeting", Actor: otherID, AcceptedAt: 1, Payload: payload(map[string]any{"to": selfID})},
		{Seq: 6, EventID: eventA, Type: "demo.loop", AcceptedAt: 1},
	}
	items, errsW := reg.Watch(ctx(), records, room())
	if len(errsW) != 1 || plugin.CodeOf(errsW[0]) != plugin.CodeTimeout {
		t.Errorf("watch errors %v", errsW)
	}
	if len(items) != 1 || items[0].Plugin != "hello" || items[0].Seq != 5 {
		t.Errorf("items with the failing watcher %+v", items)
	}
	items, errsW = reg.Watch(ctx(), records[:2], room())
	if len(errsW) != 0 || len(items) != 2 || items[0].Seq != 4 || items[1].Seq != 5 {
		t.Fatalf("items %+v %v", items, errsW)
	}
	if !slices.Equal(items[0].SuggestedTools, []string{"full_tally", "agent_protocols_room_submit_event"}) {
		t.Errorf("suggested tools %v", items[0].SuggestedTools)
	}

	// Packs by ID.
	if packs := reg.Packs(); len(packs) != 2 || packs[0].ID() != "demo:polls/1.0" || packs[1].ID() != "hello:greetings/1.0" {
		t.Errorf("packs %+v", packs)
	}
	if pk, err := reg.Pack(ctx(), "hello:greetings/1.0"); err != nil || pk.Name != "hello:greetings" {
		t.Errorf("Pack: %v", err)
	}
	_, err = reg.Pack(ctx(), "adp:reactions/1.0")
	wantCode(t, err, plugin.CodeUnknown)

	// Health for doctor and identity_current.
	hs := reg.Health(5)
	if len(hs) != 2 || hs[0].Name != "full" || !hs[0].Loaded || hs[0].Failures != 2 || hs[0].LastErrorCode != plugin.CodeTimeout ||
		hs[0].LastErrorAt.IsZero() || hs[0].Digest == "" || hs[1].Failures != 0 || hs[0].SlowestCallMicros["validate"] < 50000 {
		t.Errorf("health %+v", hs)
	}
	b, _ := json.Marshal(hs[0])
	t.Logf("health report: %s", b)

	if !reg.Remove("hello") || reg.Remove("hello") || len(reg.Plugins()) != 1 {
		t.Error("Remove")
	}
	if _, ok := reg.Plugin("hello"); ok {
		t.Error("removed plugin still there")
	}
}

func TestRegistryRefusesShadowingCoreTools(t *testing.T) {
	hello := plugintest.Load(t, plugintest.Build(t, helloDir), plugin.AllGrants())
	reg := plugin.NewRegistry(func(name string) bool { return name == "hello_wave" })
	wantCode(t, reg.Add(hello), plugin.CodeInvalidConfig, "shadow")
}

func TestLoadFailureHealth(t *testing.T) {
	_, err := plugintest.Runtime(t).Load(ctx(), "/nonexistent.wasm", strings.Repeat("0", 64), plugin.AllGrants(), plugin.Limits{})
	h := plugin.LoadFailure("/nonexistent.wasm", plugin.AllGrants(), err)
	if h.Loaded || h.LastErrorCode != plugin.CodeUnreadable || h.Failures != 1 || len(h.Grants) != 4 {
		t.Errorf("%+v", h)
	}
}

func TestWarm(t *testing.T) {
	p := loadFull(t, plugin.Limits{MaxInstances: 3})
	if n := p.Health(0).Instances; n != 1 {
		t.Fatalf("%d instances after load", n)
	}
	start := time.Now()
	if err := p.Warm(ctx(), 5); err != nil {
		t.Fatal(err)
	}
	if n := p.Health(0).Instances; n != 3 {
		t.Errorf("%d instances after Warm", n)
	}
	t.Logf("two instances in %v", time.Since(start))
	healthy(t, p)
}
