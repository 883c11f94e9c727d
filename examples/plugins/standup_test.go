package plugins_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// now is 2026-05-26T00:01:40Z, the host time the plugin sees.
const now int64 = 1779753700000

const roomID = "d8ftedhpqhsusbg001tg"

func agent(name string) string {
	sum := sha256.Sum256([]byte("agent:" + name))
	return "did:agent:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

func eventID(n int) string {
	sum := sha256.Sum256([]byte{byte(n)})
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// loadStandup builds the example and loads it, as an operator would, with
// the grants `apconnect plugin inspect` prints for it.
func loadStandup(t *testing.T) *plugin.Plugin {
	t.Helper()
	rt := plugintest.NewRuntime(t, plugin.Options{Now: func() time.Time { return time.UnixMilli(now) }})
	wasm := plugintest.Build(t, "standup")
	ins, err := rt.Inspect(context.Background(), wasm, plugin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ins.Grants.Strings(), " "); got != "validate watch tools packs" {
		t.Fatalf("grants %q", got)
	}
	limits := plugin.Limits{ValidateTimeout: 10 * time.Second, WatchTimeout: 10 * time.Second, ToolTimeout: 10 * time.Second}
	return plugintest.LoadWith(t, rt, wasm, ins.Grants, limits)
}

// report is a standup.report record by actor, the nth record of the room.
func report(n int, actor string, payload map[string]any) plugin.Record {
	b, _ := json.Marshal(payload)
	at := now - int64(100-n)*60_000
	return plugin.Record{Seq: int64(n), EventID: eventID(n), Type: "standup.report", Actor: agent(actor), CreatedAt: at - 50, AcceptedAt: at, Payload: b}
}

func roomWith(self string, records ...plugin.Record) *plugin.RoomContext {
	return &plugin.RoomContext{
		RoomID: roomID, Status: "active", Creator: agent("alice"),
		Self: &plugin.Self{AgentID: agent(self), Role: "speaker"},
		Members: []plugin.Member{
			{AgentID: agent("alice"), Role: "moderator"}, {AgentID: agent("bob"), Role: "speaker"},
			{AgentID: agent("me"), Role: "speaker"}, {AgentID: agent("olga"), Role: "observer"},
		},
		Records: records,
	}
}

func TestStandupPack(t *testing.T) {
	p := loadStandup(t)
	pk, err := p.Pack(context.Background(), "example:standup/1.0")
	if err != nil || len(pk.Types) != 1 || pk.Types[0].Type != "standup.report" || pk.Types[0].Kind != "message" {
		t.Fatalf("pack %+v %v", pk, err)
	}
	td := p.Tools()
	if len(td) != 1 || td[0].MCPName != "standup_summary" || !td[0].ReadOnly {
		t.Errorf("tools %+v", td)
	}
}

func TestStandupValidator(t *testing.T) {
	p := loadStandup(t)
	rc := roomWith("me", report(10, "me", map[string]any{"date": "2026-05-25", "done": []string{"merged the cache"}}))
	check := func(what string, payload map[string]any, want ...string) {
		t.Helper()
		errs, err := p.ValidateEvent(context.Background(), plugin.Proposal{Type: "standup.report", Actor: agent("me"), Payload: payload}, rc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range errs {
			got = append(got, e.Path+": "+e.Message)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", what, got, want)
		}
	}
	check("today's report", map[string]any{"date": "2026-05-26", "planned": []string{"benchmark eviction"},
		"blockers": []any{map[string]any{"summary": "need the staging keys", "waiting_on": agent("bob")}}})
	check("tomorrow in a time zone ahead of UTC", map[string]any{"date": "2026-05-27", "done": []string{"x"}})
	check("not a date", map[string]any{"date": "2026-02-30", "done": []string{"x"}},
		`/payload/date: "2026-02-30" is not a calendar date`)
	check("the future", map[string]any{"date": "2026-05-28", "done": []string{"x"}},
		"/payload/date: 2026-05-28 is in the future")
	check("long ago", map[string]any{"date": "2026-05-10", "done": []string{"x"}},
		"/payload/date: 2026-05-10 is more than a week ago")
	check("nothing to report", map[string]any{"date": "2026-05-26"},
		"/payload: a report needs done, planned or blockers")
	check("a second report for a day", map[string]any{"date": "2026-05-25", "done": []string{"more"}},
		"/payload/date: you already reported for 2026-05-25 (event "+eventID(10)+"); add to it with a message")
	check("bad blockers", map[string]any{"date": "2026-05-26", "blockers": []any{
		map[string]any{"summary": "me, myself", "waiting_on": agent("me")},
		map[string]any{"summary": "a stranger", "waiting_on": agent("mallory")},
	}},
		"/payload/blockers/0/waiting_on: you cannot be blocked on yourself",
		"/payload/blockers/1/waiting_on: "+agent("mallory")+" is not a member of this room")
}

func TestStandupWatchAndSummary(t *testing.T) {
	p := loadStandup(t)
	records := []plugin.Record{
		report(20, "bob", map[string]any{"date": "2026-05-26", "done": []string{"profiled <script>the</script> queue"},
			"blockers": []any{map[string]any{"summary": "need your review of the cache patch", "waiting_on": agent("me")}}}),
		report(21, "alice", map[string]any{"date": "2026-05-26", "planned": []string{"write the release notes"}}),
		report(22, "me", map[string]any{"date": "2026-05-26", "blockers": []any{map[string]any{"summary": "mine", "waiting_on": agent("me")}}}),
		report(23, "alice", map[string]any{"date": "2026-05-25", "done": []string{"yesterday"}}),
	}
	items, err := p.Watch(context.Background(), records, roomWith("me"))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Seq != 20 || items[0].Priority != "high" || !items[0].RequiresResponse ||
		items[0].Summary != "Blocked on you: need your review of the cache patch" ||
		strings.Join(items[0].SuggestedTools, ",") != "standup_summary,agent_protocols_room_send_message" {
		t.Errorf("items %+v", items)
	}

	rc := roomWith("me", records[:2]...)
	res, err := p.CallTool(context.Background(), "summary", json.RawMessage(`{"room_id":"`+roomID+`"}`), &plugin.ToolContext{Room: rc})
	if err != nil || res.IsError {
		t.Fatalf("summary: %+v %v", res, err)
	}
	text := res.Content[0].Text
	for _, want := range []string{
		"Stand-up 2026-05-26: 2 reports, 1 blocker.",
		"- " + agent("bob") + ": done profiled ‹script›the‹/script› queue; planned —",
		"! " + agent("bob") + " is blocked: need your review of the cache patch (waiting on " + agent("me") + ")",
		"Not reported yet: " + agent("me"),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	if missing, _ := res.Structured["missing"].([]any); len(missing) != 1 {
		t.Errorf("structured %+v", res.Structured)
	}
	res, err = p.CallTool(context.Background(), "summary", json.RawMessage(`{"room_id":"`+roomID+`","date":"2026-05-25"}`), &plugin.ToolContext{Room: roomWith("me", records...)})
	if err != nil || !strings.HasPrefix(res.Content[0].Text, "Stand-up 2026-05-25: 1 report, 0 blockers.") {
		t.Errorf("yesterday: %+v %v", res, err)
	}
}
