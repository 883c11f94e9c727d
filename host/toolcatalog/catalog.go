// Package toolcatalog loads the standard agent_protocols_* tool catalog,
// which is data: each tool's name, title, description, access kind, four
// hints and input and output JSON Schemas live in
// schemas/tools/<name>.json, with shared shapes in schemas/tools/defs.json.
// On first use the package loads those files, inlines the shared shapes so
// every schema is self-contained, checks the catalog rules (input schemas
// are closed objects without oneOf/anyOf/allOf, every room-scoped tool takes
// an optional host, all four hints are set, descriptions say what kind of
// access the tool has). Each schema compiles under JSON Schema draft
// 2020-12 on its first use; the package's tests compile every one. A
// catalog that breaks a rule panics, so a bad schema file can never be
// served.
//
// It is the one list of the standard tools: the MCP surface (host/mcpserver)
// serves it, the connector checks names against it, and the README table is
// generated from it.
package toolcatalog

import (
	"encoding/json"
	"fmt"
	"sync"

	"apconnect/host/capability"
	"apconnect/schemas"
)

// catalog returns the loaded standard tool catalog. It is loaded (about
// 10 ms: read, bundled and checked; the schemas compile later, one by one,
// on first use) on first use rather than at program start, so that
// commands without an MCP server do not pay for it.
var catalog = sync.OnceValue(mustLoadCatalog)

// Preload loads the catalog now, so that a later use does not wait for it.
// It is safe to call from any goroutine, any number of times.
func Preload() { catalog() }

func mustLoadCatalog() *loadedCatalog {
	c, err := loadCatalog(schemas.Tools())
	if err != nil {
		panic(fmt.Sprintf("toolcatalog: invalid tool catalog in schemas/tools: %v", err))
	}
	return c
}

// Access says what a tool touches. Every description states it in words; the
// value drives the generated README table.
type Access string

const (
	// AccessLocalRead tools read the connector's local, verified state. Some
	// may also contact a host when asked to (a refresh or profile input).
	AccessLocalRead Access = "local-read"
	// AccessHostRead tools read a remote host; they sign no event.
	AccessHostRead Access = "host-read"
	// AccessLocalUpdate tools change only local connector state (read
	// cursors, inbox items, held drafts); nothing is sent to a host.
	AccessLocalUpdate Access = "local-update"
	// AccessHostUpdate tools write to a host with an authenticated request
	// but create no signed event (transient agent status).
	AccessHostUpdate Access = "host-update"
	// AccessSignedWrite tools sign an Agent Protocols event with the active
	// Agent ID and submit it.
	AccessSignedWrite Access = "signed-write"
)

// IsRead reports whether a is one of the read kinds.
func (a Access) IsRead() bool {
	return a == AccessLocalRead || a == AccessHostRead
}

// Label is a short human-readable name of a, as used in documentation.
func (a Access) Label() string {
	switch a {
	case AccessLocalRead:
		return "local read"
	case AccessHostRead:
		return "host read"
	case AccessLocalUpdate:
		return "local update"
	case AccessHostUpdate:
		return "host write, unsigned"
	case AccessSignedWrite:
		return "signed write"
	}
	return string(a)
}

// Hints are the four MCP tool annotation hints of a catalog tool.
type Hints struct {
	// ReadOnly is readOnlyHint: the tool does not modify its environment.
	ReadOnly bool
	// Destructive is destructiveHint: the tool may delete or irreversibly
	// replace something (meaningful when ReadOnly is false).
	Destructive bool
	// Idempotent is idempotentHint: repeating a call with the same
	// arguments has no further effect.
	Idempotent bool
	// OpenWorld is openWorldHint: the tool may contact a remote host or
	// profile service.
	OpenWorld bool
}

// ToolInfo describes one catalog tool beyond what MCP serves: its access kind
// and its input field names.
type ToolInfo struct {
	// Name is the tool name, agent_protocols_<...>.
	Name string
	// Title is the human-readable title.
	Title string
	// Description is the description served to clients.
	Description string
	// Access says what the tool touches.
	Access Access
	// Hints are the annotation hints served to clients.
	Hints Hints
	// Inputs lists the input field names in schema order.
	Inputs []string
	// Required lists the required input field names in schema order.
	Required []string
	// Capability is the grant the tool needs on the origin it reaches (the
	// zero Capability, not Valid, for a tool that needs none), and OriginInput the input member that
	// names that origin when the input does ("" otherwise).
	Capability  capability.Capability
	OriginInput string
}

// Definition is a tool as served: what an MCP server hands its clients.
type Definition struct {
	Name        string
	Title       string
	Description string
	Hints       Hints
	// Input and Output are the bundled, self-contained schemas (compact
	// JSON; a fresh copy each call).
	Input, Output json.RawMessage
}

// Definitions returns every tool's definition, sorted by name.
func Definitions() []Definition {
	out := make([]Definition, len(catalog().tools))
	for i, t := range catalog().tools {
		out[i] = t.definition()
	}
	return out
}

// Lookup returns the definition of tool name.
func Lookup(name string) (Definition, bool) {
	t, ok := catalog().byName[name]
	if !ok {
		return Definition{}, false
	}
	return t.definition(), true
}

// Names returns the catalog tool names, sorted.
func Names() []string {
	out := make([]string, len(catalog().tools))
	for i, t := range catalog().tools {
		out[i] = t.name
	}
	return out
}

// Has reports whether name is a standard tool.
func Has(name string) bool {
	_, ok := catalog().byName[name]
	return ok
}

// Info returns what the catalog knows about tool name.
func Info(name string) (ToolInfo, bool) {
	t, ok := catalog().byName[name]
	if !ok {
		return ToolInfo{}, false
	}
	return t.info(), true
}

// Infos returns Info for every catalog tool, sorted by name.
func Infos() []ToolInfo {
	out := make([]ToolInfo, len(catalog().tools))
	for i, t := range catalog().tools {
		out[i] = t.info()
	}
	return out
}

// InputSchema returns the compiled input schema of tool name. Every call's
// arguments are validated with it before they are decoded: unknown fields,
// wrong types, values out of range and missing required fields are
// reported with JSON pointers to the offending input.
func InputSchema(name string) (*Schema, bool) {
	t, ok := catalog().byName[name]
	if !ok {
		return nil, false
	}
	return t.inSchema, true
}

// OutputSchema returns the compiled output schema of tool name, for checking
// that the engine's structured results match what the catalog promises.
func OutputSchema(name string) (*Schema, bool) {
	t, ok := catalog().byName[name]
	if !ok {
		return nil, false
	}
	return t.outSchema, true
}

func (t *catalogTool) definition() Definition {
	return Definition{Name: t.name, Title: t.title, Description: t.description, Hints: t.hints,
		Input: json.RawMessage(append([]byte(nil), t.input...)), Output: json.RawMessage(append([]byte(nil), t.output...))}
}

func (t *catalogTool) info() ToolInfo {
	return ToolInfo{
		Name:        t.name,
		Title:       t.title,
		Description: t.description,
		Access:      t.access,
		Hints:       t.hints,
		Inputs:      append([]string(nil), t.inputProps...),
		Required:    append([]string(nil), t.required...),
		Capability:  t.capability,
		OriginInput: t.originInput,
	}
}
