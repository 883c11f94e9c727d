package plugin

import (
	"context"
	"encoding/json"
)

// Validator checks proposed events of the custom types it claims before
// they are signed. The write path calls every validator of an event's type
// after its own checks; any FieldError refuses the write (invalid_event with
// data.errors naming the plugin and the path), and an error refuses writes
// of that type only (fail closed). Nothing is signed and no nonce is used
// in either case.
type Validator interface {
	Name() string
	ValidatedTypes() []string
	ValidateEvent(ctx context.Context, proposal Proposal, room *RoomContext) ([]FieldError, error)
}

// Watcher turns verified records into inbox items. Sync calls it once per
// verified page with the page's non-redacted records of the types it
// watches; an error means the watcher is skipped for that page and
// reported (doctor, identity_current). The items are untrusted: the host
// keeps an item only when Seq names a record of the batch, and of it only
// Summary (cut to MaxSummaryRunes), Priority, RequiresResponse, Reason and
// the SuggestedTools that exist; the room, event ID, actor, type and time
// come from the record, the plugin name from Name.
type Watcher interface {
	Name() string
	WatchedTypes() []string
	Watch(ctx context.Context, records []Record, room *RoomContext) ([]InboxItem, error)
}

// ToolProvider adds MCP tools. The MCP server lists Tools() under their
// MCPName with the host-set annotations (ReadOnly) and routes calls to
// CallTool with the short name.
type ToolProvider interface {
	Name() string
	Tools() []ToolDef
	CallTool(ctx context.Context, name string, args json.RawMessage, tc *ToolContext) (*ToolResult, error)
}

// Proposer is implemented by tool providers allowed to propose events:
// the host submits a proposal of a call of tool (the name CallTool takes)
// only when CanPropose(tool, proposal.Type) is true. The proposals of a
// provider that does not implement it are refused (plugin_not_granted).
type Proposer interface {
	CanPropose(tool, eventType string) bool
}

// PackProvider provides type packs that room_create and type.define may
// import with {"use": "<name>/<version>"}.
type PackProvider interface {
	Name() string
	Packs() []Pack
	Pack(ctx context.Context, id string) (*Pack, error)
}

// A *Plugin is all of them (and a Scoper).
var (
	_ Validator    = (*Plugin)(nil)
	_ Watcher      = (*Plugin)(nil)
	_ ToolProvider = (*Plugin)(nil)
	_ Proposer     = (*Plugin)(nil)
	_ PackProvider = (*Plugin)(nil)
)
