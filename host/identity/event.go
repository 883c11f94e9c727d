package identity

import (
	"crypto/ed25519"
	"crypto/sha3"
	"encoding/json"
	"slices"

	itext "apconnect/host/text"
)

// Event is a signed event object (section 5.1): the six identity fields
// and the top-level fields the protocol named in Protocol defines beyond
// them (Agent Discourse: room_id, base_seq, base_hash, mentions), which this
// package keeps so the event hashes as signed but does not interpret: each
// protocol's rules check them (CheckFields for the closed object, and their
// own syntax).
//
// Payload and the values of Fields hold strictly parsed JSON values (see
// ParseStrict), or Go values that canonicalize as those do.
type Event struct {
	Protocol  string
	Type      string
	Actor     string
	CreatedAt int64
	Nonce     int64
	Payload   any

	// Fields are the top-level members beyond the six, by name; nil when
	// there are none.
	Fields map[string]any
}

// Object returns the event as a JSON object value.
func (e *Event) Object() map[string]any {
	m := map[string]any{
		"protocol":   e.Protocol,
		"type":       e.Type,
		"actor":      e.Actor,
		"created_at": e.CreatedAt,
		"nonce":      e.Nonce,
		"payload":    e.Payload,
	}
	for k, v := range e.Fields {
		m[k] = v
	}
	return m
}

// identityFields are the six fields every event carries, in JCS order.
var identityFields = []string{"actor", "created_at", "nonce", "payload", "protocol", "type"}

// Canonical returns JCS(event), the bytes whose SHA3-256 is the event hash:
// Canonicalize(e.Object()), written member by member in JCS order without
// building the map (every record verified pays for it). The six fields are
// merged with the sorted names of Fields (JCS orders by UTF-16 code units,
// which byte order matches for the ASCII names protocols use).
func (e *Event) Canonical() ([]byte, error) {
	return e.appendCanonical(make([]byte, 0, 512))
}

// appendCanonical appends JCS(event) to b (see Canonical).
func (e *Event) appendCanonical(b []byte) ([]byte, error) {
	start := len(b)
	var buf [8]string
	extra := e.sortedFields(buf[:0])
	b = append(b, '{')
	var err error
	i := 0
	for n, name := range identityFields {
		for i < len(extra) && compareUTF16(extra[i], name) < 0 {
			if b, err = e.appendField(b, start, extra[i]); err != nil {
				return nil, err
			}
			i++
		}
		if n > 0 || len(b) > start+1 {
			b = append(b, ',')
		}
		b = appendCanonicalString(b, name)
		b = append(b, ':')
		switch name {
		case "actor":
			b = appendCanonicalString(b, e.Actor)
		case "created_at":
			b, err = appendCanonicalInt(b, e.CreatedAt)
		case "nonce":
			b, err = appendCanonicalInt(b, e.Nonce)
		case "payload":
			b, err = appendCanonical(b, e.Payload, 1)
		case "protocol":
			b = appendCanonicalString(b, e.Protocol)
		case "type":
			b = appendCanonicalString(b, e.Type)
		}
		if err != nil {
			return nil, err
		}
	}
	for ; i < len(extra); i++ {
		if b, err = e.appendField(b, start, extra[i]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendField appends ",name:value" (or "name:value" first) of a protocol
// field to the event being written from b[start].
func (e *Event) appendField(b []byte, start int, name string) ([]byte, error) {
	if len(b) > start+1 {
		b = append(b, ',')
	}
	b = appendCanonicalString(b, name)
	b = append(b, ':')
	return appendCanonical(b, e.Fields[name], 1)
}

// sortedFields returns the names of Fields in JCS order (nil for none),
// appended to names (a caller's stack buffer: no allocation for a few).
func (e *Event) sortedFields(names []string) []string {
	if len(e.Fields) == 0 {
		return nil
	}
	for k := range e.Fields {
		names = append(names, k)
	}
	slices.SortFunc(names, compareUTF16)
	return names
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

// EventFromValue checks the shape of a parsed event object (section 5.1:
// the six identity fields with their types) and returns it typed; any other
// top-level member is kept in Fields for the protocol's rules to judge (a
// protocol refuses those it does not define with CheckFields). pointer is
// the JSON pointer of the object in its document, used in errors.
func EventFromValue(v any, pointer string) (*Event, error) {
	var e Event
	if err := eventFromValue(v, pointer, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// eventFromValue is EventFromValue into e (an envelope's event, without a
// copy).
func eventFromValue(v any, pointer string, e *Event) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return newError(CodeInvalidEvent, pointer, "event must be a JSON object")
	}
	var err error
	if e.Protocol, err = requiredString(obj, "protocol", pointer); err != nil {
		return err
	}
	if e.Type, err = requiredString(obj, "type", pointer); err != nil {
		return err
	}
	actor, err := requiredString(obj, "actor", pointer)
	if err != nil {
		return err
	}
	if !ValidAgentID(actor) {
		_, perr := ParseAgentID(actor)
		return &Error{Code: CodeInvalidActor, Pointer: pointer + "/actor", Message: perr.Error(), Err: perr}
	}
	e.Actor = actor
	if e.CreatedAt, err = requiredInt(obj, "created_at", pointer, 0); err != nil {
		return err
	}
	if e.Nonce, err = requiredInt(obj, "nonce", pointer, 1); err != nil {
		return err
	}
	payload, ok := obj["payload"]
	if !ok {
		return newError(CodeInvalidEvent, pointer, "missing required field \"payload\"")
	}
	e.Payload = payload
	for k, v := range obj {
		if slices.Contains(identityFields, k) {
			continue
		}
		if e.Fields == nil {
			e.Fields = make(map[string]any, len(obj)-len(identityFields))
		}
		e.Fields[k] = v
	}
	return nil
}

// CheckFields enforces the closed event object (section 5.1): the event
// may carry, beyond the six identity fields, only the allowed fields its
// protocol defines. Every protocol's rules call it.
func (e *Event) CheckFields(pointer string, allowed ...string) error {
	// The names are sorted (so that the first one refused is reported)
	// only when one is refused.
	refused := false
	for k := range e.Fields {
		if !slices.Contains(allowed, k) {
			refused = true
			break
		}
	}
	if !refused {
		return nil
	}
	var buf [8]string
	for _, k := range e.sortedFields(buf[:0]) {
		if !slices.Contains(allowed, k) {
			return newError(CodeInvalidEvent, pointer+"/"+itext.EscapePointer(k),
				"unknown top-level event field %q (the event object is closed)", truncate(k, 80))
		}
	}
	return nil
}

// ObjectPayload reports a payload that is not a JSON object (invalid_event
// at pointer/payload); every protocol's payloads are objects.
func (e *Event) ObjectPayload(pointer string) (map[string]any, error) {
	m, ok := e.Payload.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer+"/payload", "payload must be a JSON object")
	}
	return m, nil
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

// publicKey decodes the actor of a shape-checked event.
func (e *Event) publicKey() (ed25519.PublicKey, error) {
	pub, err := ParseAgentID(e.Actor)
	if err != nil {
		return nil, &Error{Code: CodeInvalidActor, Pointer: "/event/actor", Message: err.Error(), Err: err}
	}
	return pub, nil
}
