package discourse

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sort"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/plugin"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/text"
	"apconnect/host/toolcatalog"
)

// The plugin extension points are host/plugin's: plugin.Validator,
// plugin.Watcher and plugin.ToolProvider, with plugin.Scoper (the records a
// call's room context must carry) and plugin.Proposer (propose grants). A
// *plugin.Plugin implements them all, so Options.Plugins wires a registry's
// plugins in directly; Go extensions (Options.Validators, Watchers, Tools)
// implement the same interfaces. Everything an extension returns is
// untrusted: the connector bounds and completes it before use, and no
// extension ever sees a key, a nonce or a request token.
//
// Where the connector's use differs from the plain types:
//   - the room of a plugin.Proposal is the RoomContext's (RoomID, Host);
//   - the plugin of a refusal is the validator's Name, whatever
//     FieldError.Plugin says;
//   - of a watcher's plugin.InboxItem only Seq, Summary, Priority,
//     RequiresResponse, Reason and SuggestedTools are used (see watch);
//   - a tool call returns a PluginToolResult, the agent's view of the
//     plugin.ToolResult with what became of its proposals.

// PluginToolResult is what a call of a provider's tool returns to the
// agent: the tool's text (its content items joined by newlines), structured
// JSON and error flag, and what became of each event it proposed. The
// connector submits the proposals of a provider allowed to propose their
// types (plugin.Proposer) through the normal write path; others are
// refused there.
type PluginToolResult struct {
	Text            string           `json:"text"`
	Structured      map[string]any   `json:"structured,omitempty"`
	IsError         bool             `json:"is_error,omitempty"`
	ProposalResults []ProposalResult `json:"proposal_results,omitempty"`
}

// ProposalResult is what became of one proposal of a tool result: Status
// is the write's status (sent, held, rejected) when it was submitted, or
// "refused" with Error when it was not (not granted, refused by a local
// check or a validator, or by the host). Nothing is ever signed for a
// refused proposal unless the host refused it.
type ProposalResult struct {
	Index  int          `json:"index"`
	Type   string       `json:"type"`
	Status string       `json:"status"`
	Result *WriteResult `json:"result,omitempty"`
	Error  *ErrorView   `json:"error,omitempty"`
}

// ErrorView is an Error as data: its code, message and data.
type ErrorView struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// StatusRefused is the ProposalResult status of a proposal that was not
// submitted.
const StatusRefused = "refused"

// ProposalResultsMember is the member of a tool's structured result that
// carries the ProposalResults of a proposing tool (listed in its output
// schema by Tools).
const ProposalResultsMember = "proposal_results"

// PluginHealth is the state of one plugin or extension, as
// identity_current reports it.
type PluginHealth struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	// State is "loaded", "failed" (refused at load; LastError says why)
	// or "closed".
	State     string   `json:"state"`
	Loaded    bool     `json:"loaded"`
	Grants    []string `json:"grants"`
	Tools     []string `json:"tools"`
	Validates []string `json:"validates,omitempty"`
	Watches   []string `json:"watches,omitempty"`
	Packs     []string `json:"packs,omitempty"`
	Calls     uint64   `json:"calls"`
	// Failures counts failed calls (and a refused load); each failure of
	// a validator refused writes of its types, each failure of a watcher
	// skipped a sync page.
	Failures            uint64            `json:"failures"`
	ConsecutiveFailures uint64            `json:"consecutive_failures,omitempty"`
	FailuresByCode      map[string]uint64 `json:"failures_by_code,omitempty"`
	LastError           string            `json:"last_error,omitempty"`
	LastErrorCode       string            `json:"last_error_code,omitempty"`
	LastErrorAt         int64             `json:"last_error_at,omitempty"`
}

// toolEntry is one routable tool.
type toolEntry struct {
	def      plugin.ToolDef
	provider plugin.ToolProvider
}

// packSource resolves plugin type packs by ID ("<name>/<version>").
type packSource interface {
	Pack(ctx context.Context, id string) (*plugin.Pack, error)
}

// initPlugins wires the extensions of opts: the Go extensions of
// Options.Validators, Watchers and Tools, then every loaded plugin of
// Options.Plugins as the validator, watcher and tool provider it describes
// itself as (and its packs).
func (c *Module) initPlugins(opts Options) {
	validators := slices.Clone(opts.Validators)
	c.watchers = slices.Clone(opts.Watchers)
	providers := slices.Clone(opts.Tools)
	if reg := opts.Plugins; reg != nil {
		for _, p := range reg.Plugins() {
			if len(p.ValidatedTypes()) > 0 {
				validators = append(validators, p)
			}
			if len(p.WatchedTypes()) > 0 {
				c.watchers = append(c.watchers, p)
			}
			if len(p.Tools()) > 0 {
				providers = append(providers, p)
			}
		}
		c.packs = reg
	}
	for _, v := range validators {
		for _, typ := range v.ValidatedTypes() {
			c.validators[typ] = append(c.validators[typ], v)
		}
	}
	c.tools = providers
	c.toolIndex = map[string]*toolEntry{}
	for _, p := range providers {
		for _, t := range p.Tools() {
			if c.toolIndex[t.MCPName] != nil || toolcatalog.Has(t.MCPName) {
				c.Log.Warn("plugin tool skipped: its name is taken", "tool", t.MCPName, "provider", p.Name())
				continue
			}
			if !t.ReadOnly {
				t.OutputSchema = withProposalResults(t.OutputSchema)
			}
			c.toolIndex[t.MCPName] = &toolEntry{def: t, provider: p}
			c.toolList = append(c.toolList, t)
		}
	}
	sort.Slice(c.toolList, func(i, j int) bool { return c.toolList[i].MCPName < c.toolList[j].MCPName })
}

// withProposalResults returns a proposing tool's output schema with the
// proposal_results member the connector adds (nil stays nil: without an
// output schema the structured result is not described).
func withProposalResults(schema map[string]any) map[string]any {
	if schema == nil {
		return nil
	}
	out := maps.Clone(schema)
	props, _ := out["properties"].(map[string]any)
	props = maps.Clone(props)
	if props == nil {
		props = map[string]any{}
	}
	props[ProposalResultsMember] = map[string]any{
		"type":        "array",
		"description": "Set by apconnect: what became of each event the tool proposed (sent, held, rejected, or refused with an error).",
		"items":       map[string]any{"type": "object"},
	}
	out["properties"] = props
	return out
}

// PluginTools lists the tools of every provider, sorted by MCP name. A tool
// whose name is taken (by a standard tool or an earlier provider) is left
// out.
func (c *Module) PluginTools() []plugin.ToolDef { return slices.Clone(c.toolList) }

// CallTool routes a provider tool call by its MCP name. When the arguments
// name a room (room_id, and host when needed), the room is resolved (and
// opened when it is not known locally) and the tool gets its context: the
// verified state, the members and the records of the provider's scope.
// Proposals of a provider allowed to propose are submitted through the
// normal write path for that room (local checks, validators, holds and
// rejections included), under session sess, and reported in
// ProposalResults.
func (c *Module) CallTool(ctx context.Context, sess SessionID, mcpName string, args json.RawMessage) (*PluginToolResult, error) {
	te := c.toolIndex[mcpName]
	if te == nil {
		return nil, engine.Errorf(engine.CodeNotFound, "no tool %s", mcpName)
	}
	tc := &plugin.ToolContext{Self: &plugin.Self{AgentID: c.Self}}
	var probe struct {
		RoomID string `json:"room_id"`
		Host   string `json:"host"`
	}
	var rr *roomRef
	if json.Unmarshal(args, &probe) == nil && probe.RoomID != "" {
		var err error
		if rr, err = c.resolve(ctx, probe.Host, probe.RoomID, true); err != nil {
			return nil, err
		}
		if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
			return nil, err
		}
		st, err := c.loadStateRow(ctx, rr.row)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		if st.Room != nil {
			rc := c.roomContext(rr.h, st.Room)
			if s, ok := te.provider.(plugin.Scoper); ok {
				if err := c.fillRecords(ctx, rr.row.Key, rc, s.ToolScope(te.def.Name)); err != nil {
					return nil, engine.Wrap(err)
				}
			}
			tc.Self.Role = rc.Self.Role
			tc.Room = rc
		}
	}
	res, err := te.provider.CallTool(ctx, te.def.Name, args, tc)
	if err != nil {
		return nil, c.toolFailure(te, err)
	}
	if res == nil {
		res = &plugin.ToolResult{}
	}
	texts := make([]string, len(res.Content))
	for i, ct := range res.Content {
		texts[i] = ct.Text
	}
	out := &PluginToolResult{Text: strings.Join(texts, "\n"), Structured: res.Structured, IsError: res.IsError}
	if len(res.Proposals) > 0 {
		out.ProposalResults = c.submitProposals(ctx, sess, te, rr, res)
	}
	return out, nil
}

// toolFailure maps a provider's failure to the agent's error: bad
// arguments are invalid_input, anything else plugin_failed naming the
// provider and its code.
func (c *Module) toolFailure(te *toolEntry, err error) *engine.Error {
	code := plugin.CodeOf(err)
	switch code {
	case plugin.CodeInvalidArguments:
		return &engine.Error{Code: engine.CodeInvalidInput, Message: err.Error(), Err: err}
	case plugin.CodeCanceled:
		return &engine.Error{Code: CodePluginFailed, Message: "the call was canceled", Err: err}
	}
	c.pluginFailed(te.provider.Name(), err)
	data := map[string]any{"plugin": te.provider.Name()}
	if code != "" {
		data["plugin_code"] = string(code)
	}
	return &engine.Error{Code: CodePluginFailed, Message: "plugin tool " + te.def.MCPName + " failed: " + err.Error(), Data: data, Err: err}
}

// submitProposals submits a tool result's proposals, in order, through the
// write path of the room the tool's arguments named.
func (c *Module) submitProposals(ctx context.Context, sess SessionID, te *toolEntry, rr *roomRef, res *plugin.ToolResult) []ProposalResult {
	out := make([]ProposalResult, 0, len(res.Proposals))
	pr, _ := te.provider.(plugin.Proposer)
	for i, p := range res.Proposals {
		r := ProposalResult{Index: i, Type: p.Type}
		refuse := func(code, format string, args ...any) {
			r.Status = StatusRefused
			r.Error = &ErrorView{Code: code, Message: engine.Errorf(code, format, args...).Message}
		}
		switch {
		case res.IsError:
			refuse(engine.CodeInvalidInput, "the tool reported an error; its proposals are not submitted")
		case pr == nil || !pr.CanPropose(te.def.Name, p.Type):
			refuse(string(plugin.CodeNotGranted), "%s may not propose %s events (the operator grants propose:<type>)", te.provider.Name(), p.Type)
		case rr == nil:
			refuse(engine.CodeInvalidInput, "a tool that proposes events must name its room with room_id (and host)")
		case p.Actor != "" && p.Actor != c.Self:
			refuse(engine.CodeInvalidInput, "the proposal names actor %s; apconnect signs only as %s", p.Actor, c.Self)
		default:
			wr, err := c.submitProposal(ctx, sess, rr, p)
			if err != nil {
				e := engine.AsError(err)
				r.Status, r.Error = StatusRefused, &ErrorView{Code: e.Code, Message: e.Message, Data: e.Data}
			} else {
				r.Status, r.Result = wr.Status, wr
			}
		}
		out = append(out, r)
	}
	return out
}

// submitProposal writes one proposal as the agent would with
// agent_protocols_room_submit_event (default base, on_head_mismatch hold).
// The payload must be a JSON object (a plugin's always is: its output
// schema says so); nil means {}.
func (c *Module) submitProposal(ctx context.Context, sess SessionID, rr *roomRef, p plugin.Proposal) (*WriteResult, error) {
	if !adp.ValidTypeName(p.Type) {
		return nil, engine.Invalid("type %q is not an event type name", p.Type)
	}
	payload := p.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	pv, err := engine.ObjectValue(payload)
	if err != nil {
		return nil, engine.Invalid("payload: %v", err)
	}
	if p.Type == adp.TypeTypeDefine {
		if pv, err = c.expandTypeDefine(ctx, rr.h, pv); err != nil {
			return nil, err
		}
	}
	draft := map[string]any{"type": p.Type, "payload": pv, "mentions": strs(p.Mentions), "references": strs(p.References)}
	return c.write(ctx, &writeRequest{sess: sess, rr: rr, typ: p.Type, payload: pv, mentions: p.Mentions,
		references: p.References, policy: PolicyHold, draftKind: "event", draftInput: draft})
}

func (c *Module) pluginFailed(name string, err error) {
	c.pluginMu.Lock()
	c.pluginErrs[name] = err.Error()
	c.pluginMu.Unlock()
	c.Log.Warn("plugin failed", "plugin", name, "err", err)
}

// PluginHealth lists every plugin with its state: the loaded plugins of
// Options.Plugins, those refused at load (Options.PluginFailures), then the
// Go extensions with their latest failure.
func (c *Module) PluginHealth() []PluginHealth {
	c.pluginMu.Lock()
	errs := maps.Clone(c.pluginErrs)
	c.pluginMu.Unlock()
	var out []PluginHealth
	seen := map[string]bool{}
	if reg := c.opts.Plugins; reg != nil {
		for _, p := range reg.Plugins() {
			h := healthView(p.Health(0))
			d := p.Description()
			h.Validates, h.Watches = d.Validates, d.Watches
			for _, t := range d.Tools {
				h.Tools = append(h.Tools, t.MCPName)
			}
			for _, pk := range d.Packs {
				h.Packs = append(h.Packs, pk.ID())
			}
			if h.LastError == "" && errs[h.Name] != "" {
				h.LastError = errs[h.Name]
			}
			seen[h.Name] = true
			out = append(out, h)
		}
	}
	for _, f := range c.opts.PluginFailures {
		h := healthView(f)
		h.State = "failed"
		seen[h.Name] = true
		out = append(out, h)
	}
	names := map[string]bool{}
	for _, vs := range c.validators {
		for _, v := range vs {
			names[v.Name()] = true
		}
	}
	for _, w := range c.watchers {
		names[w.Name()] = true
	}
	for _, t := range c.tools {
		names[t.Name()] = true
	}
	var extra []PluginHealth
	for n := range names {
		if !seen[n] {
			extra = append(extra, PluginHealth{Name: n, State: "loaded", Loaded: true, Grants: []string{}, Tools: []string{}, LastError: errs[n]})
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	return append(out, extra...)
}

// healthView is the identity_current view of a plugin's health.
func healthView(h plugin.Health) PluginHealth {
	v := PluginHealth{Name: h.Name, Version: h.Version, SHA256: h.Digest, State: "loaded", Loaded: h.Loaded,
		Grants: h.Grants, Tools: []string{}, Calls: h.Calls, Failures: h.Failures, ConsecutiveFailures: h.ConsecutiveFailures,
		FailuresByCode: h.FailuresByCode, LastError: text.Truncate(h.LastError, 1000), LastErrorCode: string(h.LastErrorCode)}
	if !h.Loaded {
		v.State = "closed"
	}
	if v.Grants == nil {
		v.Grants = []string{}
	}
	if !h.LastErrorAt.IsZero() {
		v.LastErrorAt = h.LastErrorAt.UnixMilli()
	}
	return v
}

// roomContext builds the plugin view of a verified room (no records).
func (c *Module) roomContext(h *hostState, r *adp.Room) *plugin.RoomContext {
	rc := &plugin.RoomContext{RoomID: r.ID, Host: h.origin, Status: string(r.StatusAt(c.NowMS())), Creator: r.Creator,
		Head: &plugin.Head{Seq: r.Head.Seq, Hash: r.Head.Hash}, Self: &plugin.Self{AgentID: c.Self}}
	if m, ok := r.Members[c.Self]; ok && m.Active {
		rc.Self.Role = string(m.Role)
	}
	for _, m := range r.ActiveMembers() {
		rc.Members = append(rc.Members, plugin.Member{AgentID: m.AgentID, Role: string(m.Role), Perspective: m.Perspective})
	}
	for _, d := range r.Types {
		rc.Types = append(rc.Types, plugin.TypeInfo{Type: d.Type, Kind: string(d.Kind), Status: string(d.Status)})
	}
	return rc
}

// roomCopy returns a copy of rc for one extension's call, with its own
// head and self, so that what one extension does to its context does not
// reach the next one's.
func roomCopy(rc *plugin.RoomContext) *plugin.RoomContext {
	out := *rc
	if rc.Head != nil {
		head := *rc.Head
		out.Head = &head
	}
	if rc.Self != nil {
		self := *rc.Self
		out.Self = &self
	}
	return &out
}

// validate runs the validators of an event type, each with a room context
// of room r holding the records of its scope. It returns nil when every
// validator accepts. A validator that fails (or whose records cannot be
// read) refuses the write: its types fail closed, nothing else is affected.
// Refusals name the validator by its Name (FieldError.Plugin is not
// trusted).
func (c *Module) validate(ctx context.Context, h *hostState, key int64, r *adp.Room, p plugin.Proposal) *engine.Error {
	vs := c.validators[p.Type]
	if len(vs) == 0 {
		return nil
	}
	base := c.roomContext(h, r)
	var errs []any
	for _, v := range vs {
		rc := roomCopy(base)
		if s, ok := v.(plugin.Scoper); ok {
			if err := c.fillRecords(ctx, key, rc, s.ValidateScope(p)); err != nil {
				c.pluginFailed(v.Name(), err)
				return failedClosed(v.Name(), p.Type, err)
			}
		}
		fes, err := v.ValidateEvent(ctx, p, rc)
		if err != nil {
			if errors.Is(err, context.Canceled) || plugin.CodeOf(err) == plugin.CodeCanceled {
				return &engine.Error{Code: CodePluginFailed, Message: "the call was canceled while " + v.Name() + " validated it", Err: err}
			}
			c.pluginFailed(v.Name(), err)
			return failedClosed(v.Name(), p.Type, err)
		}
		for _, fe := range fes {
			errs = append(errs, map[string]any{"plugin": v.Name(), "path": fe.Path, "message": text.Truncate(fe.Message, 500)})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &engine.Error{Code: engine.CodeInvalidEvent, Message: "the event was refused by a validator", Data: map[string]any{"errors": errs, "local": true}}
}

// failedClosed is the refusal of a write whose validator failed.
func failedClosed(name, typ string, err error) *engine.Error {
	msg := text.Truncate(err.Error(), 500)
	data := map[string]any{"errors": []any{map[string]any{"plugin": name, "path": "", "message": msg}}, "local": true, "fail_closed": true}
	if code := plugin.CodeOf(err); code != "" {
		data["plugin_code"] = string(code)
	}
	return &engine.Error{Code: engine.CodeInvalidEvent, Message: "validator " + name + " failed (" + msg + "); writes of " + typ +
		" are refused until it works", Data: data, Err: err}
}

// watch runs the watchers over an applied batch and returns their items,
// completed from the records. A watcher's items are untrusted: an item is
// kept only when its Seq names a record of the batch of a type the watcher
// watches, and of it only Summary, Priority, RequiresResponse, Reason and
// SuggestedTools are used, bounded; everything else comes from the record
// and the watcher's Name.
func (c *Module) watch(ctx context.Context, h *hostState, r *adp.Room, applied []room.Applied) []room.InboxItem {
	if len(c.watchers) == 0 || len(applied) == 0 {
		return nil
	}
	bySeq := map[int64]*room.Applied{}
	for i := range applied {
		bySeq[applied[i].Record.Seq] = &applied[i]
	}
	var rc *plugin.RoomContext
	var out []room.InboxItem
	for _, w := range c.watchers {
		watched := map[string]bool{}
		for _, t := range w.WatchedTypes() {
			watched[t] = true
		}
		var recs []plugin.Record
		for _, a := range applied {
			rec := a.Record
			if rec.IsRedacted() || !watched[rec.Type()] {
				continue
			}
			ev := &rec.Envelope.Event
			payload, _ := json.Marshal(ev.Payload)
			recs = append(recs, plugin.Record{Seq: rec.Seq, EventID: rec.EnvelopeHash(), Type: ev.Type, Actor: ev.Actor,
				CreatedAt: ev.CreatedAt, AcceptedAt: rec.AcceptedAt, Mentions: adp.MentionsOf(ev), Payload: payload})
		}
		if len(recs) == 0 {
			continue
		}
		if rc == nil {
			rc = c.roomContext(h, r)
		}
		items, err := w.Watch(ctx, recs, roomCopy(rc))
		if err != nil {
			c.pluginFailed(w.Name(), err)
			continue
		}
		for _, wi := range items {
			a, ok := bySeq[wi.Seq]
			if !ok || !watched[a.Record.Type()] || a.Record.IsRedacted() {
				continue
			}
			prio := wi.Priority
			if prio != room.PriorityHigh && prio != room.PriorityLow {
				prio = room.PriorityNormal
			}
			var tools []string
			for _, t := range wi.SuggestedTools {
				if c.toolExists(t) && !slices.Contains(tools, t) {
					tools = append(tools, t)
				}
			}
			reason := text.Truncate(strings.TrimSpace(wi.Reason), 64)
			if reason == "" {
				reason = "watched_event"
			}
			// One custom item per (watcher, record): the event id carries
			// the watcher name so two watchers do not collide.
			it := room.NewInboxItem(h.origin, a.Record.RoomID, room.KindEventCustom, prio, a.Record.Seq,
				a.Record.EnvelopeHash(), a.Record.Actor(), a.Record.AcceptedAt, reason, wi.Summary, wi.RequiresResponse, tools...)
			it.ID = room.InboxID(h.origin, a.Record.RoomID, room.KindEventCustom, a.Record.Seq, a.Record.EnvelopeHash()+"#"+w.Name())
			it.Plugin = w.Name()
			it.Message["type"] = a.Record.Type()
			out = append(out, it)
		}
	}
	return out
}

// toolExists reports whether a tool name is one of the standard tools or a
// provider's.
func (c *Module) toolExists(name string) bool {
	return toolcatalog.Has(name) || c.toolIndex[name] != nil
}
