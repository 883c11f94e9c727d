package plugin

import "encoding/json"

// Record is a verified, accepted room record as plugins see it: no envelope,
// signature or hash chain, only what a rule needs. A redacted record carries
// Seq, EventID, Type, AcceptedAt and Redacted only.
type Record struct {
	Seq        int64           `json:"seq"`
	EventID    string          `json:"event_id"`
	Type       string          `json:"type"`
	Actor      string          `json:"actor,omitempty"`
	CreatedAt  int64           `json:"created_at,omitempty"`
	AcceptedAt int64           `json:"accepted_at"`
	Mentions   []string        `json:"mentions,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"` // a JSON object, as verified
	Redacted   bool            `json:"redacted,omitempty"`
}

// Self is the connector's active agent and, inside a room, its role.
type Self struct {
	AgentID string `json:"agent_id"`
	Role    string `json:"role,omitempty"`
}

// Member is one active member of a room.
type Member struct {
	AgentID     string `json:"agent_id"`
	Role        string `json:"role"`
	Perspective string `json:"perspective,omitempty"`
}

// TypeInfo is one entry of a room's type registry.
type TypeInfo struct {
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Status string `json:"status,omitempty"`
}

// Head is the room head (ADP 5.1).
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// RoomContext is the read-only view of a room that the host builds from
// verified state and hands to a plugin. Only RoomID is required; the
// integrator includes what the operation needs (a validator of votes needs
// the poll records, a watcher needs Self).
type RoomContext struct {
	RoomID           string     `json:"room_id"`
	Host             string     `json:"host,omitempty"`
	Status           string     `json:"status,omitempty"`
	Creator          string     `json:"creator,omitempty"`
	Head             *Head      `json:"head,omitempty"`
	Self             *Self      `json:"self,omitempty"`
	Members          []Member   `json:"members,omitempty"`
	Types            []TypeInfo `json:"types,omitempty"`
	Records          []Record   `json:"records,omitempty"`
	RecordsTruncated bool       `json:"records_truncated,omitempty"`
}

// ToolContext is what a plugin tool gets besides its arguments.
type ToolContext struct {
	Self *Self        `json:"self,omitempty"`
	Room *RoomContext `json:"room,omitempty"`
}

// Proposal is an event proposed for signing: by the agent (validate input)
// or by a plugin tool (tool output). Payload is a JSON object; in a
// ToolResult it is the strictly parsed value (map[string]any with
// json.Number numbers), ready for identity.Event.Payload.
type Proposal struct {
	Type       string   `json:"type"`
	Actor      string   `json:"actor,omitempty"`
	Payload    any      `json:"payload"`
	Mentions   []string `json:"mentions,omitempty"`
	References []string `json:"references,omitempty"`
}

// FieldError is one reason a validator refuses an event. Path is a JSON
// pointer into the proposal. Plugin is set by the host.
type FieldError struct {
	Plugin  string `json:"plugin,omitempty"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// InboxItemKind is the only inbox item kind plugins create.
const InboxItemKind = "room.event.custom"

// MaxSummaryRunes caps an inbox item summary (characters).
const MaxSummaryRunes = 160

// InboxItem is a watch rule's request for the agent's attention, already
// checked and completed by the host: RoomID, EventID, Actor and AcceptedAt
// come from the record named by Seq, Summary is cut to MaxSummaryRunes, and
// SuggestedTools holds only tools that exist.
type InboxItem struct {
	Plugin           string   `json:"plugin"`
	Kind             string   `json:"kind"`
	RoomID           string   `json:"room_id"`
	Seq              int64    `json:"seq"`
	EventID          string   `json:"event_id"`
	Actor            string   `json:"actor,omitempty"`
	Type             string   `json:"type"`
	AcceptedAt       int64    `json:"accepted_at"`
	Summary          string   `json:"summary"`
	Priority         string   `json:"priority"`
	RequiresResponse bool     `json:"requires_response"`
	Reason           string   `json:"reason,omitempty"`
	SuggestedTools   []string `json:"suggested_tools,omitempty"`
}

// Content is one item of a tool result. Type is always "text".
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToolResult is a checked plugin tool result: text, optional structured JSON
// (strictly parsed, matching the tool's output schema when it has one),
// IsError, and proposals whose types the plugin is granted.
type ToolResult struct {
	Content    []Content      `json:"content"`
	Structured map[string]any `json:"structured,omitempty"`
	IsError    bool           `json:"is_error,omitempty"`
	Proposals  []Proposal     `json:"proposals,omitempty"`
}

// TypeDef is an ADP type definition (Agent Discourse 1.0 section 12.3) as a
// plugin pack provides it. Schema and Extra are strictly parsed values.
type TypeDef struct {
	Type           string         `json:"type"`
	Kind           string         `json:"kind"`
	Title          string         `json:"title"`
	Description    string         `json:"description,omitempty"`
	Schema         map[string]any `json:"schema"`
	Roles          []string       `json:"roles,omitempty"`
	Instructions   string         `json:"instructions,omitempty"`
	Version        string         `json:"version,omitempty"`
	Status         string         `json:"status,omitempty"`
	RateHint       int64          `json:"rate_hint,omitempty"`
	MaxPayloadHint int64          `json:"max_payload_hint,omitempty"`
	Extra          map[string]any `json:"extra,omitempty"`
}

// Pack is a plugin-provided type pack. Rooms import it with
// {"use": "<Name>/<Version>"} (see Pack.ID).
type Pack struct {
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Types       []TypeDef `json:"types"`
}

// ID returns the identifier rooms use to import the pack: "<name>/<version>".
func (p *Pack) ID() string { return p.Name + "/" + p.Version }

// ToolDef is a plugin tool as the MCP server should list it. MCPName is
// "<plugin>_<tool>"; ReadOnly is set by the host (true unless the plugin
// holds a propose grant), never by the plugin.
type ToolDef struct {
	Plugin       string         `json:"plugin"`
	Name         string         `json:"name"`
	MCPName      string         `json:"mcp_name"`
	Title        string         `json:"title,omitempty"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"input_schema"`
	OutputSchema map[string]any `json:"output_schema,omitempty"`
	ReadOnly     bool           `json:"read_only"`
}

// Description is what a plugin says about itself (describe), after the host
// checked it against the grants.
type Description struct {
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	ABIVersion  int       `json:"abi_version"`
	Description string    `json:"description,omitempty"`
	Validates   []string  `json:"validates,omitempty"`
	Watches     []string  `json:"watches,omitempty"`
	Proposes    []string  `json:"proposes,omitempty"`
	Tools       []ToolDef `json:"tools,omitempty"`
	Packs       []Pack    `json:"packs,omitempty"`
}

// RequiredGrants returns the grants the description needs, in canonical
// order: what "apconnect plugin inspect" prints for the config snippet.
func (d *Description) RequiredGrants() Grants {
	return Grants{
		Validate: len(d.Validates) > 0,
		Watch:    len(d.Watches) > 0,
		Tools:    len(d.Tools) > 0,
		Packs:    len(d.Packs) > 0,
		Propose:  append([]string(nil), d.Proposes...),
	}
}
