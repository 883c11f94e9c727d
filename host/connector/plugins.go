package connector

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"apconnect/host/adp"
	"apconnect/host/room"
)

// The plugin extension points. The core calls them; host/plugin's wasm
// runtime (or any Go code) implements them. Everything a plugin returns is
// untrusted: the connector bounds and completes it before use, and no
// plugin ever sees a key, a nonce or a request token.

// Proposal is an event proposed for signing, as a validator sees it.
type Proposal struct {
	RoomID     string         `json:"room_id"`
	Host       string         `json:"host"`
	Type       string         `json:"type"`
	Actor      string         `json:"actor"`
	Payload    map[string]any `json:"payload"`
	Mentions   []string       `json:"mentions,omitempty"`
	References []string       `json:"references,omitempty"`
}

// FieldError is one reason a validator refuses an event. Path is a JSON
// pointer into the proposal; Plugin is set by the connector.
type FieldError struct {
	Plugin  string `json:"plugin"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// PluginMember is an active member as a plugin sees it.
type PluginMember struct {
	AgentID     string `json:"agent_id"`
	Role        string `json:"role"`
	Perspective string `json:"perspective,omitempty"`
}

// PluginType is one registry entry as a plugin sees it.
type PluginType struct {
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Status string `json:"status,omitempty"`
}

// RoomContext is the read-only view of a verified room a plugin gets.
type RoomContext struct {
	RoomID   string         `json:"room_id"`
	Host     string         `json:"host"`
	Status   string         `json:"status"`
	Creator  string         `json:"creator"`
	HeadSeq  int64          `json:"head_seq"`
	HeadHash string         `json:"head_hash"`
	Self     string         `json:"self"`
	SelfRole string         `json:"self_role,omitempty"`
	Members  []PluginMember `json:"members"`
	Types    []PluginType   `json:"types"`
}

// Validator checks proposed events of the types it claims before they are
// signed (after the connector's own checks). Any FieldError refuses the
// write with invalid_event and data.errors naming the plugin and the path;
// an error refuses writes of that type only (fail closed). Either way
// nothing is signed and no nonce is used.
type Validator interface {
	Name() string
	ValidatedTypes() []string
	ValidateEvent(ctx context.Context, p Proposal, room *RoomContext) ([]FieldError, error)
}

// WatchRecord is a verified record as a watcher sees it: no envelope,
// signature or chain data.
type WatchRecord struct {
	Seq        int64           `json:"seq"`
	EventID    string          `json:"event_id"`
	Type       string          `json:"type"`
	Actor      string          `json:"actor,omitempty"`
	CreatedAt  int64           `json:"created_at,omitempty"`
	AcceptedAt int64           `json:"accepted_at"`
	Mentions   []string        `json:"mentions,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
}

// WatchItem is a watcher's request for the agent's attention about one
// record of the batch (Seq). The connector fills in the room, event id,
// actor and time from that record, caps Summary at 160 characters and keeps
// only SuggestedTools that exist.
type WatchItem struct {
	Seq              int64    `json:"seq"`
	Summary          string   `json:"summary"`
	Priority         string   `json:"priority"`
	RequiresResponse bool     `json:"requires_response"`
	Reason           string   `json:"reason"`
	SuggestedTools   []string `json:"suggested_tools"`
}

// Watcher turns verified records into room.event.custom inbox items. It is
// called once per applied batch with the batch's non-redacted records of
// the types it watches; an error skips it for that batch (reported in
// identity_current).
type Watcher interface {
	Name() string
	WatchedTypes() []string
	Watch(ctx context.Context, records []WatchRecord, room *RoomContext) ([]WatchItem, error)
}

// ToolDef is a tool a provider adds; MCPName is "<provider>_<tool>".
type ToolDef struct {
	Provider     string         `json:"provider"`
	Name         string         `json:"name"`
	MCPName      string         `json:"mcp_name"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"input_schema"`
	OutputSchema map[string]any `json:"output_schema,omitempty"`
	ReadOnly     bool           `json:"read_only"`
}

// ToolContext is what a provider's tool gets besides its arguments.
type ToolContext struct {
	Self string       `json:"self"`
	Room *RoomContext `json:"room,omitempty"`
}

// ToolResult is a provider tool's result: text, optional structured JSON,
// and event proposals. Proposals are returned to the agent as suggestions;
// the connector never signs them on the provider's behalf.
type ToolResult struct {
	Text       string         `json:"text"`
	Structured map[string]any `json:"structured,omitempty"`
	IsError    bool           `json:"is_error,omitempty"`
	Proposals  []Proposal     `json:"proposals,omitempty"`
}

// ToolProvider adds tools to the MCP surface.
type ToolProvider interface {
	Name() string
	Tools() []ToolDef
	CallTool(ctx context.Context, name string, args json.RawMessage, tc *ToolContext) (*ToolResult, error)
}

// PluginHealth reports the latest failure of one extension.
type PluginHealth struct {
	Name      string `json:"name"`
	LastError string `json:"last_error,omitempty"`
}

// Tools lists the tools of every provider.
func (c *Connector) Tools() []ToolDef {
	var out []ToolDef
	for _, p := range c.tools {
		out = append(out, p.Tools()...)
	}
	return out
}

// CallTool routes a provider tool call by its MCP name. roomID (and host),
// when the arguments name a room, add the room's context.
func (c *Connector) CallTool(ctx context.Context, sess SessionID, mcpName string, args json.RawMessage) (*ToolResult, error) {
	for _, p := range c.tools {
		for _, t := range p.Tools() {
			if t.MCPName != mcpName {
				continue
			}
			tc := &ToolContext{Self: c.self}
			var probe struct {
				RoomID string `json:"room_id"`
				Host   string `json:"host"`
			}
			if json.Unmarshal(args, &probe) == nil && probe.RoomID != "" {
				if rr, err := c.resolve(ctx, probe.Host, probe.RoomID, false); err == nil && rr.row != nil {
					if st, err := c.loadState(ctx, rr.h, rr.row.Key); err == nil && st.Room != nil {
						tc.Room = c.roomContext(rr.h, st.Room)
					}
				}
			}
			res, err := p.CallTool(ctx, t.Name, args, tc)
			if err != nil {
				c.pluginFailed(p.Name(), err)
				return nil, &Error{Code: CodeInternal, Message: "plugin tool " + mcpName + " failed: " + err.Error()}
			}
			return res, nil
		}
	}
	return nil, errorf(CodeNotFound, "no tool %s", mcpName)
}

func (c *Connector) pluginFailed(name string, err error) {
	c.pluginMu.Lock()
	c.pluginErrs[name] = err.Error()
	c.pluginMu.Unlock()
	c.log.Warn("plugin failed", "plugin", name, "err", err)
}

// pluginHealth lists every extension with its latest failure.
func (c *Connector) pluginHealth() []PluginHealth {
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
	c.pluginMu.Lock()
	defer c.pluginMu.Unlock()
	var out []PluginHealth
	for n := range names {
		out = append(out, PluginHealth{Name: n, LastError: c.pluginErrs[n]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// roomContext builds the plugin view of a verified room.
func (c *Connector) roomContext(h *hostState, r *adp.Room) *RoomContext {
	rc := &RoomContext{RoomID: r.ID, Host: h.origin, Status: string(r.StatusAt(c.nowMS())), Creator: r.Creator,
		HeadSeq: r.Head.Seq, HeadHash: r.Head.Hash, Self: c.self, Members: []PluginMember{}, Types: []PluginType{}}
	if m, ok := r.Members[c.self]; ok && m.Active {
		rc.SelfRole = string(m.Role)
	}
	for _, m := range r.ActiveMembers() {
		rc.Members = append(rc.Members, PluginMember{AgentID: m.AgentID, Role: string(m.Role), Perspective: m.Perspective})
	}
	for _, d := range r.Types {
		rc.Types = append(rc.Types, PluginType{Type: d.Type, Kind: string(d.Kind), Status: string(d.Status)})
	}
	return rc
}

// validate runs the validators of an event type. It returns nil when every
// validator accepts.
func (c *Connector) validate(ctx context.Context, h *hostState, r *adp.Room, p Proposal) *Error {
	vs := c.validators[p.Type]
	if len(vs) == 0 {
		return nil
	}
	rc := c.roomContext(h, r)
	var errs []any
	for _, v := range vs {
		fes, err := v.ValidateEvent(ctx, p, rc)
		if err != nil {
			c.pluginFailed(v.Name(), err)
			return &Error{Code: CodeInvalidEvent, Message: "validator " + v.Name() + " failed; writes of " + p.Type + " are refused until it works",
				Data: map[string]any{"errors": []any{map[string]any{"plugin": v.Name(), "path": "", "message": err.Error()}}}}
		}
		for _, fe := range fes {
			errs = append(errs, map[string]any{"plugin": v.Name(), "path": fe.Path, "message": room.Truncate(fe.Message, 500)})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalidEvent, Message: "the event was refused by a validator", Data: map[string]any{"errors": errs}}
}

// watch runs the watchers over an applied batch and returns their items,
// completed from the records.
func (c *Connector) watch(ctx context.Context, h *hostState, r *adp.Room, applied []room.Applied) []room.InboxItem {
	if len(c.watchers) == 0 || len(applied) == 0 {
		return nil
	}
	bySeq := map[int64]*room.Applied{}
	for i := range applied {
		bySeq[applied[i].Record.Seq] = &applied[i]
	}
	var rc *RoomContext
	var out []room.InboxItem
	for _, w := range c.watchers {
		watched := map[string]bool{}
		for _, t := range w.WatchedTypes() {
			watched[t] = true
		}
		var recs []WatchRecord
		for _, a := range applied {
			rec := a.Record
			if rec.IsRedacted() || !watched[rec.Type()] {
				continue
			}
			ev := &rec.Envelope.Event
			payload, _ := json.Marshal(ev.Payload)
			recs = append(recs, WatchRecord{Seq: rec.Seq, EventID: rec.EnvelopeHash(), Type: ev.Type, Actor: ev.Actor,
				CreatedAt: ev.CreatedAt, AcceptedAt: rec.AcceptedAt, Mentions: ev.Mentions, Payload: payload})
		}
		if len(recs) == 0 {
			continue
		}
		if rc == nil {
			rc = c.roomContext(h, r)
		}
		items, err := w.Watch(ctx, recs, rc)
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
				if c.toolExists(t) {
					tools = append(tools, t)
				}
			}
			reason := room.Truncate(strings.TrimSpace(wi.Reason), 64)
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
func (c *Connector) toolExists(name string) bool {
	if standardTools[name] {
		return true
	}
	for _, p := range c.tools {
		for _, t := range p.Tools() {
			if t.MCPName == name {
				return true
			}
		}
	}
	return false
}
