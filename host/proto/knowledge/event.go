package knowledge

import (
	"crypto/sha3"
	"encoding/json"
	"fmt"
	"strconv"

	"apconnect/host/identity"
)

// NewEvent returns an unsigned Knowledge event of eventType with the six
// identity fields and nothing else (Knowledge defines no other top-level
// field). Sign it with identity.SignEvent after ValidatePayload.
func NewEvent(eventType, actor string, createdAt, nonce int64, payload any) identity.Event {
	return identity.Event{Protocol: Protocol, Type: eventType, Actor: actor, CreatedAt: createdAt, Nonce: nonce, Payload: payload}
}

// ValidID reports whether s is a Knowledge id: the canonical unpadded
// base64url encoding of exactly 32 bytes (event ids, targets, evidence and
// profile digests).
func ValidID(s string) bool {
	_, err := identity.DecodeBase64URLLen(s, 32)
	return err == nil
}

// checkID is ValidID as an error of code at pointer.
func checkID(s, code, pointer, what string) error {
	if !ValidID(s) {
		return errorf(code, pointer, "%s must canonically encode 32 bytes in unpadded base64url", what)
	}
	return nil
}

// ParseEnvelope strictly parses a JSON text (duplicate names, unpaired
// surrogates and unsafe integers refused) and validates it with
// ValidateEnvelope.
func ParseEnvelope(data []byte) (*identity.Envelope, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		e := errorf(CodeInvalidEvent, "", "%v", err)
		if je, ok := err.(*identity.JSONError); ok {
			e.Pointer = je.Pointer
		}
		e.Err = err
		return nil, e
	}
	return ValidateEnvelope(v)
}

// ValidateEnvelope applies the SDK's validate_knowledge_envelope to a
// strictly parsed envelope, in its order: strict JSON, the signedEnvelope
// schema (so a retraction shaped like the old spec, with a license, is
// invalid), the event hash and signature (integral numbers such as 1.0 are
// read as integers, as both SDKs do), a canonical 32-byte hash, HTTPS URLs
// for the license (not on a retraction), evidence and profiles, canonical
// evidence and profile digests, profile bindings unique by digest, and
// canonical dependency ids. Dependencies themselves are CheckDependencies'.
//
// Errors are *identity.Error: invalid_event (with the pointer of the
// offending value), invalid_event_hash, invalid_signature or invalid_actor.
// The returned envelope's payload is the value as received.
func ValidateEnvelope(v any) (*identity.Envelope, error) {
	if err := checkStrict(v, "", 0); err != nil {
		return nil, err
	}
	if err := envelopeSchema(v); err != nil {
		return nil, err
	}
	env, err := identity.EnvelopeFromValue(normalizeEventNumbers(v), "")
	if err != nil {
		return nil, err
	}
	// Agent Knowledge defines no top-level event field beyond the six.
	if err := env.Event.CheckFields("/event"); err != nil {
		return nil, err
	}
	if err := env.Verify(); err != nil {
		return nil, err
	}
	if err := checkID(env.Hash, CodeInvalidEvent, "/hash", "hash"); err != nil {
		return nil, err
	}
	if err := payloadSemantics(env.Event.Type, env.Event.Payload, "/event/payload"); err != nil {
		return nil, err
	}
	return env, nil
}

// envelopeSchema checks the signedEnvelope definition. On failure the
// pointer comes from the event definition of the envelope's own type when
// it names one: the oneOf of the three types names no member.
func envelopeSchema(v any) error {
	list, err := SchemaErrors(v, "signedEnvelope")
	if err != nil {
		return errorf(CodeInvalidEvent, "", "%v", err)
	}
	if len(list) == 0 {
		return nil
	}
	ev := obj(obj(v)["event"])
	if def := eventDefinition(str(ev["type"])); def != "" && ev != nil {
		if sub, _ := SchemaErrors(ev, def); len(sub) > 0 {
			var outer []FieldError
			for _, fe := range list {
				if fe.Path != "/event" && !hasPrefix(fe.Path, "/event/") {
					outer = append(outer, fe)
				}
			}
			for _, fe := range sub {
				outer = append(outer, FieldError{Path: "/event" + fe.Path, Message: fe.Message})
			}
			list = outer
		}
	}
	return fieldErrorsError(CodeInvalidEvent, "", "envelope does not match the Knowledge schema", list)
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// eventDefinition names the schema definition of an event type.
func eventDefinition(eventType string) string {
	switch eventType {
	case TypePublish:
		return "publishEvent"
	case TypeAssess:
		return "assessEvent"
	case TypeRetract:
		return "retractEvent"
	}
	return ""
}

// payloadDefinition names the schema definition of a payload.
func payloadDefinition(eventType string) string {
	switch eventType {
	case TypePublish:
		return "publishPayload"
	case TypeAssess:
		return "assessPayload"
	case TypeRetract:
		return "retractPayload"
	}
	return ""
}

// normalizeEventNumbers returns the envelope with created_at and nonce
// written as plain integers when they are integral in another notation
// (1.0, 1e3): the hash is over JCS, which writes them alike, and the
// identity package reads only the plain form. v passed the schema.
func normalizeEventNumbers(v any) any {
	env := obj(v)
	ev := obj(env["event"])
	norm := make(map[string]any, len(ev))
	for k, x := range ev {
		norm[k] = x
		if k == "created_at" || k == "nonce" {
			if n, ok := intOf(x); ok {
				norm[k] = json.Number(strconv.FormatInt(n, 10))
			}
		}
	}
	out := make(map[string]any, len(env))
	for k, x := range env {
		out[k] = x
	}
	out["event"] = norm
	return out
}

// payloadSemantics is what the SDK checks beyond the schema in a payload
// that passed it: HTTPS URLs, canonical digests, profile bindings unique by
// digest and canonical dependency ids. prefix locates the payload.
func payloadSemantics(eventType string, payload any, prefix string) error {
	p := obj(payload)
	if eventType != TypeRetract {
		if err := checkURL(p["license"], prefix+"/license", "license"); err != nil {
			return err
		}
	}
	for i, e := range arr(p["evidence"]) {
		at := fmt.Sprintf("%s/evidence/%d", prefix, i)
		ev := obj(e)
		if err := checkURL(ev["url"], at+"/url", "evidence url"); err != nil {
			return err
		}
		if d, ok := ev["digest"]; ok {
			if err := checkID(str(d), CodeInvalidEvent, at+"/digest", "evidence digest"); err != nil {
				return err
			}
		}
	}
	seen := map[string]bool{}
	for i, b := range arr(p["profiles"]) {
		at := fmt.Sprintf("%s/profiles/%d/profile", prefix, i)
		ref := obj(obj(b)["profile"])
		if err := checkURL(ref["url"], at+"/url", "profile url"); err != nil {
			return err
		}
		d := str(ref["digest"])
		if err := checkID(d, CodeInvalidEvent, at+"/digest", "profile digest"); err != nil {
			return err
		}
		if seen[d] {
			return errorf(CodeInvalidEvent, at+"/digest", "profile bindings must be unique by digest")
		}
		seen[d] = true
	}
	if eventType == TypePublish {
		for i, r := range arr(p["relations"]) {
			if err := checkID(str(obj(r)["target"]), CodeInvalidEvent, fmt.Sprintf("%s/relations/%d/target", prefix, i), "relation target"); err != nil {
				return err
			}
		}
		return nil
	}
	return checkID(str(p["target"]), CodeInvalidEvent, prefix+"/target", "target")
}

// checkURL is ValidHTTPSURL as an invalid_event error.
func checkURL(v any, pointer, what string) error {
	if !ValidHTTPSURL(str(v)) {
		return errorf(CodeInvalidEvent, pointer, "%s must be an absolute HTTPS URL with a host and no user info", what)
	}
	return nil
}

// EnvelopeSize returns the size a service bounds (DefaultMaxEnvelopeBytes):
// the length of the envelope's JCS serialization. The SDK measures its
// compact serialization of the parsed envelope, which has the same length
// unless a number is written in a non-canonical notation (1.0 for 1).
func EnvelopeSize(env *identity.Envelope) (int, error) {
	b, err := env.MarshalJSON()
	if err != nil {
		return 0, errorf(CodeInvalidEvent, "", "cannot serialize the envelope: %v", err)
	}
	return len(b), nil
}

// Evidence statuses (VerifyEvidence).
const (
	EvidenceUnchecked   = "unchecked"   // the evidence names no digest
	EvidenceMatched     = "matched"     // the bytes hash to the digest
	EvidenceMismatched  = "mismatched"  // they do not
	EvidenceUnavailable = "unavailable" // the complete bytes could not be had
)

// VerifyEvidence compares an evidence digest ("" when the evidence has
// none) with the complete representation bytes, after transfer and content
// decoding and before any text conversion; data is nil when they could not
// be obtained. Nothing is fetched. A malformed digest is invalid_event.
func VerifyEvidence(digest string, data []byte) (string, error) {
	if digest == "" {
		return EvidenceUnchecked, nil
	}
	if err := checkID(digest, CodeInvalidEvent, "", "evidence digest"); err != nil {
		return "", err
	}
	if data == nil {
		return EvidenceUnavailable, nil
	}
	sum := sha3.Sum256(data)
	if identity.EncodeBase64URL(sum[:]) == digest {
		return EvidenceMatched, nil
	}
	return EvidenceMismatched, nil
}
