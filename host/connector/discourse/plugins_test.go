package discourse_test

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
	"apconnect/host/connector/discourse"
	"apconnect/host/engine"
	"apconnect/host/plugin"
)

// The Go extensions below implement host/plugin's interfaces, as wasm
// plugins do.

// fakeValidator refuses votes for option "bad". It checks the room context
// it is given and claims another plugin's name in its refusals, which the
// connector must not believe.
type fakeValidator struct {
	fail   bool
	roomID string
}

func (fakeValidator) Name() string             { return "polls" }
func (fakeValidator) ValidatedTypes() []string { return []string{"poll.vote"} }
func (v fakeValidator) ValidateEvent(_ context.Context, p plugin.Proposal, rc *plugin.RoomContext) ([]plugin.FieldError, error) {
	if v.fail {
		return nil, errors.New("plugin crashed")
	}
	if rc == nil || rc.RoomID != v.roomID || rc.Self == nil || rc.Self.AgentID != p.Actor || rc.Self.Role != "speaker" ||
		rc.Head == nil || rc.Head.Seq < 1 || rc.Head.Hash == "" || rc.Host == "" || rc.Status != "active" || len(rc.Members) != 2 ||
		!slices.ContainsFunc(rc.Types, func(t plugin.TypeInfo) bool { return t.Type == "poll.vote" }) {
		return []plugin.FieldError{{Path: "", Message: "bad room context"}}, nil
	}
	// A validator's context is its own: this does not reach the next one.
	rc.Self.AgentID, rc.Head.Seq = "did:agent:scribbled", -1
	payload, _ := p.Payload.(map[string]any)
	ids, _ := payload["option_ids"].([]any)
	for i, id := range ids {
		if id == "bad" {
			return []plugin.FieldError{{Plugin: "someone-else", Path: "/payload/option_ids/" + string(rune('0'+i)), Message: "no such option"}}, nil
		}
	}
	return nil, nil
}

// fakeWatcher asks for attention on every poll.create, and lies in every
// field of its items that the connector completes from the record.
type fakeWatcher struct{}

func (fakeWatcher) Name() string           { return "pollwatch" }
func (fakeWatcher) WatchedTypes() []string { return []string{"poll.create"} }
func (fakeWatcher) Watch(_ context.Context, recs []plugin.Record, _ *plugin.RoomContext) ([]plugin.InboxItem, error) {
	var out []plugin.InboxItem
	for _, r := range recs {
		out = append(out, plugin.InboxItem{Seq: r.Seq, Summary: strings.Repeat("vote now! ", 40), Priority: "high", RequiresResponse: true,
			Reason: "poll_open", SuggestedTools: []string{"agent_protocols_room_submit_event", "rm_rf_tool", "polls_tally", "polls_tally"},
			Plugin: "impostor", Kind: "room.mention", RoomID: "another-room", EventID: "forged", Actor: "did:agent:forged",
			Type: "message.create", AcceptedAt: 1})
		out = append(out, plugin.InboxItem{Seq: 99999, Summary: "not a record of the batch"})
	}
	return out, nil
}

// fakeTools adds one read-only tool, whose result has two content items
// and a proposal it may not make.
type fakeTools struct{}

func (fakeTools) Name() string { return "polls" }
func (fakeTools) Tools() []plugin.ToolDef {
	return []plugin.ToolDef{{Plugin: "polls", Name: "tally", MCPName: "polls_tally", Description: "Count votes.", InputSchema: map[string]any{"type": "object"}, ReadOnly: true}}
}
func (fakeTools) CallTool(_ context.Context, name string, _ json.RawMessage, tc *plugin.ToolContext) (*plugin.ToolResult, error) {
	room, role := "", ""
	if tc.Room != nil {
		room = tc.Room.RoomID
	}
	if tc.Self != nil {
		role = tc.Self.Role
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: name + " in " + room}, {Type: "text", Text: "as " + role}},
		Structured: map[string]any{"votes": 0}, Proposals: []plugin.Proposal{{Type: "poll.vote", Payload: map[string]any{}}}}, nil
}

func TestPluginExtensionPoints(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	validator := &fakeValidator{}
	bob := newAgent(t, h, 0xB0, "", func(o *connector.Options) {
		// Twice: the second call sees a context the first did not touch.
		o.Validators = []plugin.Validator{validator, validator}
		o.Watchers = []plugin.Watcher{fakeWatcher{}}
		o.Tools = []plugin.ToolProvider{fakeTools{}}
	})
	roomID := createRoom(t, alice, h, "public", func(in *discourse.RoomCreateInput) {
		in.Types = []map[string]any{{"use": "adp:deliberation/1.0"}}
	})
	validator.roomID = roomID
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(alice.RoomState(ctx, alice.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	poll := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "poll.create", Payload: map[string]any{"poll_id": "p1", "question": "Which?",
			"options": []any{map[string]any{"id": "a", "label": "A"}, map[string]any{"id": "b", "label": "B"}}}}))
	if poll.Status != discourse.StatusSent {
		t.Fatalf("poll %+v", poll)
	}
	// The watcher's item, completed and bounded by the connector.
	must[*discourse.RoomStateResult](t, "agent_protocols_room_state")(bob.RoomState(ctx, bob.sess, discourse.RoomStateInput{RoomID: roomID, Refresh: true}))
	in := must[*connector.InboxNextResult](t, "agent_protocols_inbox_next")(bob.InboxNext(ctx, bob.sess, connector.InboxNextInput{Kinds: []string{"room.event.custom"}}))
	if len(in.Items) != 1 {
		t.Fatalf("custom items %+v", in.Items)
	}
	it := in.Items[0]
	summary, _ := it.Message["summary"].(string)
	if *it.Seq != poll.Item.Seq || *it.EventID != poll.Item.EventID || *it.Actor != alice.id || it.RoomID != roomID || it.Plugin != "pollwatch" ||
		it.Kind != "room.event.custom" || it.Message["type"] != "poll.create" || it.Reason != "poll_open" || !it.RequiresResponse ||
		len([]rune(summary)) != 160 || it.Priority != "high" || it.CreatedAt != poll.Item.ReceivedAt {
		t.Fatalf("custom item %+v", it)
	}
	if len(it.SuggestedTools) != 2 || it.SuggestedTools[0] != "agent_protocols_room_submit_event" || it.SuggestedTools[1] != "polls_tally" {
		t.Fatalf("suggested tools not filtered: %v", it.SuggestedTools)
	}
	// The validator refuses before signing, naming itself and the path.
	last, _ := bob.Store.Read().LastNonce(ctx)
	_, err := bob.RoomSubmitEvent(ctx, bob.sess, discourse.RoomSubmitEventInput{RoomID: roomID, Type: "poll.vote",
		Payload: map[string]any{"poll_event_id": poll.Item.EventID, "option_ids": []any{"a", "bad"}}})
	var ce *engine.Error
	if code(err) != engine.CodeInvalidEvent || !asErr(err, &ce) {
		t.Fatalf("validator refusal: %v", err)
	}
	fe := ce.Data["errors"].([]any)[0].(map[string]any)
	if fe["plugin"] != "polls" || fe["path"] != "/payload/option_ids/1" || fe["message"] != "no such option" {
		t.Fatalf("field error %+v", fe)
	}
	if now, _ := bob.Store.Read().LastNonce(ctx); now != last {
		t.Fatal("a refused write used a nonce")
	}
	ok := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(bob.RoomSubmitEvent(ctx, bob.sess, discourse.RoomSubmitEventInput{RoomID: roomID, Type: "poll.vote",
		Payload: map[string]any{"poll_event_id": poll.Item.EventID, "option_ids": []any{"a"}}}))
	if ok.Status != discourse.StatusSent {
		t.Fatalf("vote %+v", ok)
	}
	// Tool provider routing with the room context.
	tools := bob.PluginTools()
	if len(tools) != 1 || tools[0].MCPName != "polls_tally" {
		t.Fatalf("tools %+v", tools)
	}
	res, err := bob.CallTool(ctx, bob.sess, "polls_tally", json.RawMessage(`{"room_id":"`+roomID+`"}`))
	if err != nil || res.Text != "tally in "+roomID+"\nas speaker" || res.Structured["votes"] != 0 {
		t.Fatalf("tool call %+v %v", res, err)
	}
	// A provider that is not a plugin.Proposer proposes nothing.
	if len(res.ProposalResults) != 1 || res.ProposalResults[0].Status != discourse.StatusRefused ||
		res.ProposalResults[0].Error.Code != string(plugin.CodeNotGranted) {
		t.Fatalf("proposal of a provider without grants: %+v", res.ProposalResults)
	}
	if _, err := bob.CallTool(ctx, bob.sess, "nope_tool", nil); code(err) != engine.CodeNotFound {
		t.Fatalf("unknown tool: %v", err)
	}
	// A failing validator closes writes of its type only.
	carol := newAgent(t, h, 0xC0, "", func(o *connector.Options) { o.Validators = []plugin.Validator{fakeValidator{fail: true}} })
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(carol.RoomJoin(ctx, carol.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	if _, err := carol.RoomSubmitEvent(ctx, carol.sess, discourse.RoomSubmitEventInput{RoomID: roomID, Type: "poll.vote",
		Payload: map[string]any{"poll_event_id": poll.Item.EventID, "option_ids": []any{"a"}}}); code(err) != engine.CodeInvalidEvent {
		t.Fatalf("failing validator: %v", err)
	}
	must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(carol.RoomSendMessage(ctx, carol.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "still works", OnHeadMismatch: "send_anyway"}))
	id := must[*connector.IdentityCurrentResult](t, "agent_protocols_identity_current")(carol.IdentityCurrent(ctx, carol.sess))
	if len(id.Plugins) != 1 || id.Plugins[0].LastError == "" {
		t.Fatalf("plugin health %+v", id.Plugins)
	}
}

// scopedValidator asks for the records of the poll type and those the
// proposal names, and keeps the room context it was given.
type scopedValidator struct {
	mu  sync.Mutex
	got []plugin.RoomContext
}

func (*scopedValidator) Name() string             { return "scoped" }
func (*scopedValidator) ValidatedTypes() []string { return []string{"poll.vote"} }
func (*scopedValidator) ValidateScope(p plugin.Proposal) plugin.RecordScope {
	return plugin.RecordScope{Types: []string{"poll.create"}, EventIDs: plugin.ProposalEventIDs(plugin.Proposal{Payload: p.Payload})}
}

// ToolScope completes plugin.Scoper; a validator has no tools.
func (*scopedValidator) ToolScope(string) plugin.RecordScope { return plugin.RecordScope{} }

func (v *scopedValidator) ValidateEvent(_ context.Context, _ plugin.Proposal, rc *plugin.RoomContext) ([]plugin.FieldError, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.got = append(v.got, *rc)
	return nil, nil
}

func (v *scopedValidator) last() plugin.RoomContext {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.got[len(v.got)-1]
}

// A validator's room context carries the records of its scope from the
// verified store: the newest of its types and the referenced ones, in seq
// order, and records_truncated unless the store holds the room from seq 1.
func TestValidatorRecordScope(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	av, bv := &scopedValidator{}, &scopedValidator{}
	alice := newAgent(t, h, 0xA1, "", func(o *connector.Options) { o.Validators = []plugin.Validator{av} })
	// bob keeps only the newest 10 records of a room.
	bob := newAgent(t, h, 0xB0, "", func(o *connector.Options) {
		o.Config.State.RecordsPerRoom = 10
		o.Validators = []plugin.Validator{bv}
	})
	roomID := createRoom(t, alice, h, "public", func(in *discourse.RoomCreateInput) {
		in.Types = []map[string]any{{"use": "adp:deliberation/1.0"}}
	})
	pollOf := func(id string) string {
		res := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{
			RoomID: roomID, Type: "poll.create", OnHeadMismatch: "send_anyway",
			Payload: map[string]any{"poll_id": id, "question": id + "?", "options": []any{map[string]any{"id": "a", "label": "A"}}}}))
		return res.Item.EventID
	}
	old := pollOf("old")
	for i := range 12 {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess,
			discourse.RoomSendMessageInput{RoomID: roomID, Content: fmt.Sprint("filler ", i), OnHeadMismatch: "send_anyway"}))
	}
	recent := pollOf("recent")
	vote := func(a *agent, poll string) {
		t.Helper()
		must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(a.RoomSubmitEvent(ctx, a.sess, discourse.RoomSubmitEventInput{
			RoomID: roomID, Type: "poll.vote", OnHeadMismatch: "send_anyway", Payload: map[string]any{"poll_event_id": poll, "option_ids": []any{"a"}}}))
	}
	ids := func(rc plugin.RoomContext) []string {
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
	if rc := av.last(); rc.RecordsTruncated || !slices.Equal(ids(rc), []string{old, recent}) || rc.RoomID != roomID || rc.Self.AgentID != alice.id {
		t.Fatalf("alice's context: truncated %v, records %v", rc.RecordsTruncated, ids(rc))
	}
	// bob joins and holds only the newest records: the old poll is gone,
	// the context says it is partial.
	must[*discourse.RoomJoinResult](t, "agent_protocols_room_join")(bob.RoomJoin(ctx, bob.sess, discourse.RoomJoinInput{Host: h.Origin(), RoomID: roomID, Role: "speaker"}))
	vote(bob, recent)
	if rc := bv.last(); !rc.RecordsTruncated || !slices.Equal(ids(rc), []string{recent}) {
		t.Fatalf("bob's context: truncated %v, records %v", rc.RecordsTruncated, ids(rc))
	}
	vote(bob, old)
	if rc := bv.last(); !rc.RecordsTruncated || !slices.Equal(ids(rc), []string{recent}) {
		t.Fatalf("bob's context of a vote on a poll he does not hold: %v", ids(rc))
	}
}

// voteTool is a Go tool provider allowed (plugin.Proposer) to propose
// poll.vote events only. Its one call proposes a vote, a poll it may not
// propose and a vote whose payload is not an object.
type voteTool struct{}

func (voteTool) Name() string { return "voter" }
func (voteTool) Tools() []plugin.ToolDef {
	return []plugin.ToolDef{{Plugin: "voter", Name: "vote", MCPName: "voter_vote", Description: "Votes.", InputSchema: map[string]any{"type": "object"}}}
}
func (voteTool) CanPropose(tool, eventType string) bool {
	return tool == "vote" && eventType == "poll.vote"
}
func (voteTool) CallTool(_ context.Context, _ string, args json.RawMessage, _ *plugin.ToolContext) (*plugin.ToolResult, error) {
	var in struct {
		Poll string `json:"poll"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: "voting"}}, Proposals: []plugin.Proposal{
		{Type: "poll.vote", Payload: map[string]any{"poll_event_id": in.Poll, "option_ids": []any{"a"}}},
		{Type: "poll.create", Payload: map[string]any{"poll_id": "p2", "question": "?", "options": []any{map[string]any{"id": "a", "label": "A"}}}},
		{Type: "poll.vote", Payload: "not an object"},
	}}, nil
}

// A Go provider proposes events through plugin.Proposer like a plugin
// holding propose grants: the granted proposal is signed and sent, the
// others are refused with a code and nothing is signed for them.
func TestGoProviderProposals(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "", func(o *connector.Options) { o.Tools = []plugin.ToolProvider{voteTool{}} })
	roomID := createRoom(t, alice, h, "public", func(in *discourse.RoomCreateInput) {
		in.Types = []map[string]any{{"use": "adp:deliberation/1.0"}}
	})
	if tools := alice.PluginTools(); len(tools) != 1 || tools[0].ReadOnly || tools[0].Plugin != "voter" {
		t.Fatalf("tools %+v", tools)
	}
	poll := must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "poll.create", Payload: map[string]any{"poll_id": "p1", "question": "Which?",
			"options": []any{map[string]any{"id": "a", "label": "A"}}}}))
	res, err := alice.CallTool(ctx, alice.sess, "voter_vote", json.RawMessage(`{"room_id":"`+roomID+`","poll":"`+poll.Item.EventID+`"}`))
	if err != nil || res.Text != "voting" || len(res.ProposalResults) != 3 {
		t.Fatalf("tool call %+v %v", res, err)
	}
	sent, notGranted, notObject := res.ProposalResults[0], res.ProposalResults[1], res.ProposalResults[2]
	if sent.Status != discourse.StatusSent || sent.Result == nil || sent.Result.Item == nil || sent.Result.Item.Type != "poll.vote" ||
		sent.Result.Item.Actor != alice.id {
		t.Fatalf("granted proposal %+v", sent)
	}
	if notGranted.Status != discourse.StatusRefused || notGranted.Index != 1 || notGranted.Error.Code != string(plugin.CodeNotGranted) {
		t.Fatalf("proposal without a grant %+v", notGranted)
	}
	if notObject.Status != discourse.StatusRefused || notObject.Error.Code != engine.CodeInvalidInput ||
		!strings.Contains(notObject.Error.Message, "payload") {
		t.Fatalf("proposal with a non-object payload %+v", notObject)
	}
	// The host holds the poll and the one vote, nothing of the refused.
	tl := must[*discourse.RoomTimelineResult](t, "agent_protocols_room_timeline")(alice.RoomTimeline(ctx, alice.sess,
		discourse.RoomTimelineInput{RoomID: roomID, Types: []string{"poll.create", "poll.vote"}, Refresh: true}))
	var types []string
	for _, it := range tl.Items {
		types = append(types, it.Type)
	}
	if !slices.Equal(types, []string{"poll.create", "poll.vote"}) {
		t.Fatalf("records of the host: %v", types)
	}
}
