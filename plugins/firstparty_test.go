package plugins_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"apconnect/host/plugin"
)

var firstParty = []struct {
	dir       string
	validates []string
	watches   []string
	tools     []string
	grants    string
}{
	{reactionsDir, []string{"reaction.create"}, nil, []string{"summary"}, "validate tools"},
	{deliberationDir, []string{"poll.create", "poll.vote", "proposal.create", "question.create"}, []string{"poll.create", "question.create"}, []string{"tally"}, "validate watch tools"},
	{curationDir, []string{"artifact.create", "graph.update"}, nil, []string{"graph"}, "validate tools"},
	{moderationDir, []string{"claim.update", "turn.update"}, []string{"claim.update"}, []string{"active_claims"}, "validate watch tools"},
	{realtimeDir, []string{"session.answer", "session.close", "session.offer"}, []string{"session.offer"}, []string{"sessions"}, "validate watch tools"},
}

// TestFirstPartyDescriptions checks that each plugin describes exactly
// what it does: its types, read-only tools that name a room and have an
// output schema, no packs (the registered packs are the specification's)
// and no proposals.
func TestFirstPartyDescriptions(t *testing.T) {
	t.Parallel()
	for _, fp := range firstParty {
		p := load(t, fp.dir)
		d := p.Description()
		if d.Name != fp.dir || d.Version != "1.0.0" || d.ABIVersion != plugin.ABIVersion || d.Description == "" {
			t.Errorf("%s: %+v", fp.dir, d)
		}
		if !slices.Equal(d.Validates, fp.validates) || !slices.Equal(d.Watches, fp.watches) || d.Proposes != nil || d.Packs != nil {
			t.Errorf("%s: validates %v watches %v proposes %v packs %v", fp.dir, d.Validates, d.Watches, d.Proposes, d.Packs)
		}
		if got := strings.Join(d.RequiredGrants().Strings(), " "); got != fp.grants {
			t.Errorf("%s: grants %q", fp.dir, got)
		}
		var names []string
		for _, td := range d.Tools {
			names = append(names, td.Name)
			required, _ := td.InputSchema["required"].([]any)
			if td.MCPName != fp.dir+"_"+td.Name || !td.ReadOnly || td.OutputSchema == nil || td.Title == "" ||
				!slices.Contains(required, any("room_id")) {
				t.Errorf("%s: tool %+v", fp.dir, td)
			}
		}
		if !slices.Equal(names, fp.tools) {
			t.Errorf("%s: tools %v", fp.dir, names)
		}
	}
}

// TestGoVersionsDescribeAlike checks that the Go version of each
// first-party plugin (examples/plugins/<name>_go) describes itself exactly
// as the plugin does (name, version, texts, types, tool schemas), so that
// either file can be configured under the plugin's name.
func TestGoVersionsDescribeAlike(t *testing.T) {
	t.Parallel()
	for _, fp := range firstParty {
		b := builds(fp.dir)
		d, goDesc := load(t, b[0]).Description(), load(t, b[1]).Description()
		want, _ := json.Marshal(d)
		got, _ := json.Marshal(goDesc)
		if string(got) != string(want) {
			t.Errorf("%s: descriptions differ:\nrust %s\ngo   %s", fp.dir, want, got)
		}
	}
}

// TestFirstPartyRegistry runs the five plugins together as the connector
// does: one registry, validators by type with the union scope, one watch
// call per sync page, tools by MCP name; once with the plugins and once
// with their Go versions.
func TestFirstPartyRegistry(t *testing.T) {
	for build := range 2 {
		t.Run([]string{"rust", "go"}[build], func(t *testing.T) {
			t.Parallel()
			testFirstPartyRegistry(t, build)
		})
	}
}

// testFirstPartyRegistry is TestFirstPartyRegistry with build 0 (the
// plugins) or 1 (their Go versions) of each plugin (builds).
func testFirstPartyRegistry(t *testing.T, build int) {
	reg := plugin.NewRegistry(nil)
	for _, fp := range firstParty {
		if err := reg.Add(load(t, builds(fp.dir)[build])); err != nil {
			t.Fatal(err)
		}
	}
	var tools []string
	for _, td := range reg.Tools() {
		tools = append(tools, td.MCPName)
	}
	if got := strings.Join(tools, " "); got != "curation_graph deliberation_tally moderation_active_claims reactions_summary realtime_sessions" {
		t.Errorf("tools %s", got)
	}

	r := newRoom()
	msg := r.add("message.create", "bob", obj{"text": "Shall we cap the queue?"})
	poll := r.add("poll.create", "alice", pollPayload("cap", "yes", "no"), "me")
	r.add("reaction.create", "bob", obj{"event_id": msg, "reaction": "agree"})
	r.add("claim.update", "alice", obj{"claim_id": "bench", "owner": agent("bob"), "state": "handoff", "handoff_to": agent("me")})
	r.add("session.offer", "bob", offerPayload("call", []string{agent("me")}, []string{"audio"}))
	r.add("graph.update", "alice", obj{"operation": "upsert_node", "node": gnode("q", "Queue")})

	// The write path: the union scope of the type's validators.
	vote := plugin.Proposal{Type: "poll.vote", Actor: agent("me"), Payload: obj{"poll_event_id": poll, "option_ids": []string{"maybe"}}}
	rc := r.context(t, reg.ValidateScope(vote))
	errs, err := reg.ValidateEvent(ctx(), vote, rc)
	if err != nil || len(errs) != 1 || errs[0].Plugin != "deliberation" || errs[0].Path != "/payload/option_ids/0" {
		t.Errorf("vote: %s %v", fmtErrs(errs), err)
	}
	react := plugin.Proposal{Type: "reaction.create", Actor: agent("me"), Payload: obj{"event_id": msg, "reaction": "agree"}}
	if errs, err := reg.ValidateEvent(ctx(), react, r.context(t, reg.ValidateScope(react))); err != nil || len(errs) != 0 {
		t.Errorf("reaction: %s %v", fmtErrs(errs), err)
	}

	// Sync: one page, every watcher.
	items, werrs := reg.Watch(ctx(), r.records, r.base())
	if len(werrs) != 0 {
		t.Fatal(werrs)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Plugin+"@"+itoa(it.Seq)+":"+it.Priority)
	}
	if strings.Join(got, " ") != "deliberation@6:high moderation@8:high realtime@9:high" {
		t.Errorf("items %v", got)
	}

	// MCP: a tool by its MCP name with the context of its room.
	res, err := reg.CallTool(ctx(), "moderation_active_claims", json.RawMessage(`{"room_id":"`+roomID+`"}`),
		&plugin.ToolContext{Self: &plugin.Self{AgentID: agent("me")}, Room: r.context(t, reg.ToolScope("moderation_active_claims"))})
	if err != nil || !strings.Contains(res.Content[0].Text, `"bench" (task) held by `+agent("bob")+", being handed to you") {
		t.Errorf("tool: %+v %v", res, err)
	}
}
