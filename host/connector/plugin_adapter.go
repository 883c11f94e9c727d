package connector

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"apconnect/host/plugin"
)

// Adapters from host/plugin (the wasm runtime) to the connector's extension
// points. Options.Plugins wraps every plugin of a registry with them; a
// *plugin.Plugin (or a *plugin.Registry) can also be wrapped by hand and
// passed in Options.Validators, Watchers and Tools. The adapters pass the
// plugin's record scope (plugin.Scoper) and propose grants on.

// PluginValidator adapts a plugin validator.
func PluginValidator(v plugin.Validator) Validator { return pluginValidator{v} }

// PluginWatcher adapts a plugin watcher.
func PluginWatcher(w plugin.Watcher) Watcher { return pluginWatcher{w} }

// PluginTools adapts a plugin tool provider.
func PluginTools(p plugin.ToolProvider) ToolProvider { return pluginTools{p} }

type pluginValidator struct{ v plugin.Validator }

var _ ValidateScoper = pluginValidator{}

func (a pluginValidator) Name() string             { return a.v.Name() }
func (a pluginValidator) ValidatedTypes() []string { return a.v.ValidatedTypes() }
func (a pluginValidator) ValidateEvent(ctx context.Context, p Proposal, rc *RoomContext) ([]FieldError, error) {
	fes, err := a.v.ValidateEvent(ctx, toPluginProposal(p), toPluginRoom(rc))
	if err != nil {
		return nil, err
	}
	out := make([]FieldError, len(fes))
	for i, fe := range fes {
		out[i] = FieldError{Plugin: a.v.Name(), Path: fe.Path, Message: fe.Message}
	}
	return out, nil
}

// ValidateScope is the plugin's record scope for p (none when the plugin
// does not say).
func (a pluginValidator) ValidateScope(p Proposal) plugin.RecordScope {
	if s, ok := a.v.(plugin.Scoper); ok {
		return s.ValidateScope(toPluginProposal(p))
	}
	return plugin.RecordScope{}
}

func toPluginProposal(p Proposal) plugin.Proposal {
	return plugin.Proposal{Type: p.Type, Actor: p.Actor, Payload: p.Payload, Mentions: p.Mentions, References: p.References}
}

type pluginWatcher struct{ w plugin.Watcher }

func (a pluginWatcher) Name() string           { return a.w.Name() }
func (a pluginWatcher) WatchedTypes() []string { return a.w.WatchedTypes() }
func (a pluginWatcher) Watch(ctx context.Context, recs []WatchRecord, rc *RoomContext) ([]WatchItem, error) {
	items, err := a.w.Watch(ctx, toPluginRecords(recs), toPluginRoom(rc))
	if err != nil {
		return nil, err
	}
	out := make([]WatchItem, 0, len(items))
	for _, it := range items {
		out = append(out, WatchItem{Seq: it.Seq, Summary: it.Summary, Priority: it.Priority, RequiresResponse: it.RequiresResponse,
			Reason: it.Reason, SuggestedTools: it.SuggestedTools})
	}
	return out, nil
}

type pluginTools struct{ p plugin.ToolProvider }

var (
	_ ToolScoper = pluginTools{}
	_ Proposer   = pluginTools{}
)

func (a pluginTools) Name() string { return a.p.Name() }
func (a pluginTools) Tools() []ToolDef {
	var out []ToolDef
	for _, t := range a.p.Tools() {
		out = append(out, ToolDef{Provider: t.Plugin, Name: t.Name, MCPName: t.MCPName, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, ReadOnly: t.ReadOnly})
	}
	return out
}

func (a pluginTools) CallTool(ctx context.Context, name string, args json.RawMessage, tc *ToolContext) (*ToolResult, error) {
	ptc := &plugin.ToolContext{}
	if tc != nil {
		ptc.Self = &plugin.Self{AgentID: tc.Self}
		if tc.Room != nil {
			ptc.Self.Role = tc.Room.SelfRole
			ptc.Room = toPluginRoom(tc.Room)
		}
	}
	res, err := a.p.CallTool(ctx, name, args, ptc)
	if err != nil {
		return nil, err
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.Text)
	}
	out := &ToolResult{Text: strings.Join(text, "\n"), Structured: res.Structured, IsError: res.IsError}
	for _, p := range res.Proposals {
		payload, _ := p.Payload.(map[string]any)
		out.Proposals = append(out.Proposals, Proposal{Type: p.Type, Actor: p.Actor, Payload: payload, Mentions: p.Mentions, References: p.References})
	}
	return out, nil
}

// ToolScope is the plugin's record scope for a call of tool name.
func (a pluginTools) ToolScope(name string) plugin.RecordScope {
	if s, ok := a.p.(plugin.Scoper); ok {
		return s.ToolScope(name)
	}
	return plugin.RecordScope{}
}

// CanPropose reports whether the plugin both described eventType among
// the types it proposes and holds propose:<eventType>. Only a
// *plugin.Plugin can say; other providers never propose.
func (a pluginTools) CanPropose(_, eventType string) bool {
	p, ok := a.p.(*plugin.Plugin)
	if !ok {
		return false
	}
	return p.Grants().CanPropose(eventType) && slices.Contains(p.Description().Proposes, eventType)
}

// toPluginRoom converts the connector's room view for a plugin.
func toPluginRoom(rc *RoomContext) *plugin.RoomContext {
	if rc == nil {
		return nil
	}
	out := &plugin.RoomContext{RoomID: rc.RoomID, Host: rc.Host, Status: rc.Status, Creator: rc.Creator,
		Head: &plugin.Head{Seq: rc.HeadSeq, Hash: rc.HeadHash}, Self: &plugin.Self{AgentID: rc.Self, Role: rc.SelfRole},
		Records: toPluginRecords(rc.Records), RecordsTruncated: rc.RecordsTruncated}
	for _, m := range rc.Members {
		out.Members = append(out.Members, plugin.Member{AgentID: m.AgentID, Role: m.Role, Perspective: m.Perspective})
	}
	for _, t := range rc.Types {
		out.Types = append(out.Types, plugin.TypeInfo{Type: t.Type, Kind: t.Kind, Status: t.Status})
	}
	return out
}

func toPluginRecords(recs []WatchRecord) []plugin.Record {
	if len(recs) == 0 {
		return nil
	}
	out := make([]plugin.Record, len(recs))
	for i, r := range recs {
		out[i] = plugin.Record{Seq: r.Seq, EventID: r.EventID, Type: r.Type, Actor: r.Actor, CreatedAt: r.CreatedAt,
			AcceptedAt: r.AcceptedAt, Mentions: r.Mentions, Payload: r.Payload, Redacted: r.Redacted}
	}
	return out
}
