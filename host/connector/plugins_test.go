package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"apconnect/host/connector"
	"apconnect/host/plugin"
)

// fakeValidator refuses votes for option "bad".
type fakeValidator struct{ fail bool }

func (fakeValidator) Name() string             { return "polls" }
func (fakeValidator) ValidatedTypes() []string { return []string{"poll.vote"} }
func (v fakeValidator) ValidateEvent(_ context.Context, p connector.Proposal, rc *connector.RoomContext) ([]connector.FieldError, error) {
	if v.fail {
		return nil, errors.New("plugin crashed")
	}
	if rc == nil || rc.RoomID != p.RoomID || rc.Self != p.Actor {
		return []connector.FieldError{{Path: "", Message: "no room context"}}, nil
	}
	ids, _ := p.Payload["option_ids"].([]any)
	for i, id := range ids {
		if id == "bad" {
			return []connector.FieldError{{Path: "/payload/option_ids/" + string(rune('0'+i)), Message: "no such option"}}, nil
		}
	}
	return nil, nil
}

// fakeWatcher asks for attention on every poll.create.
type fakeWatcher struct{}

func (fakeWatcher) Name() string           { return "pollwatch" }
func (fakeWatcher) WatchedTypes() []string { return []string{"poll.create"} }
func (fakeWatcher) Watch(_ context.Context, recs []connector.WatchRecord, _ *connector.RoomContext) ([]connector.WatchItem, error) {
	var out []connector.WatchItem
	for _, r := range recs {
		out = append(out, connector.WatchItem{Seq: r.Seq, Summary: strings.Repeat("vote now! ", 40), Priority: "high", RequiresResponse: true,
			Reason: "poll_open", SuggestedTools: []string{"agent_protocols_room_submit_event", "rm_rf_tool", "polls_tally"}})
		out = append(out, connector.WatchItem{Seq: 99999, Summary: "not a record of the batch"})
	}
	return out, nil
}

// fakeTools adds one tool.
type fakeTools struct{}

func (fakeTools) Name() string { return "polls" }
func (fakeTools) Tools() []connector.ToolDef {
	return []connector.ToolDef{{Provider: "polls", Name: "tally", MCPName: "polls_tally", Description: "Count votes.", InputSchema: map[string]any{"type": "object"}, ReadOnly: true}}
}
func (fakeTools) CallTool(_ context.Context, name string, _ json.RawMessage, tc *connector.ToolContext) (*connector.ToolResult, error) {
	room := ""
	if tc.Room != nil {
		room = tc.Room.RoomID
	}
	return &connector.ToolResult{Text: name + " in " + room, Structured: map[string]any{"votes": 0}}, nil
}

func TestPluginExtensionPoints(t *testing.T) {
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	bob := newAgent(t, h, 0xB0, "", func(o *connector.Options) {
		o.Validators = []connector.Validator{fakeValidator{}}
		o.Watchers = []connector.Watcher{fakeWatcher{}}
		o.Tools = []connector.ToolProvider{fakeTools{}}
	})
	roomID := createRoom(t, alice, h, "public", func(in *connector.RoomCreateInput) {
		in.Types = []map[string]any{{"use": "adp:deliberation/1.0"}}
	})
	must[*connector.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, connector.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	must[*connector.RoomStateResult](t, "agent_protocols_room_state")(alice.RoomState(ctx, alice.sess, connector.RoomStateInput{RoomID: roomID, Refresh: true}))
	poll := must[*connector.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, connector.RoomSubmitEventInput{
		RoomID: roomID, Type: "poll.create", Payload: map[string]any{"poll_id": "p1", "question": "Which?",
			"options": []any{map[string]any{"id": "a", "label": "A"}, map[string]any{"id": "b", "label": "B"}}}}))
	if poll.Status != connector.StatusSent {
		t.Fatalf("poll %+v", poll)
	}
	// The watcher's item, completed and bounded by the connector.
	must[*connector.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, connector.RoomStateInput{RoomID: roomID, Refresh: true}))
	in := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.event.custom"}}))
	if len(in.Items) != 1 {
		t.Fatalf("custom items %+v", in.Items)
	}
	it := in.Items[0]
	summary, _ := it.Message["summary"].(string)
	if *it.Seq != poll.Item.Seq || *it.EventID != poll.Item.EventID || *it.Actor != alice.id || it.RoomID != roomID || it.Plugin != "pollwatch" ||
		len([]rune(summary)) != 160 || it.Priority != "high" || it.CreatedAt != poll.Item.ReceivedAt {
		t.Fatalf("custom item %+v", it)
	}
	if len(it.SuggestedTools) != 2 || it.SuggestedTools[0] != "agent_protocols_room_submit_event" || it.SuggestedTools[1] != "polls_tally" {
		t.Fatalf("suggested tools not filtered: %v", it.SuggestedTools)
	}
	// The validator refuses before signing, naming itself and the path.
	last, _ := bob.Store().Read().LastNonce(ctx)
	_, err := bob.RoomSubmitEvent(ctx, bob.sess, connector.RoomSubmitEventInput{RoomID: roomID, Type: "poll.vote",
		Payload: map[string]any{"poll_event_id": poll.Item.EventID, "option_ids": []any{"a", "bad"}}})
	var ce *connector.Error
	if code(err) != connector.CodeInvalidEvent || !asErr(err, &ce) {
		t.Fatalf("validator refusal: %v", err)
	}
	fe := ce.Data["errors"].([]any)[0].(map[string]any)
	if fe["plugin"] != "polls" || fe["path"] != "/payload/option_ids/1" {
		t.Fatalf("field error %+v", fe)
	}
	if now, _ := bob.Store().Read().LastNonce(ctx); now != last {
		t.Fatal("a refused write used a nonce")
	}
	ok := must[*connector.WriteResult](t, "agent_protocols_room_submit_event")(bob.RoomSubmitEvent(ctx, bob.sess, connector.RoomSubmitEventInput{RoomID: roomID, Type: "poll.vote",
		Payload: map[string]any{"poll_event_id": poll.Item.EventID, "option_ids": []any{"a"}}}))
	if ok.Status != connector.StatusSent {
		t.Fatalf("vote %+v", ok)
	}
	// Tool provider routing with the room context.
	tools := bob.Tools()
	if len(tools) != 1 || tools[0].MCPName != "polls_tally" {
		t.Fatalf("tools %+v", tools)
	}
	res, err := bob.CallTool(ctx, bob.sess, "polls_tally", json.RawMessage(`{"room_id":"`+roomID+`"}`))
	if err != nil || res.Text != "tally in "+roomID {
		t.Fatalf("tool call %+v %v", res, err)
	}
	if _, err := bob.CallTool(ctx, bob.sess, "nope_tool", nil); code(err) != connector.CodeNotFound {
		t.Fatalf("unknown tool: %v", err)
	}
	// A failing validator closes writes of its type only.
	carol := newAgent(t, h, 0xC0, "", func(o *connector.Options) { o.Validators = []connector.Validator{fakeValidator{fail: true}} })
	must[*connector.RoomJoinResult](t, "agent_protocols_room_join")(carol.RoomJoin(ctx, carol.sess, connector.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	if _, err := carol.RoomSubmitEvent(ctx, carol.sess, connector.RoomSubmitEventInput{RoomID: roomID, Type: "poll.vote",
		Payload: map[string]any{"poll_event_id": poll.Item.EventID, "option_ids": []any{"a"}}}); code(err) != connector.CodeInvalidEvent {
		t.Fatalf("failing validator: %v", err)
	}
	must[*connector.WriteResult](t, "agent_protocols_room_send_message")(carol.RoomSendMessage(ctx, carol.sess, connector.RoomSendMessageInput{RoomID: roomID, Content: "still works", OnHeadMismatch: "send_anyway"}))
	id := must[*connector.IdentityCurrentResult](t, "agent_protocols_identity_current")(carol.IdentityCurrent(ctx, carol.sess))
	if len(id.Plugins) != 1 || id.Plugins[0].LastError == "" {
		t.Fatalf("plugin health %+v", id.Plugins)
	}
}

// plugin-side fakes for the adapters.
type pv struct{}

func (pv) Name() string             { return "pv" }
func (pv) ValidatedTypes() []string { return []string{"x.y"} }
func (pv) ValidateEvent(_ context.Context, p plugin.Proposal, rc *plugin.RoomContext) ([]plugin.FieldError, error) {
	if rc.Self.AgentID != p.Actor || rc.Head.Seq != 3 {
		return nil, errors.New("context not passed")
	}
	return []plugin.FieldError{{Path: "/payload/a", Message: "bad a"}}, nil
}

type pw struct{}

func (pw) Name() string           { return "pw" }
func (pw) WatchedTypes() []string { return []string{"x.y"} }
func (pw) Watch(_ context.Context, recs []plugin.Record, _ *plugin.RoomContext) ([]plugin.InboxItem, error) {
	return []plugin.InboxItem{{Seq: recs[0].Seq, Summary: string(recs[0].Payload), Priority: "low"}}, nil
}

type pt struct{}

func (pt) Name() string { return "pt" }
func (pt) Tools() []plugin.ToolDef {
	return []plugin.ToolDef{{Plugin: "pt", Name: "t", MCPName: "pt_t", ReadOnly: true}}
}
func (pt) CallTool(_ context.Context, name string, _ json.RawMessage, tc *plugin.ToolContext) (*plugin.ToolResult, error) {
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: name + " " + tc.Self.AgentID}},
		Proposals: []plugin.Proposal{{Type: "x.y", Payload: map[string]any{"a": "b"}}}}, nil
}

func TestPluginAdapters(t *testing.T) {
	rc := &connector.RoomContext{RoomID: "r", Self: "did:agent:me", HeadSeq: 3}
	fes, err := connector.PluginValidator(pv{}).ValidateEvent(ctx, connector.Proposal{Type: "x.y", Actor: "did:agent:me"}, rc)
	if err != nil || len(fes) != 1 || fes[0].Plugin != "pv" || fes[0].Path != "/payload/a" {
		t.Fatalf("validator %+v %v", fes, err)
	}
	items, err := connector.PluginWatcher(pw{}).Watch(ctx, []connector.WatchRecord{{Seq: 7, Type: "x.y", Payload: json.RawMessage(`{"a":1}`)}}, rc)
	if err != nil || len(items) != 1 || items[0].Seq != 7 || items[0].Summary != `{"a":1}` {
		t.Fatalf("watcher %+v %v", items, err)
	}
	tp := connector.PluginTools(pt{})
	if defs := tp.Tools(); len(defs) != 1 || defs[0].MCPName != "pt_t" || defs[0].Provider != "pt" {
		t.Fatalf("tools %+v", defs)
	}
	res, err := tp.CallTool(ctx, "t", nil, &connector.ToolContext{Self: "did:agent:me", Room: rc})
	if err != nil || res.Text != "t did:agent:me" || len(res.Proposals) != 1 || res.Proposals[0].Payload["a"] != "b" {
		t.Fatalf("tool %+v %v", res, err)
	}
}

// scopedValidator asks for the records of the poll type and those the
// proposal names, and keeps the room context it was given.
type scopedValidator struct {
	mu  sync.Mutex
	got []connector.RoomContext
}

func (*scopedValidator) Name() string             { return "scoped" }
func (*scopedValidator) ValidatedTypes() []string { return []string{"poll.vote"} }
func (*scopedValidator) ValidateScope(p connector.Proposal) plugin.RecordScope {
	return plugin.RecordScope{Types: []string{"poll.create"}, EventIDs: plugin.ProposalEventIDs(plugin.Proposal{Payload: p.Payload})}
}
func (v *scopedValidator) ValidateEvent(_ context.Context, _ connector.Proposal, rc *connector.RoomContext) ([]connector.FieldError, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.got = append(v.got, *rc)
	return nil, nil
}

func (v *scopedValidator) last() connector.RoomContext {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.got[len(v.got)-1]
}

// A validator's room context carries the records of its scope from the
// verified store: the newest of its types and the referenced ones, in seq
// order, and records_truncated unless the store holds the room from seq 1.
func TestValidatorRecordScope(t *testing.T) {
	h := startHub(t)
	av, bv := &scopedValidator{}, &scopedValidator{}
	alice := newAgent(t, h, 0xA1, "", func(o *connector.Options) { o.Validators = []connector.Validator{av} })
	// bob keeps only the newest 10 records of a room.
	bob := newAgent(t, h, 0xB0, "", func(o *connector.Options) {
		o.Config.State.RecordsPerRoom = 10
		o.Validators = []connector.Validator{bv}
	})
	roomID := createRoom(t, alice, h, "public", func(in *connector.RoomCreateInput) {
		in.Types = []map[string]any{{"use": "adp:deliberation/1.0"}}
	})
	pollOf := func(id string) string {
		res := must[*connector.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, connector.RoomSubmitEventInput{
			RoomID: roomID, Type: "poll.create", OnHeadMismatch: "send_anyway",
			Payload: map[string]any{"poll_id": id, "question": id + "?", "options": []any{map[string]any{"id": "a", "label": "A"}}}}))
		return res.Item.EventID
	}
	old := pollOf("old")
	for i := range 12 {
		must[*connector.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
			connector.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprint("filler ", i), OnHeadMismatch: "send_anyway"}))
	}
	recent := pollOf("recent")
	vote := func(a *agent, poll string) {
		t.Helper()
		must[*connector.WriteResult](t, "agent_protocols_room_submit_event")(a.RoomSubmitEvent(ctx, a.sess, connector.RoomSubmitEventInput{
			RoomID: roomID, Type: "poll.vote", OnHeadMismatch: "send_anyway", Payload: map[string]any{"poll_event_id": poll, "option_ids": []any{"a"}}}))
	}
	ids := func(rc connector.RoomContext) []string {
		var out []string
		for _, r := range rc.Records {
			out = append(out, r.EventID)
			if r.Type != "poll.create" || r.Actor != alice.id || len(r.Payload) == 0 || r.Redacted {
				t.Fatalf("record %+v", r)
			}
		}
		return out
	}
	// alice holds the whole room: both polls, oldest first, not truncated.
	vote(alice, recent)
	if rc := av.last(); rc.RecordsTruncated || !slices.Equal(ids(rc), []string{old, recent}) || rc.RoomID != roomID || rc.Self != alice.id {
		t.Fatalf("alice's context: truncated %v, records %v", rc.RecordsTruncated, ids(rc))
	}
	// bob joins and holds only the newest records: the old poll is gone,
	// the context says it is partial.
	must[*connector.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, connector.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	vote(bob, recent)
	if rc := bv.last(); !rc.RecordsTruncated || !slices.Equal(ids(rc), []string{recent}) {
		t.Fatalf("bob's context: truncated %v, records %v", rc.RecordsTruncated, ids(rc))
	}
	vote(bob, old)
	if rc := bv.last(); !rc.RecordsTruncated || !slices.Equal(ids(rc), []string{recent}) {
		t.Fatalf("bob's context of a vote on a poll he does not hold: %v", ids(rc))
	}
}
