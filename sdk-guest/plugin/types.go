package plugin

// Record is a verified, accepted room record as the host shows it to
// plugins. A redacted record has only Seq, EventID, Type, AcceptedAt and
// Redacted.
type Record struct {
	Seq        int64
	EventID    string
	Type       string
	Actor      string
	CreatedAt  int64
	AcceptedAt int64
	Mentions   []string
	Payload    Raw
	Redacted   bool
}

// Mentioned reports whether agentID is in the record's mentions.
func (r *Record) Mentioned(agentID string) bool {
	for _, m := range r.Mentions {
		if eqString(m, agentID) {
			return true
		}
	}
	return false
}

// Self is the connector's active agent and, inside a room, its role.
type Self struct {
	AgentID string
	Role    string
}

// Member is one active member of a room.
type Member struct {
	AgentID     string
	Role        string // moderator, speaker or observer
	Perspective string
}

// TypeInfo is one entry of a room's type registry.
type TypeInfo struct {
	Type   string
	Kind   string // message, signal or control
	Status string // active, deprecated or disabled ("" means active)
}

// Head is the room head: the latest record that is not a signal.
type Head struct {
	Seq  int64
	Hash string
}

// Room is a read-only view of one room built by the host from verified state.
// The host fills what the operation needs; missing parts are zero.
type Room struct {
	RoomID           string
	Host             string
	Status           string // scheduled, active, ended or cancelled
	Creator          string
	Head             *Head
	Self             *Self
	Members          []Member
	Types            []TypeInfo
	Records          []Record // a window of records, oldest first
	RecordsTruncated bool     // older records exist outside the window
}

// Member returns the member with agentID.
func (r *Room) Member(agentID string) (Member, bool) {
	if r == nil {
		return Member{}, false
	}
	for _, m := range r.Members {
		if eqString(m.AgentID, agentID) {
			return m, true
		}
	}
	return Member{}, false
}

// Record returns the record of the window whose event ID is eventID.
func (r *Room) Record(eventID string) (*Record, bool) {
	if r == nil {
		return nil, false
	}
	for i := range r.Records {
		if eqString(r.Records[i].EventID, eventID) {
			return &r.Records[i], true
		}
	}
	return nil, false
}

// HasType reports whether the room's type registry holds typ.
func (r *Room) HasType(typ string) bool {
	if r == nil {
		return false
	}
	for _, t := range r.Types {
		if eqString(t.Type, typ) {
			return true
		}
	}
	return false
}

// SelfID returns the active agent's ID, or "".
func (r *Room) SelfID() string {
	if r == nil || r.Self == nil {
		return ""
	}
	return r.Self.AgentID
}

// FieldError is one reason a validator refuses an event: a JSON pointer into
// the proposal ("/payload/option_ids/1") and a message.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Errorf is a shorthand for a FieldError.
func Errorf(path, format string, args ...any) FieldError {
	return FieldError{Path: path, Message: sprintf(format, args)}
}

// Priority of an inbox item.
const (
	PriorityLow    = "low"
	PriorityNormal = "normal"
	PriorityHigh   = "high"
)

// InboxItem asks the agent to look at one record. The SDK sets the kind
// (room.event.custom) and the seq of the record it was returned for; the
// host fills room, event ID, actor and time.
type InboxItem struct {
	Summary          string   // shown to the agent, cut to 160 characters by the host
	Priority         string   // low, normal or high ("" means normal)
	RequiresResponse bool     // the agent is expected to act
	Reason           string   // why the watch rule matched
	SuggestedTools   []string // MCP tool names; the host keeps only existing tools
}

// Content is one piece of a tool result. Only text exists: plugin tools
// cannot return resources, images, UI or HTML.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Proposal is an event a tool asks the host to sign and submit through the
// normal write path. It needs a propose:<type> grant, and the host checks it
// like any agent write (schema, validators, permissions, holds).
type Proposal struct {
	Type       string   `json:"type"`
	Payload    any      `json:"payload"`
	Mentions   []string `json:"mentions,omitempty"`
	References []string `json:"references,omitempty"`
}

// ToolResult is what a tool returns: text, optional structured JSON (an
// object, checked against the tool's output schema) and optional proposals.
type ToolResult struct {
	Content    []Content  `json:"content"`
	Structured any        `json:"structured,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
	Proposals  []Proposal `json:"proposals,omitempty"`
}

// Text returns a ToolResult with one text item.
func Text(text string) *ToolResult {
	return &ToolResult{Content: []Content{{Type: "text", Text: text}}}
}

// TypeDef is an ADP type definition (Agent Discourse 1.0 section 12.3).
type TypeDef struct {
	Type           string   `json:"type"`
	Kind           string   `json:"kind"`
	Title          string   `json:"title"`
	Description    string   `json:"description,omitempty"`
	Schema         any      `json:"schema"`
	Roles          []string `json:"roles,omitempty"`
	Instructions   string   `json:"instructions,omitempty"`
	Version        string   `json:"version,omitempty"`
	Status         string   `json:"status,omitempty"`
	RateHint       int64    `json:"rate_hint,omitempty"`
	MaxPayloadHint int64    `json:"max_payload_hint,omitempty"`
	Extra          any      `json:"extra,omitempty"`
}

// Pack is a versioned set of type definitions a room can import with
// {"use": "<name>/<version>"}. Name has the form "<owner>:<pack>".
type Pack struct {
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Types       []TypeDef `json:"types"`
}
