package plugin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry is the set of loaded plugins the connector consults: validators
// by event type, watchers for each sync page, tools by MCP name and packs by
// ID. It is safe for concurrent use.
type Registry struct {
	coreTool func(name string) bool

	mu      sync.RWMutex
	plugins []*Plugin
	byName  map[string]*Plugin
	tools   map[string]*Plugin // MCP name → plugin
	packs   map[string]*Plugin // pack name → plugin
}

// NewRegistry returns an empty registry. coreTool reports whether a name is
// one of apconnect's own MCP tools; it decides which suggested tools of
// inbox items exist and refuses plugin tools that would shadow one. Nil
// means "names starting with agent_protocols_".
func NewRegistry(coreTool func(name string) bool) *Registry {
	if coreTool == nil {
		coreTool = func(name string) bool { return strings.HasPrefix(name, mcpToolPrefix+"_") }
	}
	return &Registry{
		coreTool: coreTool,
		byName:   map[string]*Plugin{},
		tools:    map[string]*Plugin{},
		packs:    map[string]*Plugin{},
	}
}

// Add registers p. It refuses a second plugin of the same name, a tool whose
// MCP name is taken, and a pack name another plugin provides.
func (r *Registry) Add(p *Plugin) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := p.Name()
	if r.byName[name] != nil {
		return errorf(CodeInvalidConfig, name, "load", "another plugin named %q is already loaded", name)
	}
	for _, t := range p.desc.Tools {
		if r.coreTool(t.MCPName) {
			return errorf(CodeInvalidConfig, name, "load", "tool %q would shadow apconnect's own tool", t.MCPName)
		}
		if other := r.tools[t.MCPName]; other != nil {
			return errorf(CodeInvalidConfig, name, "load", "tool %q is already provided by plugin %q", t.MCPName, other.Name())
		}
	}
	for _, pk := range p.desc.Packs {
		if other := r.packs[pk.Name]; other != nil {
			return errorf(CodeInvalidConfig, name, "load", "pack %q is already provided by plugin %q", pk.Name, other.Name())
		}
	}
	r.plugins = append(r.plugins, p)
	r.byName[name] = p
	for _, t := range p.desc.Tools {
		r.tools[t.MCPName] = p
	}
	for _, pk := range p.desc.Packs {
		r.packs[pk.Name] = p
	}
	return nil
}

// Remove unregisters the plugin named name (it is not closed) and reports
// whether it was there.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.byName[name]
	if p == nil {
		return false
	}
	delete(r.byName, name)
	r.plugins = slices.DeleteFunc(r.plugins, func(q *Plugin) bool { return q == p })
	for k, q := range r.tools {
		if q == p {
			delete(r.tools, k)
		}
	}
	for k, q := range r.packs {
		if q == p {
			delete(r.packs, k)
		}
	}
	return true
}

// Plugins returns the registered plugins in registration order.
func (r *Registry) Plugins() []*Plugin {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.plugins)
}

// Plugin returns the registered plugin named name.
func (r *Registry) Plugin(name string) (*Plugin, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p := r.byName[name]
	return p, p != nil
}

// Validators returns the validators of eventType, in registration order.
func (r *Registry) Validators(eventType string) []Validator {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Validator
	for _, p := range r.plugins {
		if p.validates[eventType] {
			out = append(out, p)
		}
	}
	return out
}

// ValidateEvent runs every validator of proposal.Type. It returns all their
// refusals, or the first failure: the write must then be refused (fail
// closed), and the *Error names the plugin.
func (r *Registry) ValidateEvent(ctx context.Context, proposal Proposal, room *RoomContext) ([]FieldError, error) {
	var all []FieldError
	for _, v := range r.Validators(proposal.Type) {
		errs, err := v.ValidateEvent(ctx, proposal, room)
		if err != nil {
			return nil, err
		}
		all = append(all, errs...)
	}
	return all, nil
}

// Watch runs every watcher that watches a type among records (one room's
// verified records, in seq order). It returns the items of the watchers
// that worked, ordered by seq then plugin, with suggested tools limited to
// tools that exist, and one error per watcher that failed (skip and report).
func (r *Registry) Watch(ctx context.Context, records []Record, room *RoomContext) ([]InboxItem, []error) {
	var items []InboxItem
	var errs []error
	for _, p := range r.Plugins() {
		if !slices.ContainsFunc(records, func(rec Record) bool { return p.watches[rec.Type] && !rec.Redacted }) {
			continue
		}
		got, err := p.Watch(ctx, records, room)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		items = append(items, got...)
	}
	r.mu.RLock()
	for i := range items {
		items[i].SuggestedTools = slices.DeleteFunc(items[i].SuggestedTools, func(t string) bool {
			return !r.coreTool(t) && r.tools[t] == nil
		})
	}
	r.mu.RUnlock()
	slices.SortStableFunc(items, func(a, b InboxItem) int {
		if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
			return c
		}
		return strings.Compare(a.Plugin, b.Plugin)
	})
	return items, errs
}

// Tools returns every plugin tool, sorted by MCP name.
func (r *Registry) Tools() []ToolDef {
	var out []ToolDef
	for _, p := range r.Plugins() {
		out = append(out, p.Tools()...)
	}
	slices.SortFunc(out, func(a, b ToolDef) int { return strings.Compare(a.MCPName, b.MCPName) })
	return out
}

// CallTool runs the plugin tool with MCP name mcpName.
func (r *Registry) CallTool(ctx context.Context, mcpName string, args json.RawMessage, tc *ToolContext) (*ToolResult, error) {
	r.mu.RLock()
	p := r.tools[mcpName]
	r.mu.RUnlock()
	if p == nil {
		return nil, errorf(CodeUnknown, "", "tool", "no plugin provides tool %q", mcpName)
	}
	return p.CallTool(ctx, strings.TrimPrefix(mcpName, p.Name()+"_"), args, tc)
}

// Packs returns every plugin pack, sorted by ID.
func (r *Registry) Packs() []Pack {
	var out []Pack
	for _, p := range r.Plugins() {
		out = append(out, p.Packs()...)
	}
	slices.SortFunc(out, func(a, b Pack) int { return strings.Compare(a.ID(), b.ID()) })
	return out
}

// Pack returns the pack with ID "<name>/<version>" from the plugin that
// provides it.
func (r *Registry) Pack(ctx context.Context, id string) (*Pack, error) {
	name, _, _ := strings.Cut(id, "/")
	r.mu.RLock()
	p := r.packs[name]
	r.mu.RUnlock()
	if p == nil {
		return nil, errorf(CodeUnknown, "", "pack", "no plugin provides pack %q", id)
	}
	return p.Pack(ctx, id)
}

// Health returns the health of every registered plugin, with up to
// logLines log lines each.
func (r *Registry) Health(logLines int) []Health {
	var out []Health
	for _, p := range r.Plugins() {
		out = append(out, p.Health(logLines))
	}
	return out
}

// String lists the registered plugins, for logs.
func (r *Registry) String() string {
	var names []string
	for _, p := range r.Plugins() {
		names = append(names, fmt.Sprintf("%s@%s", p.Name(), p.desc.Version))
	}
	return "plugins[" + strings.Join(names, " ") + "]"
}
