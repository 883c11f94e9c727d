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

func TestDescribe(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	d := p.Description()
	if d.Name != "full" || d.ABIVersion != plugin.ABIVersion || d.Description == "" {
		t.Errorf("description %+v", d)
	}
	if !slices.Equal(d.Validates, []string{"demo.loop", "demo.panic", "demo.vote"}) ||
		!slices.Equal(d.Watches, []string{"demo.bench", "demo.loop", "demo.poll"}) ||
		!slices.Equal(d.Proposes, []string{"demo.vote"}) {
		t.Errorf("claims %v %v %v", d.Validates, d.Watches, d.Proposes)
	}
	tools := p.Tools()
	i := slices.IndexFunc(tools, func(td plugin.ToolDef) bool { return td.Name == "echo" })
	echo := tools[i]
	if echo.MCPName != "full_echo" || echo.ReadOnly || echo.InputSchema["type"] != "object" || echo.OutputSchema == nil {
		t.Errorf("echo %+v", echo)
	}
	if !slices.ContainsFunc(tools, func(td plugin.ToolDef) bool { return td.MCPName == "full_tally" }) {
		t.Error("no full_tally")
	}
	if !p.Watches("demo.poll") || p.Watches("message.create") {
		t.Error("Watches")
	}
}

func TestToolsAreReadOnlyWithoutProposeGrants(t *testing.T) {
	p := plugintest.Load(t, plugintest.Build(t, helloDir), plugin.AllGrants())
	for _, td := range p.Tools() {
		if !td.ReadOnly {
			t.Errorf("%s is not read-only", td.MCPName)
		}
	}
}

func pollRecord(seq int64, closesAt int64) plugin.Record {
	return plugin.Record{
		Seq: seq, EventID: eventB, Type: "demo.poll", Actor: otherID, CreatedAt: 1779753700000, AcceptedAt: 1779753700100,
		Payload: payload(map[string]any{"question": "Ship it?", "options": []string{"yes", "no"}, "targets": []string{selfID}, "closes_at": closesAt}),
	}
}

func TestValidate(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	r := room()
	open := time.Now().Add(time.Hour).UnixMilli()
	r.Records = []plugin.Record{pollRecord(7, open)}
	vote := func(option string) plugin.Proposal {
		return plugin.Proposal{Type: "demo.vote", Actor: selfID, Payload: map[string]any{"poll_event_id": eventB, "option": option}}
	}

	errs, err := p.ValidateEvent(ctx(), vote("yes"), r)
	if err != nil || len(errs) != 0 {
		t.Fatalf("valid vote: %v %v", errs, err)
	}
	errs, err = p.ValidateEvent(ctx(), vote("maybe"), r)
	if err != nil || len(errs) != 1 || errs[0].Path != "/payload/option" || errs[0].Plugin != "full" ||
		!strings.Contains(errs[0].Message, `"maybe" is not an option`) {
		t.Fatalf("invalid option: %+v %v", errs, err)
	}
	// Time enters through now_ms only: a poll that closed an hour ago.
	r.Records = []plugin.Record{pollRecord(7, time.Now().Add(-time.Hour).UnixMilli())}
	errs, err = p.ValidateEvent(ctx(), vote("maybe"), r)
	if err != nil || len(errs) != 2 || !strings.Contains(errs[0].Message, "the poll closed at") {
		t.Fatalf("closed poll: %+v %v", errs, err)
	}
	r.Records = nil
	errs, _ = p.ValidateEvent(ctx(), vote("yes"), r)
	if len(errs) != 1 || errs[0].Path != "/payload/poll_event_id" {
		t.Fatalf("missing poll: %+v", errs)
	}
	// Types the plugin does not validate are not its business.
	_, err = p.ValidateEvent(ctx(), plugin.Proposal{Type: "demo.poll", Payload: map[string]any{}}, r)
	wantCode(t, err, plugin.CodeUnknown)
	// A room context the schema refuses is caught before the call.
	bad := room()
	bad.Self.AgentID = "not-an-agent-id"
	_, err = p.ValidateEvent(ctx(), vote("yes"), bad)
	wantCode(t, err, plugin.CodeInvalidConfig, "/room/self/agent_id")
}

func TestWatch(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	r := room()
	other := pollRecord(9, 0)
	other.Payload = payload(map[string]any{"question": "Not you", "options": []string{"a"}, "targets": []string{otherID}})
	records := []plugin.Record{
		{Seq: 8, EventID: eventA, Type: "message.create", Actor: otherID, AcceptedAt: 1779753700000, Payload: payload(map[string]any{"content": "hi"})},
		pollRecord(10, 0),
		other,
		{Seq: 11, EventID: eventA, Type: "demo.poll", AcceptedAt: 1779753700000, Redacted: true},
	}
	items, err := p.Watch(ctx(), records, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Fatalf("items %+v", items)
	}
	it := items[0]
	want := plugin.InboxItem{
		Plugin: "full", Kind: "room.event.custom", RoomID: roomID, Seq: 10, EventID: eventB, Actor: otherID,
		Type: "demo.poll", AcceptedAt: 1779753700100, Summary: "Poll for you: Ship it?", Priority: "high",
		RequiresResponse: true, Reason: "you are a target of this poll",
		SuggestedTools: []string{"full_tally", "agent_protocols_room_submit_event", "no_such_tool"},
	}
	if !equalJSON(it, want) {
		t.Errorf("item\n got %+v\nwant %+v", it, want)
	}
	// No watched record: no call at all.
	before := p.Health(0).Calls
	items, err = p.Watch(ctx(), records[:1], r)
	if err != nil || len(items) != 0 || p.Health(0).Calls != before {
		t.Errorf("unwatched batch: %v %v, %d calls", items, err, p.Health(0).Calls-before)
	}
}

func TestWatchCutsSummariesAndSplitsBatches(t *testing.T) {
	// Each call decodes ~60 KB in the guest: more than the default 50 ms
	// on a loaded machine. This test is about the batches, not deadlines.
	p := loadFull(t, plugin.Limits{MaxWatchBatch: 3, MaxInputBytes: 64 << 10, WatchTimeout: 5 * time.Second})
	r := room()
	var records []plugin.Record
	long := strings.Repeat("é", 300)
	for i := range 10 {
		rec := pollRecord(int64(i+1), 0)
		rec.Payload = payload(map[string]any{"question": long, "options": []string{"a"}, "targets": []string{selfID},
			"pad": strings.Repeat("x", 20000)})
		records = append(records, rec)
	}
	before := p.Health(0).Calls
	items, err := p.Watch(ctx(), records, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 10 {
		t.Fatalf("%d items", len(items))
	}
	// 10 records of ~20 KB in batches of at most 3 and 64 KiB: 5 calls or more.
	if calls := p.Health(0).Calls - before; calls < 4 {
		t.Errorf("%d calls", calls)
	}
	for i, it := range items {
		if it.Seq != int64(i+1) || len([]rune(it.Summary)) != plugin.MaxSummaryRunes || !strings.HasSuffix(it.Summary, "…") {
			t.Fatalf("item %d: seq %d, %d runes", i, it.Seq, len([]rune(it.Summary)))
		}
	}
}

func TestTool(t *testing.T) {
	rt := plugintest.NewRuntime(t, plugin.Options{Now: func() time.Time { return time.UnixMilli(1779753700000) }})
	p := plugintest.LoadWith(t, rt, plugintest.Build(t, fullDir), allGrants, plugin.Limits{})
	tc := &plugin.ToolContext{Self: &plugin.Self{AgentID: selfID}, Room: room()}
	res, err := p.CallTool(ctx(), "echo", json.RawMessage(`{"text":"héllo"}`), tc)
	if err != nil {
		t.Fatal(err)
	}
	want := &plugin.ToolResult{
		Content:    []plugin.Content{{Type: "text", Text: "echo: héllo"}},
		Structured: map[string]any{"text": "héllo", "now_ms": json.Number("1779753700000"), "room": roomID, "self": selfID},
	}
	if !equalJSON(res, want) {
		t.Errorf("result\n got %+v\nwant %+v", res, want)
	}
	if _, ok := res.Structured["now_ms"].(json.Number); !ok {
		t.Errorf("numbers are not json.Number: %T", res.Structured["now_ms"])
	}

	// Arguments are checked against the input schema before any call.
	before := p.Health(0).Calls
	for _, args := range []string{`{}`, `{"text":1}`, `{"text":"x","extra":1}`, `[1]`, `{"text":"a","text":"b"}`, `{"text":` + `"` + strings.Repeat("x", 101) + `"}`} {
		_, err := p.CallTool(ctx(), "echo", json.RawMessage(args), nil)
		wantCode(t, err, plugin.CodeInvalidArguments, `tool "echo"`)
	}
	if p.Health(0).Calls != before {
		t.Error("invalid arguments reached the plugin")
	}
	_, err = p.CallTool(ctx(), "nope", nil, nil)
	wantCode(t, err, plugin.CodeUnknown)

	// A tool error is a result with is_error, not a failure.
	res, err = p.CallTool(ctx(), "fail", nil, nil)
	if err != nil || !res.IsError || res.Content[0].Text != "the tally is unavailable" {
		t.Errorf("fail: %+v %v", res, err)
	}
}

func TestToolProposals(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	res, err := p.CallTool(ctx(), "propose", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proposals) != 1 || res.Proposals[0].Type != "demo.vote" || res.Proposals[0].Payload.(map[string]any)["option"] != "yes" {
		t.Fatalf("proposals %+v", res.Proposals)
	}
	// A proposal of a type the plugin did not claim is refused, and the
	// host's plugin.Proposer check says the same.
	_, err = p.CallTool(ctx(), "propose", json.RawMessage(`{"type":"demo.poll"}`), nil)
	wantCode(t, err, plugin.CodeNotGranted, "demo.poll")
	if !p.CanPropose("propose", "demo.vote") || p.CanPropose("propose", "demo.poll") {
		t.Error("CanPropose disagrees with the description and grants")
	}
}

func TestPack(t *testing.T) {
	p := loadFull(t, plugin.Limits{})
	packs := p.Packs()
	if len(packs) != 1 || packs[0].ID() != "demo:polls/1.0" || len(packs[0].Types) != 2 {
		t.Fatalf("packs %+v", packs)
	}
	for _, id := range []string{"demo:polls/1.0", "demo:polls"} {
		pk, err := p.Pack(ctx(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !equalJSON(pk, packs[0]) {
			t.Errorf("Pack(%s) differs from the description", id)
		}
		if pk.Types[0].Schema["required"] == nil || pk.Types[1].Kind != "signal" {
			t.Errorf("types %+v", pk.Types)
		}
	}
	_, err := p.Pack(ctx(), "demo:polls/2.0")
	wantCode(t, err, plugin.CodeUnknown)
}

func TestHelloExample(t *testing.T) {
	p := plugintest.Load(t, plugintest.Build(t, helloDir), plugin.AllGrants())
	r := room()
	errs, err := p.ValidateEvent(ctx(), plugin.Proposal{Type: "hello.greeting", Actor: selfID, Payload: map[string]any{"to": selfID}}, r)
	if err != nil || len(errs) != 1 || errs[0].Message != "do not greet yourself" {
		t.Errorf("validate: %+v %v", errs, err)
	}
	items, err := p.Watch(ctx(), []plugin.Record{{Seq: 3, EventID: eventA, Type: "hello.greeting", Actor: otherID,
		AcceptedAt: 1, Payload: payload(map[string]any{"to": selfID})}}, r)
	if err != nil || len(items) != 1 || items[0].SuggestedTools[0] != "hello_wave" {
		t.Errorf("watch: %+v %v", items, err)
	}
	if got := callText(t, p, "wave", `{}`); got != "👋" {
		t.Errorf("wave = %q", got)
	}
	if pk, err := p.Pack(ctx(), "hello:greetings/1.0"); err != nil || pk.Types[0].Type != "hello.greeting" {
		t.Errorf("pack: %+v %v", pk, err)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
