package profile

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"apconnect/host/identity"
)

// invalidVectorCodes is the code each invalid payload vector is rejected
// with.
var invalidVectorCodes = map[string]string{
	"payload id differs from actor": CodeInvalidActor,
	"missing id":                    CodeInvalidEvent,
	"missing name":                  CodeInvalidEvent,
	"empty name":                    CodeInvalidEvent,
	"undefined top-level field":     CodeInvalidEvent,
	"service-derived updated_at inside the payload": CodeInvalidEvent,
	"service-derived event_id inside the payload":   CodeInvalidEvent,
	"non-HTTPS avatar":                           CodeInvalidEvent,
	"non-HTTPS service endpoint":                 CodeInvalidEvent,
	"duplicate service endpoints":                CodeInvalidEvent,
	"link with a script scheme":                  CodeInvalidEvent,
	"duplicate links by url and rel":             CodeInvalidEvent,
	"undefined link field":                       CodeInvalidEvent,
	"duplicate capabilities":                     CodeInvalidEvent,
	"empty capability":                           CodeInvalidEvent,
	"delegation hint with an invalid id":         CodeInvalidEvent,
	"delegation hint without a principal":        CodeInvalidEvent,
	"delegation hint with a non-HTTPS principal": CodeInvalidEvent,
}

// TestPayloadVectors: every valid payload passes for its actor, every
// invalid one is refused with its code.
func TestPayloadVectors(t *testing.T) {
	v := loadVectors(t)
	if v.Protocol != Protocol {
		t.Fatalf("vectors of %q", v.Protocol)
	}
	if len(v.Payloads.Valid) != 2 || len(v.Payloads.Invalid) != len(invalidVectorCodes) {
		t.Fatalf("vectors: %d valid, %d invalid; the test knows 2 and %d", len(v.Payloads.Valid), len(v.Payloads.Invalid), len(invalidVectorCodes))
	}
	val, err := NewValidator(DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Payloads.Valid {
		if err := val.Validate(parse(t, string(c.Payload)), c.Actor); err != nil {
			t.Errorf("valid/%s: %v", c.Name, err)
		}
	}
	for _, c := range v.Payloads.Invalid {
		code, ok := invalidVectorCodes[c.Name]
		if !ok {
			t.Errorf("no expected code for vector %q", c.Name)
			continue
		}
		err := val.Validate(parse(t, string(c.Payload)), c.Actor)
		if err == nil {
			t.Errorf("invalid/%s: accepted", c.Name)
		} else if got := asError(t, err).Code; got != code {
			t.Errorf("invalid/%s: %s, want %s", c.Name, got, code)
		}
	}
}

// TestHistoryVectors reads the history as a reader would, in its listed
// order (nonces 5, 9, 7): each envelope verifies and materializes; the pin
// moves to 5, then 9, and 7 is stale although it was created later. The
// pinned document has the listed latest fields.
func TestHistoryVectors(t *testing.T) {
	v := loadVectors(t)
	actor := signer(9).AgentID()
	var pin Pin
	var pinned *Materialized
	var orders []PinOrder
	for i, raw := range v.History.Envelopes {
		env := envelope(t, raw)
		m, err := Materialize(actor, env)
		if err != nil {
			t.Fatalf("envelope %d: %v", i, err)
		}
		order := ComparePin(pin, m.Pin())
		orders = append(orders, order)
		if order == PinNewer {
			pin, pinned = m.Pin(), m
		}
	}
	if want := []PinOrder{PinNewer, PinNewer, PinStale}; !slices.Equal(orders, want) {
		t.Fatalf("pin verdicts %v, want %v", orders, want)
	}
	var doc map[string]any
	if err := json.Unmarshal(pinned.Document, &doc); err != nil {
		t.Fatal(err)
	}
	for k, want := range v.History.Latest {
		if doc[k] != want {
			t.Errorf("latest document %s = %v, want %v", k, doc[k], want)
		}
	}
}

// TestExplicitEmptyVector: the explicit_empty update verifies, is a valid
// payload, and materializes exactly its document (byte for byte in
// canonical form).
func TestExplicitEmptyVector(t *testing.T) {
	v := loadVectors(t)
	env := envelope(t, v.ExplicitEmpty.Envelope)
	val, err := NewValidator(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := val.ValidateEvent(&env.Event); err != nil {
		t.Fatal(err)
	}
	m, err := Materialize(env.Event.Actor, env)
	if err != nil {
		t.Fatal(err)
	}
	want, err := identity.Canonicalize(parse(t, string(v.ExplicitEmpty.Document)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Document, want) {
		t.Fatalf("document\n got %s\nwant %s", m.Document, want)
	}
	// The document is what the schema calls a profile document.
	s, err := Schema("profileDocument")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(parse(t, string(m.Document))); err != nil {
		t.Fatal(err)
	}
}

func envelope(t *testing.T, raw []byte) *identity.Envelope {
	t.Helper()
	env, err := identity.ParseEnvelope(raw)
	if err != nil {
		t.Fatal(err)
	}
	return env
}
