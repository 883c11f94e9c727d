package mcpserver

import (
	"apconnect/host/toolcatalog"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/connector"
)

// Every tool called with only its required inputs, and with none at all:
// a clear result or a clear error, never a crash and never a protocol
// failure.
func TestEveryToolWithRequiredInputsAndWithNone(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	roomID := alice.createRoom("public", nil)
	outcomes := map[string][]string{}
	for _, name := range toolcatalog.Names() {
		short := strings.TrimPrefix(name, pfx)
		args, ok := minimalArgs[short]
		if !ok {
			t.Fatalf("no minimal arguments for %s", name)
		}
		args = strings.ReplaceAll(args, testHost, h.Origin())
		args = strings.ReplaceAll(args, testRoom, roomID)
		for _, a := range []struct {
			label string
			args  any
		}{{"required", json.RawMessage(args)}, {"none", nil}, {"empty", json.RawMessage(`{}`)}} {
			res := callRaw(t, alice.cs, name, a.args)
			if res.IsError {
				e := errorOf(t, name, res)
				outcomes[name] = append(outcomes[name], a.label+":"+e.Code)
				if e.Code == "internal" {
					t.Errorf("%s with %s inputs: internal error %s", name, a.label, e.Message)
				}
				continue
			}
			structured(t, name, res)
			outcomes[name] = append(outcomes[name], a.label+":ok")
		}
	}
	// Tools without required inputs succeed with none; the others refuse
	// an empty call as invalid input.
	for _, info := range toolcatalog.Infos() {
		got := outcomes[info.Name]
		wantNone := "none:ok"
		if len(info.Required) > 0 {
			wantNone = "none:" + toolcatalog.ErrCodeInvalidInput
		}
		if got[1] != wantNone {
			t.Errorf("%s: %v, want %s", info.Name, got, wantNone)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// Hostile and malformed arguments never crash the server: each call ends
// in a tool error or a protocol error, and the session keeps working.
func TestHostileArgumentsNeverCrash(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	// 900 levels: the go-sdk itself treats a message nested deeper than 1000
	// levels as a broken stream and ends the session (cleanly).
	deep := strings.Repeat(`{"a":[`, 450) + `1` + strings.Repeat(`]}`, 450)
	bad := []string{
		`[]`, `"text"`, `42`, `true`,
		`{"room_id":false}`, `{"room_id":["x"]}`, `{"room_id":"d8ftedhpqhsusbg001tg","limit":1e300}`,
		`{"room_id":"d8ftedhpqhsusbg001tg","limit":-1}`, `{"room_id":"` + strings.Repeat("x", 1<<16) + `"}`,
		`{"room_id":"d8ftedhpqhsusbg001tg","room_id":"dup"}`, `{"payload":` + deep + `}`,
		`{"room_id":"\ud800"}`, `{"ids":[` + strings.Repeat(`"a",`, 2000) + `"a"],"action":"handled"}`,
		`{"room_id":"d8ftedhpqhsusbg001tg","content":"x","base_seq":9007199254740993}`,
	}
	for _, name := range toolcatalog.Names() {
		for _, b := range bad {
			res, err := alice.cs.CallTool(bg, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(b)})
			if err != nil {
				continue // refused at the protocol level: fine, as long as the session lives
			}
			if !res.IsError {
				t.Errorf("%s accepted %.80s", name, b) // (null arguments are no arguments, tested above)
				continue
			}
			if e := errorOf(t, name, res); e.Code == "internal" {
				t.Errorf("%s with %.80s: internal error %s", name, b, e.Message)
			}
		}
	}
	if _, err := alice.cs.CallTool(bg, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool was accepted")
	}
	alice.call("identity_current", nil) // the session still works
}

// The engine's input structs take every input the schemas allow, so no
// argument is ever dropped on the way to the engine.
func TestEngineInputsCoverTheSchemas(t *testing.T) {
	t.Parallel()
	inputs := map[string]any{
		"identity_current": noInput{}, "hosts_list": noInput{},
		"rooms_search": connector.RoomsSearchInput{}, "rooms_list": connector.RoomsListInput{},
		"room_open": connector.RoomOpenInput{}, "room_state": connector.RoomStateInput{},
		"room_members_list": connector.RoomMembersListInput{}, "room_member_get": connector.RoomMemberGetInput{},
		"agent_status_list": connector.AgentStatusListInput{}, "agent_status_get": connector.AgentStatusGetInput{},
		"agent_status_set": connector.AgentStatusSetInput{}, "room_timeline": connector.RoomTimelineInput{},
		"room_mark_read": connector.RoomMarkReadInput{}, "inbox_next": connector.InboxNextInput{},
		"inbox_ack": connector.InboxAckInput{}, "drafts_list": connector.DraftsListInput{},
		"draft_get": connector.DraftGetInput{}, "draft_commit": connector.DraftCommitInput{},
		"draft_drop": connector.DraftDropInput{}, "profile_update": connector.ProfileUpdateInput{},
		"room_create": connector.RoomCreateInput{}, "room_join": connector.RoomJoinInput{},
		"room_leave": connector.RoomLeaveInput{}, "room_send_message": connector.RoomSendMessageInput{},
		"room_submit_event": connector.RoomSubmitEventInput{}, "join_requests_list": connector.JoinRequestsListInput{},
		"join_request_review": connector.JoinRequestReviewInput{},
		"services_list":       connector.ServicesListInput{}, "profiles_get": connector.ProfilesGetInput{},
		"profile_history": connector.ProfileHistoryInput{}, "schema_get": connector.SchemaGetInput{},
		"room_archive": connector.RoomArchiveInput{}, "room_watch": connector.RoomWatchInput{},
	}
	if len(inputs) != len(toolcatalog.Names()) {
		t.Fatalf("%d input structs for %d tools", len(inputs), len(toolcatalog.Names()))
	}
	for short, v := range inputs {
		info, ok := toolcatalog.Info(pfx + short)
		if !ok {
			t.Fatalf("%s is not a catalog tool", short)
		}
		var fields []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if tag != "" && tag != "-" {
				fields = append(fields, tag)
			}
		}
		want := slices.Clone(info.Inputs)
		slices.Sort(want)
		slices.Sort(fields)
		if !slices.Equal(fields, want) {
			t.Errorf("%s: engine input fields %v, schema properties %v", short, fields, want)
		}
	}
	// And a field the engine does not know is refused, not dropped.
	var in connector.RoomStateInput
	if err := decodeArgs(json.RawMessage(`{"room_id":"x","surprise":1}`), &in); err == nil {
		t.Error("decodeArgs dropped an unknown field")
	}
}

// A panic below a handler becomes an internal error result (tools) or an
// internal JSON-RPC error, and the server keeps serving.
func TestPanicsAreRecovered(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, "alice", 0xA1, agentOptions{})
	alice.srv.AddTool(&mcp.Tool{Name: "test_panic", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("boom") })
	res := callRaw(t, alice.cs, "test_panic", nil)
	if e := errorOf(t, "test_panic", res); e.Code != "internal" {
		t.Fatalf("panic result %+v", e)
	}
	// Through a catalog spec too.
	s := &server{conn: alice.conn, log: slog.New(slog.NewTextHandler(alice.log, nil)), sessions: map[*mcp.ServerSession]*sessionState{}}
	s.srv = alice.srv
	s.watch = newWatcher(s)
	hd := toolSpec[noInput, *connector.HostsListResult]{name: pfx + "hosts_list",
		call: func(context.Context, *connector.Connector, connector.SessionID, *noInput) (*connector.HostsListResult, error) {
			panic("a bug in a tool handler")
		}}.handler(s)
	r, err := hd(bg, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: pfx + "hosts_list"}}, json.RawMessage(`{}`))
	if err != nil || errorOf(t, "hosts_list", r).Code != "internal" {
		t.Fatalf("spec panic: %v %v", r, err)
	}
	alice.call("hosts_list", nil)
	if !strings.Contains(alice.log.String(), "boom") {
		t.Error("the panic was not logged")
	}
	alice.log.reset()
}
