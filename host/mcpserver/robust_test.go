package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/engine"
	"apconnect/host/toolcatalog"
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
		// mail_send requires nothing in its schema (as 0.12.6) but needs
		// to or in_reply_to.
		if len(info.Required) > 0 || info.Name == "agent_protocols_mail_send" {
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
	types := toolTypes(t)
	if len(types) != len(toolcatalog.Names()) {
		t.Fatalf("%d handlers for %d tools", len(types), len(toolcatalog.Names()))
	}
	for name, io := range types {
		info, ok := toolcatalog.Info(name)
		if !ok {
			t.Fatalf("%s is not a catalog tool", name)
		}
		var fields []string
		rt := io.in
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
			t.Errorf("%s: engine input fields %v, schema properties %v", name, fields, want)
		}
	}
	// And a field the engine does not know is refused, not dropped.
	tool := engine.ToolSpec[discourse.RoomStateInput, *discourse.RoomStateResult]{Name: "x",
		Call: func(context.Context, engine.SessionID, *discourse.RoomStateInput) (*discourse.RoomStateResult, error) {
			return nil, nil
		}}.Tool()
	var bad *engine.BadArgumentsError
	if _, _, err := tool.Call(context.Background(), "", json.RawMessage(`{"room_id":"x","surprise":1}`)); !errors.As(err, &bad) {
		t.Errorf("an unknown field was dropped: %v", err)
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
	hd := s.handler(engine.ToolSpec[struct{}, *connector.HostsListResult]{Name: pfx + "hosts_list",
		Call: func(context.Context, engine.SessionID, *struct{}) (*connector.HostsListResult, error) {
			panic("a bug in a tool handler")
		}}.Tool())
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
