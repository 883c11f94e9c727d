package plugin

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// The records of a room context.
//
// A validator or a tool can only reason about the records the host puts in
// RoomContext.Records, so the host fills them by one rule, the plugin's
// record scope:
//
//   - the plugin's types: the newest held records of every type the plugin
//     validates or watches (its polls and votes, its claims, its graph
//     updates), redacted ones included;
//   - for validate, the referenced records: every held record whose event
//     ID the proposal names, in its references or anywhere in its payload as
//     a string shaped like an event ID (a reacted event, a poll being voted
//     on, an offer being answered).
//
// Records are in seq order without duplicates, within MaxContextRecords and
// ContextPayloadBudget (referenced records first, then the newest of the
// plugin's types). RecordsTruncated is true when the host does not hold the
// whole room (its retained window was pruned or starts after seq 1) or a
// cap left a record of the scope out. A plugin may therefore take the
// absence of a record of its types as proof only when RecordsTruncated is
// false; a referenced record is absent when the host does not hold it.
//
// FillRecords applies the rule through a RecordLookup over the host's
// verified store; ValidateScope and ToolScope (the Scoper interface) say
// what to look up.

// MaxContextRecords caps the records of one room context (the schema's
// limit).
const MaxContextRecords = 1024

// ContextPayloadBudget caps the payload bytes of the records of one room
// context, so that the envelope stays well under the default input cap.
const ContextPayloadBudget = 1 << 20

// maxScopeEventIDs bounds the event IDs looked up for one proposal.
const maxScopeEventIDs = 128

// recordOverhead approximates the JSON of a record besides its payload and
// mentions.
const recordOverhead = 256

var eventIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// RecordScope is what a room context's records must cover for one call:
// the held records of Types and the held records whose event IDs are in
// EventIDs.
type RecordScope struct {
	Types    []string `json:"types,omitempty"`
	EventIDs []string `json:"event_ids,omitempty"`
}

// union returns the scope covering s and o, sorted and without duplicates.
func (s RecordScope) union(o RecordScope) RecordScope {
	types := append(slices.Clone(s.Types), o.Types...)
	slices.Sort(types)
	ids := append(slices.Clone(s.EventIDs), o.EventIDs...)
	slices.Sort(ids)
	return RecordScope{Types: slices.Compact(types), EventIDs: slices.Compact(ids)}
}

// OwnTypes returns the types whose records the plugin reasons about: the
// types it validates or watches, sorted.
func (p *Plugin) OwnTypes() []string {
	types := append(slices.Clone(p.desc.Validates), p.desc.Watches...)
	slices.Sort(types)
	return slices.Compact(types)
}

// ValidateScope returns the record scope of a validate call of proposal:
// the plugin's types and the event IDs the proposal names.
func (p *Plugin) ValidateScope(proposal Proposal) RecordScope {
	return RecordScope{Types: p.OwnTypes(), EventIDs: ProposalEventIDs(proposal)}
}

// ToolScope returns the record scope of a call of the plugin's tool name
// (its short name, as CallTool takes it): the plugin's types. It is empty
// when the plugin has no such tool.
func (p *Plugin) ToolScope(name string) RecordScope {
	if p.tools[name] == nil {
		return RecordScope{}
	}
	return RecordScope{Types: p.OwnTypes()}
}

// ValidateScope returns the record scope of the room context that
// Registry.ValidateEvent hands every validator of proposal.Type: the union
// of their scopes (empty when no plugin validates the type).
func (r *Registry) ValidateScope(proposal Proposal) RecordScope {
	var s RecordScope
	for _, v := range r.Validators(proposal.Type) {
		if p, ok := v.(*Plugin); ok {
			s = s.union(p.ValidateScope(proposal))
		}
	}
	return s
}

// ToolScope returns the record scope of a call of the plugin tool with MCP
// name mcpName, as CallTool takes it (empty when no plugin provides it).
func (r *Registry) ToolScope(mcpName string) RecordScope {
	r.mu.RLock()
	p := r.tools[mcpName]
	r.mu.RUnlock()
	if p == nil {
		return RecordScope{}
	}
	return p.ToolScope(strings.TrimPrefix(mcpName, p.Name()+"_"))
}

// Scoper says which records the room context of a call must carry (see
// FillRecords). *Plugin and *Registry implement it, each taking tool names
// as its CallTool does; integration code that holds a Validator or a
// ToolProvider can type-assert it.
type Scoper interface {
	ValidateScope(proposal Proposal) RecordScope
	ToolScope(name string) RecordScope
}

var (
	_ Scoper = (*Plugin)(nil)
	_ Scoper = (*Registry)(nil)
)

// ProposalEventIDs returns the event IDs a proposal names: its references,
// then every string of its payload shaped like an event ID, in document
// order (object members sorted by name), without duplicates and at most
// 128.
func ProposalEventIDs(pr Proposal) []string {
	var ids []string
	seen := map[string]bool{}
	add := func(s string) {
		if len(ids) < maxScopeEventIDs && !seen[s] && eventIDPattern.MatchString(s) {
			seen[s] = true
			ids = append(ids, s)
		}
	}
	for _, ref := range pr.References {
		add(ref)
	}
	walkStrings(payloadValue(pr.Payload), add)
	return ids
}

// payloadValue returns a proposal payload as plain JSON values.
func payloadValue(v any) any {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		return x
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil
		}
		raw = b
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out any
	if d.Decode(&out) != nil {
		return nil
	}
	return out
}

func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case []string:
		for _, e := range x {
			fn(e)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkStrings(x[k], fn)
		}
	}
}

// RecordLookup reads the verified records the host holds for one room.
type RecordLookup interface {
	// RecordsByEventID returns the held records whose event IDs are among
	// ids, in any order.
	RecordsByEventID(ctx context.Context, ids []string) ([]Record, error)
	// NewestRecordsOfTypes returns the newest held records whose types are
	// among types, in any order: limit of them, or all there are when
	// fewer (FillRecords takes fewer to mean that no more exist).
	NewestRecordsOfTypes(ctx context.Context, types []string, limit int) ([]Record, error)
	// HoldsWholeRoom reports whether the host holds every record of the
	// room from seq 1 to its synced position.
	HoldsWholeRoom(ctx context.Context) (bool, error)
}

// FillRecords sets room.Records and room.RecordsTruncated to the records of
// scope that lookup holds (see the rule above), replacing what was there.
func FillRecords(ctx context.Context, room *RoomContext, scope RecordScope, lookup RecordLookup) error {
	whole, err := lookup.HoldsWholeRoom(ctx)
	if err != nil {
		return err
	}
	var referenced, typed []Record
	if len(scope.EventIDs) > 0 {
		if referenced, err = lookup.RecordsByEventID(ctx, scope.EventIDs); err != nil {
			return err
		}
		slices.SortFunc(referenced, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	if len(scope.Types) > 0 {
		// One more than fits tells whether the cap leaves records out.
		if typed, err = lookup.NewestRecordsOfTypes(ctx, scope.Types, MaxContextRecords+1); err != nil {
			return err
		}
		slices.SortFunc(typed, func(a, b Record) int { return cmp.Compare(b.Seq, a.Seq) })
	}
	var out []Record
	seen := map[int64]bool{}
	budget := ContextPayloadBudget
	truncated := !whole
	fits := func(rec Record) bool {
		size := recordOverhead + len(rec.Payload) + 56*len(rec.Mentions)
		if len(out) == MaxContextRecords || size > budget {
			return false
		}
		budget -= size
		return true
	}
	for _, rec := range referenced {
		if seen[rec.Seq] {
			continue
		}
		if !fits(rec) {
			truncated = true
			continue
		}
		seen[rec.Seq] = true
		out = append(out, rec)
	}
	// The records of the plugin's types are the newest ones without a gap:
	// the first that does not fit ends them, so that the latest record of a
	// type in the context is the latest the host holds.
	for _, rec := range typed {
		if seen[rec.Seq] {
			continue
		}
		if !fits(rec) {
			truncated = true
			break
		}
		seen[rec.Seq] = true
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	room.Records, room.RecordsTruncated = out, truncated
	return nil
}

// HeldRecords is a RecordLookup over records in memory (a small host, a
// test). Records are in seq order; WholeRoom says that they start at seq 1
// and miss nothing.
type HeldRecords struct {
	Records   []Record
	WholeRoom bool
}

// RecordsByEventID returns the records with those event IDs.
func (h *HeldRecords) RecordsByEventID(_ context.Context, ids []string) ([]Record, error) {
	var out []Record
	for _, rec := range h.Records {
		if slices.Contains(ids, rec.EventID) {
			out = append(out, rec)
		}
	}
	return out, nil
}

// NewestRecordsOfTypes returns the newest records of those types.
func (h *HeldRecords) NewestRecordsOfTypes(_ context.Context, types []string, limit int) ([]Record, error) {
	var out []Record
	for i := len(h.Records) - 1; i >= 0 && len(out) < limit; i-- {
		if slices.Contains(types, h.Records[i].Type) {
			out = append(out, h.Records[i])
		}
	}
	return out, nil
}

// HoldsWholeRoom returns WholeRoom.
func (h *HeldRecords) HoldsWholeRoom(context.Context) (bool, error) { return h.WholeRoom, nil }
