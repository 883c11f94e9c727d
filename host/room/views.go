package room

import (
	"encoding/json"
	"slices"
	"strings"

	"apconnect/host/identity"
	"apconnect/host/inbox"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// MaxSummaryRunes caps summaries of timeline and inbox items (code points).
const MaxSummaryRunes = 160

// TimelineItem is the agent-facing view of one accepted record (connector
// spec 4.2). received_at (the seed's name) and accepted_at (the 0.12.6
// name) both carry the record's accepted_at (DECISIONS #2).
type TimelineItem struct {
	RoomID     string `json:"room_id"`
	Seq        int64  `json:"seq"`
	EventID    string `json:"event_id"`
	Type       string `json:"type"`
	Kind       string `json:"kind"`
	Actor      string `json:"actor,omitempty"`
	CreatedAt  int64  `json:"created_at,omitempty"`
	ReceivedAt int64  `json:"received_at"`
	AcceptedAt int64  `json:"accepted_at"`
	Summary    string `json:"summary"`
	// ContentType and Content are set for message.create.
	ContentType string   `json:"content_type,omitempty"`
	Content     any      `json:"content,omitempty"`
	Mentions    []string `json:"mentions"`
	References  []string `json:"references"`
	// Payload is the event payload as JSON (absent for a redacted record):
	// kept raw so that reading a page of items does not rebuild maps the
	// caller only serializes again.
	Payload  json.RawMessage `json:"payload,omitempty"`
	Redacted bool            `json:"redacted,omitempty"`
	// Record is the full server record, attached on request.
	Record json.RawMessage `json:"record,omitempty"`
	// Extra holds connector annotations.
	Extra map[string]any `json:"extra,omitempty"`
}

// UnmarshalJSON decodes an item and fills whichever of received_at and
// accepted_at is missing from the other: items stored before accepted_at
// was added carry received_at only.
func (it *TimelineItem) UnmarshalJSON(data []byte) error {
	type plain TimelineItem
	if err := json.Unmarshal(data, (*plain)(it)); err != nil {
		return err
	}
	it.fillTimes()
	return nil
}

// fillTimes sets whichever of ReceivedAt and AcceptedAt is zero to the other.
func (it *TimelineItem) fillTimes() {
	if it.AcceptedAt == 0 {
		it.AcceptedAt = it.ReceivedAt
	}
	if it.ReceivedAt == 0 {
		it.ReceivedAt = it.AcceptedAt
	}
}

// InboxItem is an actionable request for the agent's attention.
type InboxItem = inbox.Item

// The ten inbox item kinds (connector spec 4.2).
const (
	KindMessageNew    = "room.message.new"
	KindMention       = "room.mention"
	KindTurnAssigned  = "room.turn.assigned"
	KindSteer         = "room.steer"
	KindJoinRequested = "room.join.requested"
	KindJoinApproved  = "room.join.approved"
	KindRoleChanged   = "room.role.changed"
	KindMemberRemoved = "room.member.removed"
	KindStateChanged  = "room.state.changed"
	KindEventCustom   = "room.event.custom"
)

// InboxKinds returns the ten kinds.
func InboxKinds() []string {
	return []string{KindMessageNew, KindMention, KindTurnAssigned, KindSteer, KindJoinRequested,
		KindJoinApproved, KindRoleChanged, KindMemberRemoved, KindStateChanged, KindEventCustom}
}

// Priorities of inbox items.
const (
	PriorityHigh   = inbox.PriorityHigh
	PriorityNormal = inbox.PriorityNormal
	PriorityLow    = inbox.PriorityLow
)

// PriorityRank returns the sort rank of a priority: high 0, normal 1, low 2.
func PriorityRank(p string) int { return inbox.PriorityRank(p) }

// ActiveTurn is the latest accepted turn.update of a room whose registry has
// turn.update (connector spec 4.3).
type ActiveTurn struct {
	TurnID        any    `json:"turn_id"`
	Speaker       string `json:"speaker"`
	AssignedSeq   int64  `json:"assigned_seq"`
	ExpiresAt     *int64 `json:"expires_at"`
	Intent        string `json:"intent,omitempty"`
	Topic         string `json:"topic,omitempty"`
	Instruction   string `json:"instruction,omitempty"`
	SourceEventID string `json:"source_event_id"`
}

// MemberProfile is best-effort profile metadata of a member.
type MemberProfile struct {
	Name        string  `json:"name,omitempty"`
	Description string  `json:"description,omitempty"`
	AvatarURL   *string `json:"avatar_url"`
}

// MemberView is a member as materialized from verified records (connector
// spec 4.2 RoomMemberView). perspective and last_event_seq are omitted when
// unknown (0.12.6 types them as a string and an integer); joined_seq and
// left_seq are null then, as both catalogs allow.
type MemberView struct {
	AgentID      string         `json:"agent_id"`
	Role         string         `json:"role"`
	Status       string         `json:"status"`
	IsCreator    bool           `json:"is_creator"`
	Perspective  *string        `json:"perspective,omitempty"`
	JoinedSeq    *int64         `json:"joined_seq"`
	LeftSeq      *int64         `json:"left_seq"`
	LastEventSeq *int64         `json:"last_event_seq,omitempty"`
	Profile      *MemberProfile `json:"profile,omitempty"`
	Extra        map[string]any `json:"extra"`
}

// Summarize returns the one-line summary of a record: a message's string
// content, else the first non-blank of the payload's summary, title,
// instruction, intent, question, reason or state, else the event type; cut
// to MaxSummaryRunes code points. A redacted record is "[redacted]".
func Summarize(rec *adp.Record) string {
	if rec.IsRedacted() {
		return "[redacted]"
	}
	ev := &rec.Envelope.Event
	p, _ := ev.Payload.(map[string]any)
	if ev.Type == adp.TypeMessageCreate {
		if s, ok := p["content"].(string); ok && strings.TrimSpace(s) != "" {
			return text.Truncate(s, MaxSummaryRunes)
		}
	}
	for _, k := range []string{"summary", "title", "instruction", "intent", "question", "reason", "state"} {
		if s, ok := p[k].(string); ok && strings.TrimSpace(s) != "" {
			return text.Truncate(s, MaxSummaryRunes)
		}
	}
	return ev.Type
}

// ItemKind is the kind a timeline item reports: the registry kind of a
// custom type (message, signal or control), "message" for message.create,
// and the freshness class (genesis, contract or signal) of other built-ins.
func ItemKind(typ string, class adp.Class, reg adp.Registry) string {
	if typ == adp.TypeMessageCreate {
		return string(adp.KindMessage)
	}
	if !adp.IsBuiltin(typ) {
		if d, ok := reg.Lookup(typ); ok {
			return string(d.Kind)
		}
		return string(adp.KindMessage)
	}
	return string(class)
}

// NewTimelineItem builds the timeline item of a record of a room whose
// registry is reg (the registry in force for the record).
func NewTimelineItem(rec *adp.Record, reg adp.Registry) TimelineItem {
	class, err := adp.ClassOf(rec.Type(), reg)
	if err != nil {
		class = adp.ClassMessage
	}
	it := TimelineItem{
		RoomID:     rec.RoomID,
		Seq:        rec.Seq,
		EventID:    rec.EnvelopeHash(),
		Type:       rec.Type(),
		Kind:       ItemKind(rec.Type(), class, reg),
		ReceivedAt: rec.AcceptedAt,
		AcceptedAt: rec.AcceptedAt,
		Summary:    Summarize(rec),
		Mentions:   []string{},
		References: []string{},
	}
	if rec.IsRedacted() {
		it.Redacted = true
		return it
	}
	ev := &rec.Envelope.Event
	it.Actor = ev.Actor
	it.CreatedAt = ev.CreatedAt
	if ms := adp.MentionsOf(ev); ms != nil {
		it.Mentions = append(it.Mentions, ms...)
	}
	p, _ := ev.Payload.(map[string]any)
	if raw, ok := plainPayloadJSON(p); ok {
		it.Payload = raw
	} else if raw, err := json.Marshal(p); err == nil {
		it.Payload = raw
	}
	if refs, ok := p["references"].([]any); ok {
		for _, r := range refs {
			if s, ok := r.(string); ok {
				it.References = append(it.References, s)
			}
		}
	}
	if ev.Type == adp.TypeMessageCreate {
		if ct, ok := p["content_type"].(string); ok {
			it.ContentType = ct
		}
		switch c := p["content"].(type) {
		case string:
			it.Content = c
		case map[string]any:
			it.Content = c
		}
	}
	return it
}

// plainPayloadJSON returns json.Marshal(p) for the common payload whose
// members are all strings of printable ASCII that encoding/json writes
// unchanged (no quote, backslash, control character or <, > and & that it
// escapes): the keys sorted, each string between quotes. ok is false for
// any other payload, which the caller marshals. Every record synced has its
// payload serialized for its timeline item, and reflection cost more than
// the writing (TestPlainPayloadJSONMatchesMarshal).
func plainPayloadJSON(p map[string]any) (raw []byte, ok bool) {
	if p == nil || len(p) > 16 {
		return nil, false
	}
	var buf [16]string
	keys := buf[:0]
	n := 2
	for k, v := range p {
		s, isString := v.(string)
		if !isString || !plainJSONString(k) || !plainJSONString(s) {
			return nil, false
		}
		keys = append(keys, k)
		n += len(k) + len(s) + 6
	}
	slices.Sort(keys)
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':', '"')
		b = append(b, p[k].(string)...)
		b = append(b, '"')
	}
	return append(b, '}'), true
}

// plainJSONString reports whether encoding/json writes s unescaped: printable
// ASCII other than '"', '\\', '<', '>' and '&'.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// str returns a string member of a payload.
func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

// intOf returns an integer member of a payload.
func intOf(p map[string]any, k string) (int64, bool) {
	v, ok := p[k]
	if !ok {
		return 0, false
	}
	return identity.IntValue(v)
}
