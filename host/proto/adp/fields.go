package adp

import (
	"errors"
	"fmt"
	"slices"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// Protocol is the Agent Discourse protocol identifier.
const Protocol = "agent-discourse/1.0"

// MaxMentions is the most entries an ADP event's mentions may hold (ADP 20).
const MaxMentions = 32

// The top-level fields ADP events carry beyond the six identity fields
// (ADP 5).
const (
	FieldRoomID   = "room_id"
	FieldBaseSeq  = "base_seq"
	FieldBaseHash = "base_hash"
	FieldMentions = "mentions"
)

// eventFields are the four, for identity.Event.CheckFields.
var eventFields = []string{FieldRoomID, FieldBaseSeq, FieldBaseHash, FieldMentions}

// ValidRoomID reports whether id is a syntactically valid ADP room id:
// ADP 6.1's ^[A-Za-z0-9_-]{1,64}$ (checked by hand: it runs several times
// per record verified).
func ValidRoomID(id string) bool {
	if len(id) < 1 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Fields is the typed view of an ADP event's fields beyond the six: its
// room, the base it was written against and its mentions.
type Fields struct {
	// RoomID is "" when absent (room.create).
	RoomID string
	// Base is nil when absent (room.create, room.join.request).
	Base *Link
	// Mentions is nil when absent and non-nil empty for an explicit [].
	Mentions []string
}

// FieldsOf reads the ADP fields of an event (checked by CheckEventFields;
// a member of the wrong type reads as absent).
func FieldsOf(ev *identity.Event) Fields {
	var f Fields
	f.RoomID, _ = ev.Fields[FieldRoomID].(string)
	if base, ok := baseOf(ev); ok {
		f.Base = &base
	}
	f.Mentions = MentionsOf(ev)
	return f
}

// baseOf returns an event's base (FieldsOf's Base, without allocating it).
func baseOf(ev *identity.Event) (Link, bool) {
	seq, okSeq := identity.IntValue(ev.Fields[FieldBaseSeq])
	hash, okHash := ev.Fields[FieldBaseHash].(string)
	return Link{Seq: seq, Hash: hash}, okSeq && okHash
}

// RoomOf returns an event's room_id ("" when it has none).
func RoomOf(ev *identity.Event) string {
	s, _ := ev.Fields[FieldRoomID].(string)
	return s
}

// MentionsOf returns an event's mentions (nil when it has none): the
// Mentions of FieldsOf, without reading the other fields.
func MentionsOf(ev *identity.Event) []string {
	switch ms := ev.Fields[FieldMentions].(type) {
	case []string:
		return ms
	case []any:
		out := make([]string, 0, len(ms))
		for _, m := range ms {
			if s, ok := m.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Set writes f into ev's fields, leaving out the absent members.
func (f Fields) Set(ev *identity.Event) { ev.Fields = f.Map() }

// Map returns f as an event's Fields (nil when every member is absent).
func (f Fields) Map() map[string]any {
	m := map[string]any{}
	if f.RoomID != "" {
		m[FieldRoomID] = f.RoomID
	}
	if f.Base != nil {
		m[FieldBaseSeq] = f.Base.Seq
		m[FieldBaseHash] = f.Base.Hash
	}
	if f.Mentions != nil {
		list := make([]any, len(f.Mentions))
		for i, s := range f.Mentions {
			list[i] = s
		}
		m[FieldMentions] = list
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// NewEvent builds an unsigned ADP event with its fields.
func NewEvent(typ, actor string, createdAt int64, payload any, f Fields) identity.Event {
	ev := identity.Event{Protocol: Protocol, Type: typ, Actor: actor, CreatedAt: createdAt, Payload: payload}
	f.Set(&ev)
	return ev
}

// CheckEventFields applies ADP section 5 to an event's shape: a JSON object
// payload, only the four ADP fields beyond the six, which of room_id,
// base_seq, base_hash and mentions each event type carries, and their
// syntax. pointer is the event's JSON pointer.
func CheckEventFields(ev *identity.Event, pointer string) error {
	if err := ev.CheckFields(pointer, eventFields...); err != nil {
		return fromIdentity(err)
	}
	if _, err := ev.ObjectPayload(pointer); err != nil {
		return fromIdentity(err)
	}
	_, hasRoom := ev.Fields[FieldRoomID]
	_, hasSeq := ev.Fields[FieldBaseSeq]
	_, hasHash := ev.Fields[FieldBaseHash]
	switch ev.Type {
	case TypeRoomCreate:
		for _, k := range eventFields {
			if _, ok := ev.Fields[k]; ok {
				return fieldError(pointer+"/"+k, "room.create must not carry %q", k)
			}
		}
		return nil
	case TypeJoinRequest:
		for _, k := range []string{FieldBaseSeq, FieldBaseHash, FieldMentions} {
			if _, ok := ev.Fields[k]; ok {
				return fieldError(pointer+"/"+k, "room.join.request must not carry %q", k)
			}
		}
		if !hasRoom {
			return fieldError(pointer, "room.join.request must carry \"room_id\"")
		}
	default:
		if !hasRoom || !hasSeq || !hasHash {
			return fieldError(pointer, "%s must carry \"room_id\", \"base_seq\" and \"base_hash\"", truncateType(ev.Type))
		}
	}
	return checkFieldSyntax(ev, pointer)
}

// checkFieldSyntax checks the values of the ADP fields present.
func checkFieldSyntax(ev *identity.Event, pointer string) error {
	if room, ok := ev.Fields[FieldRoomID].(string); !ok || !ValidRoomID(room) {
		return fieldError(pointer+"/room_id", "room_id must match ^[A-Za-z0-9_-]{1,64}$")
	}
	if v, ok := ev.Fields[FieldBaseSeq]; ok {
		if n, ok := identity.IntValue(v); !ok || n < 1 || n > identity.MaxSafeInteger {
			return fieldError(pointer+"/base_seq", "base_seq must be an integer from 1 to 2^53-1")
		}
	}
	if v, ok := ev.Fields[FieldBaseHash]; ok {
		if h, ok := v.(string); !ok || !validHash(h) {
			return fieldError(pointer+"/base_hash", "base_hash must be a canonical base64url SHA3-256 hash")
		}
	}
	if v, ok := ev.Fields[FieldMentions]; ok {
		return checkMentionList(v, pointer+"/mentions")
	}
	return nil
}

// checkMentionList validates ADP mentions: an array of at most 32 unique,
// canonical Agent IDs.
func checkMentionList(v any, pointer string) error {
	var list []string
	switch ms := v.(type) {
	case []string:
		list = ms
	case []any:
		for i, m := range ms {
			s, ok := m.(string)
			if !ok {
				return fieldError(fmt.Sprintf("%s/%d", pointer, i), "mention must be a canonical did:agent: Agent ID")
			}
			list = append(list, s)
		}
	default:
		return fieldError(pointer, "mentions must be an array of Agent IDs")
	}
	if len(list) > MaxMentions {
		return fieldError(pointer, "mentions holds %d entries; at most %d are allowed", len(list), MaxMentions)
	}
	for i, s := range list {
		p := fmt.Sprintf("%s/%d", pointer, i)
		if !identity.ValidAgentID(s) {
			return fieldError(p, "mention must be a canonical did:agent: Agent ID")
		}
		if slices.Contains(list[:i], s) {
			return fieldError(p, "duplicate mention %s", s)
		}
	}
	return nil
}

// fieldError is an invalid_event error about an event's shape.
func fieldError(pointer, format string, args ...any) error {
	return newError(CodeInvalidEvent, pointer, format, args...)
}

// fromIdentity converts an Agent Identity rejection into this package's
// error, keeping its code, pointer and message.
func fromIdentity(err error) error {
	var ie *identity.Error
	if errors.As(err, &ie) {
		return &Error{Code: ie.Code, Message: ie.Message, Pointer: ie.Pointer, Data: ie.Data, Err: err}
	}
	return err
}

func truncateType(t string) string { return text.Truncate(t, 80) }
