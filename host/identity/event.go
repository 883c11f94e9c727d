package identity

import (
	itext "apconnect/host/text"
	"crypto/ed25519"
	"crypto/sha3"
	"encoding/json"
	"fmt"
	"slices"
)

// Protocol identifiers whose closed event shapes this package knows.
const (
	ProtocolProfile   = "agent-profile/1.0"
	ProtocolDiscourse = "agent-discourse/1.0"
)

// MaxMentions is the most entries an ADP event's mentions may hold (ADP 20).
const MaxMentions = 32

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

// Event is a signed event object (section 5.1): the six identity fields plus
// the top-level fields the protocol named in Protocol defines. For Agent
// Discourse those are RoomID, BaseSeq, BaseHash and Mentions; a nil pointer
// (or nil slice) means the field is absent, and an empty non-nil Mentions is
// an explicit "mentions": [].
//
// Payload holds a strictly parsed JSON value (see ParseStrict).
type Event struct {
	Protocol  string
	Type      string
	Actor     string
	CreatedAt int64
	Nonce     int64
	Payload   any

	RoomID   *string
	BaseSeq  *int64
	BaseHash *string
	Mentions []string
}

// Object returns the event as a JSON object value, with only the fields that
// are present.
func (e *Event) Object() map[string]any {
	m := map[string]any{
		"protocol":   e.Protocol,
		"type":       e.Type,
		"actor":      e.Actor,
		"created_at": e.CreatedAt,
		"nonce":      e.Nonce,
		"payload":    e.Payload,
	}
	if e.RoomID != nil {
		m["room_id"] = *e.RoomID
	}
	if e.BaseSeq != nil {
		m["base_seq"] = *e.BaseSeq
	}
	if e.BaseHash != nil {
		m["base_hash"] = *e.BaseHash
	}
	if e.Mentions != nil {
		m["mentions"] = e.Mentions
	}
	return m
}

// Canonical returns JCS(event), the bytes whose SHA3-256 is the event hash:
// Canonicalize(e.Object()), written member by member in JCS order without
// building the map (every record verified pays for it).
func (e *Event) Canonical() ([]byte, error) {
	b := make([]byte, 0, 512)
	b = append(b, `{"actor":`...)
	b = appendCanonicalString(b, e.Actor)
	var err error
	if e.BaseHash != nil {
		b = append(b, `,"base_hash":`...)
		b = appendCanonicalString(b, *e.BaseHash)
	}
	if e.BaseSeq != nil {
		b = append(b, `,"base_seq":`...)
		if b, err = appendCanonicalInt(b, *e.BaseSeq); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"created_at":`...)
	if b, err = appendCanonicalInt(b, e.CreatedAt); err != nil {
		return nil, err
	}
	if e.Mentions != nil {
		b = append(b, `,"mentions":`...)
		b, _ = appendCanonical(b, e.Mentions, 1)
	}
	b = append(b, `,"nonce":`...)
	if b, err = appendCanonicalInt(b, e.Nonce); err != nil {
		return nil, err
	}
	b = append(b, `,"payload":`...)
	if b, err = appendCanonical(b, e.Payload, 1); err != nil {
		return nil, err
	}
	b = append(b, `,"protocol":`...)
	b = appendCanonicalString(b, e.Protocol)
	if e.RoomID != nil {
		b = append(b, `,"room_id":`...)
		b = appendCanonicalString(b, *e.RoomID)
	}
	b = append(b, `,"type":`...)
	b = appendCanonicalString(b, e.Type)
	return append(b, '}'), nil
}

// Digest returns the raw 32-byte event hash, SHA3-256(JCS(event)).
func (e *Event) Digest() ([32]byte, error) {
	b, err := e.Canonical()
	if err != nil {
		return [32]byte{}, err
	}
	return sha3.Sum256(b), nil
}

// ID returns the base64url event hash, the envelope's event ID.
func (e *Event) ID() (string, error) {
	d, err := e.Digest()
	if err != nil {
		return "", err
	}
	return EncodeBase64URL(d[:]), nil
}

// MarshalJSON writes the event in canonical form.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.Canonical()
}

// UnmarshalJSON strictly parses an event object and checks its closed shape.
func (e *Event) UnmarshalJSON(data []byte) error {
	v, err := ParseStrict(data)
	if err != nil {
		return eventError(err, "")
	}
	ev, err := EventFromValue(v, "")
	if err != nil {
		return err
	}
	*e = *ev
	return nil
}

// EventFromValue checks the closed shape of a parsed event object (section
// 5.1 and, for Agent Discourse, ADP section 5) and returns it typed. pointer is
// the JSON pointer of the object in its document, used in errors.
func EventFromValue(v any, pointer string) (*Event, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer, "event must be a JSON object")
	}
	var e Event
	var err error
	if e.Protocol, err = requiredString(obj, "protocol", pointer); err != nil {
		return nil, err
	}
	if e.Type, err = requiredString(obj, "type", pointer); err != nil {
		return nil, err
	}
	actor, err := requiredString(obj, "actor", pointer)
	if err != nil {
		return nil, err
	}
	if _, perr := ParseAgentID(actor); perr != nil {
		return nil, &Error{Code: CodeInvalidActor, Pointer: pointer + "/actor", Message: perr.Error(), Err: perr}
	}
	e.Actor = actor
	if e.CreatedAt, err = requiredInt(obj, "created_at", pointer, 0); err != nil {
		return nil, err
	}
	if e.Nonce, err = requiredInt(obj, "nonce", pointer, 1); err != nil {
		return nil, err
	}
	payload, ok := obj["payload"]
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer, "missing required field \"payload\"")
	}
	e.Payload = payload

	allowed := protocolFields[e.Protocol]
	for k := range obj {
		if !slices.Contains(identityFields, k) && !slices.Contains(allowed, k) {
			return nil, newError(CodeInvalidEvent, pointer+"/"+itext.EscapePointer(k),
				"unknown top-level event field %q (the event object is closed)", truncate(k, 80))
		}
	}
	switch e.Protocol {
	case ProtocolProfile:
		if _, ok := payload.(map[string]any); !ok {
			return nil, newError(CodeInvalidEvent, pointer+"/payload", "payload must be a JSON object")
		}
	case ProtocolDiscourse:
		if err := discourseFields(obj, &e, pointer); err != nil {
			return nil, err
		}
	}
	return &e, nil
}

// identityFields are the six fields every event carries.
var identityFields = []string{"protocol", "type", "actor", "created_at", "nonce", "payload"}

// protocolFields lists, per protocol, the top-level fields beyond the six
// that the protocol defines. Agent Profile defines none.
var protocolFields = map[string][]string{
	ProtocolDiscourse: {"room_id", "base_seq", "base_hash", "mentions"},
}

// discourseFields applies ADP section 5: which of room_id, base_seq,
// base_hash and mentions each event type carries, and their syntax.
func discourseFields(obj map[string]any, e *Event, pointer string) error {
	if _, ok := e.Payload.(map[string]any); !ok {
		return newError(CodeInvalidEvent, pointer+"/payload", "payload must be a JSON object")
	}
	_, hasRoom := obj["room_id"]
	_, hasSeq := obj["base_seq"]
	_, hasHash := obj["base_hash"]
	_, hasMentions := obj["mentions"]
	switch e.Type {
	case "room.create":
		for _, k := range []string{"room_id", "base_seq", "base_hash", "mentions"} {
			if _, ok := obj[k]; ok {
				return newError(CodeInvalidEvent, pointer+"/"+k, "room.create must not carry %q", k)
			}
		}
		return nil
	case "room.join.request":
		for _, k := range []string{"base_seq", "base_hash", "mentions"} {
			if _, ok := obj[k]; ok {
				return newError(CodeInvalidEvent, pointer+"/"+k, "room.join.request must not carry %q", k)
			}
		}
		if !hasRoom {
			return newError(CodeInvalidEvent, pointer, "room.join.request must carry \"room_id\"")
		}
	default:
		if !hasRoom || !hasSeq || !hasHash {
			return newError(CodeInvalidEvent, pointer, "%s must carry \"room_id\", \"base_seq\" and \"base_hash\"", truncate(e.Type, 80))
		}
	}
	room, err := requiredString(obj, "room_id", pointer)
	if err != nil {
		return err
	}
	if !ValidRoomID(room) {
		return newError(CodeInvalidEvent, pointer+"/room_id", "room_id must match ^[A-Za-z0-9_-]{1,64}$")
	}
	e.RoomID = &room
	if hasSeq {
		seq, err := requiredInt(obj, "base_seq", pointer, 1)
		if err != nil {
			return err
		}
		e.BaseSeq = &seq
	}
	if hasHash {
		h, err := requiredString(obj, "base_hash", pointer)
		if err != nil {
			return err
		}
		if _, err := DecodeBase64URLLen(h, 32); err != nil {
			return newError(CodeInvalidEvent, pointer+"/base_hash", "base_hash must be a canonical base64url SHA3-256 hash")
		}
		e.BaseHash = &h
	}
	if hasMentions {
		ms, err := mentionList(obj["mentions"], pointer+"/mentions")
		if err != nil {
			return err
		}
		e.Mentions = ms
	}
	return nil
}

// mentionList validates ADP mentions: an array of at most 32 unique,
// canonical Agent IDs.
func mentionList(v any, pointer string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer, "mentions must be an array of Agent IDs")
	}
	if len(arr) > MaxMentions {
		return nil, newError(CodeInvalidEvent, pointer, "mentions holds %d entries; at most %d are allowed", len(arr), MaxMentions)
	}
	out := make([]string, 0, len(arr))
	for i, m := range arr {
		s, ok := m.(string)
		p := fmt.Sprintf("%s/%d", pointer, i)
		if !ok || !ValidAgentID(s) {
			return nil, newError(CodeInvalidEvent, p, "mention must be a canonical did:agent: Agent ID")
		}
		if slices.Contains(out, s) {
			return nil, newError(CodeInvalidEvent, p, "duplicate mention %s", s)
		}
		out = append(out, s)
	}
	return out, nil
}

func requiredString(obj map[string]any, key, pointer string) (string, error) {
	v, ok := obj[key]
	if !ok {
		return "", newError(CodeInvalidEvent, pointer, "missing required field %q", key)
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return "", newError(CodeInvalidEvent, pointer+"/"+key, "%s must be a non-empty string", key)
	}
	return s, nil
}

// requiredInt reads an integer field in [min, 2^53-1].
func requiredInt(obj map[string]any, key, pointer string, min int64) (int64, error) {
	v, ok := obj[key]
	if !ok {
		return 0, newError(CodeInvalidEvent, pointer, "missing required field %q", key)
	}
	n, ok := IntValue(v)
	if !ok || n < min || n > MaxSafeInteger {
		return 0, newError(CodeInvalidEvent, pointer+"/"+key, "%s must be an integer from %d to 2^53-1", key, min)
	}
	return n, nil
}

// IntValue returns the integer value of a parsed JSON number written as an
// integer (no fraction or exponent), or of a Go integer.
func IntValue(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return 0, false
		}
		return n, true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// publicKeyOf decodes the actor of a shape-checked event.
func (e *Event) publicKey() (ed25519.PublicKey, error) {
	pub, err := ParseAgentID(e.Actor)
	if err != nil {
		return nil, &Error{Code: CodeInvalidActor, Pointer: "/event/actor", Message: err.Error(), Err: err}
	}
	return pub, nil
}
