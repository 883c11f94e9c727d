package plugin

import (
	"errors"
	"sync"
)

// ABIVersion is the version of the host ABI this SDK implements.
const ABIVersion = 1

// Plugin is everything a plugin provides. Register it once, from an init
// function of the main package.
type Plugin struct {
	// Name is the plugin's name: lowercase [a-z][a-z0-9_]*, at most 32
	// characters. Its tools appear in MCP as <Name>_<tool>.
	Name string
	// Version is the plugin's own version string.
	Version string
	// Description says what the plugin is for.
	Description string

	// Validators check proposed events before they are signed, one function
	// per custom event type. Needs the "validate" grant.
	Validators map[string]ValidateFunc
	// Watchers look at verified records, one function per event type, and
	// may turn a record into an inbox item. Needs the "watch" grant.
	Watchers map[string]WatchFunc
	// Tools are extra MCP tools. Needs the "tools" grant.
	Tools []Tool
	// Packs are type packs rooms may import. Needs the "packs" grant.
	Packs []Pack
	// Proposes lists the event types tools may return as proposals. Each
	// needs a "propose:<type>" grant.
	Proposes []string
}

// ValidateFunc checks one proposed event and returns the reasons to refuse
// it; nil or empty means the event is fine.
type ValidateFunc func(req *ValidateRequest) []FieldError

// ValidateRequest is one proposed event of a type the plugin validates.
type ValidateRequest struct {
	NowMS      int64 // host time in Unix milliseconds: the only clock there is
	Type       string
	Actor      string // the agent that will sign it, when known
	Payload    Raw
	Mentions   []string
	References []string
	Room       *Room
}

// WatchFunc looks at one record of a watched type and returns an inbox item,
// or nil when the record needs no attention.
type WatchFunc func(rec *Record, req *WatchRequest) *InboxItem

// WatchRequest is the batch a record arrived in.
type WatchRequest struct {
	NowMS   int64
	Room    *Room
	Records []Record // the whole batch, oldest first
}

// Tool is one MCP tool. Its MCP name is <plugin>_<Name>.
type Tool struct {
	// Name is lowercase [a-z0-9_]+.
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema (draft 2020-12) of the arguments: an
	// object schema without oneOf, anyOf or allOf: a map[string]any, a
	// json.RawMessage or plugin.Raw, or (with package stdlib imported) any
	// value encoding/json can marshal, such as a struct.
	InputSchema any
	// OutputSchema, when set, is the JSON Schema of ToolResult.Structured.
	OutputSchema any
	// Handler runs the tool. Returning an error makes an is_error result
	// carrying the error text.
	Handler ToolFunc
}

// ToolFunc runs one tool call.
type ToolFunc func(req *ToolRequest) (*ToolResult, error)

// ToolRequest is one call of a tool.
type ToolRequest struct {
	NowMS     int64
	Name      string
	Arguments Raw   // already checked by the host against InputSchema; stdlib.Bind decodes them
	Self      *Self // the connector's active agent, when known
	Room      *Room // set when the call concerns one room
}

var (
	regMu      sync.Mutex
	registered *Plugin
)

// Register installs p. Call it exactly once, from init; a second call
// panics.
func Register(p Plugin) {
	regMu.Lock()
	defer regMu.Unlock()
	if registered != nil {
		panic("plugin: Register called twice")
	}
	registered = &p
}

func current() *Plugin {
	regMu.Lock()
	defer regMu.Unlock()
	return registered
}

// RoomProperties are the input schema members of a tool that is about one
// room. When a call carries them, the host passes that room's context (with
// the records of the plugin's types) as ToolRequest.Room. Splice them into a
// tool's "properties".
const RoomProperties = `"room_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$", "description": "The room."},
	"host": {"type": "string", "pattern": "^https://[^/?#@\\s]+$", "maxLength": 2048, "description": "HTTPS origin of the room's host; only needed when the room ID is known on more than one host."}`

// NamedRoom returns the context of the room the call names in its room_id
// argument, or an error the agent can act on when the host passed none (a
// room this agent does not follow) or another room's.
func (r *ToolRequest) NamedRoom() (*Room, error) {
	id, _ := r.Arguments.Get("room_id").AsString()
	if r.Room == nil || r.Room.RoomID == "" {
		return nil, errors.New("apconnect passed no context for room " + id + "; is it a room this agent follows?")
	}
	if r.Room.RoomID != id {
		return nil, errors.New("the context is for room " + r.Room.RoomID + ", not " + id)
	}
	return r.Room, nil
}

// PartialNote is the line a result should carry when the context may miss
// records (RecordsTruncated), and "" otherwise.
func (r *Room) PartialNote() string {
	if r != nil && r.RecordsTruncated {
		return "\n(partial: older records of this room are not held by apconnect)"
	}
	return ""
}
