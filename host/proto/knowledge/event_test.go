package knowledge

import (
	"encoding/json"
	"strings"
	"testing"

	"apconnect/host/identity"
)

func TestValidateEnvelopeAcceptsEveryType(t *testing.T) {
	w := newWorld(t)
	for _, env := range w.all() {
		got, err := ValidateEnvelope(envValue(t, env))
		if err != nil {
			t.Fatalf("%s: %v", env.Event.Type, err)
		}
		if got.Hash != env.Hash || got.Event.Nonce != env.Event.Nonce {
			t.Fatalf("%s: read back %s nonce %d", env.Event.Type, got.Hash, got.Event.Nonce)
		}
	}
}

// Payload mutations are re-signed, so only the Knowledge rules can refuse
// them; each names the offending member.
func TestValidateEnvelopeRefusesPayloads(t *testing.T) {
	w := newWorld(t)
	twoProfiles := a{
		m{"profile": m{"url": "https://p.example/1", "digest": digestOf("p")}, "data": m{}},
		m{"profile": m{"url": "https://p.example/2", "digest": digestOf("p")}, "data": m{"x": 1}},
	}
	nonCanonical := w.question.Hash[:42] + "h" // the same bytes, nonzero padding bits
	if !ValidID(w.question.Hash) || ValidID(nonCanonical) {
		t.Fatal("fixture: the non-canonical id is not what the test needs")
	}
	tests := []struct {
		name, typ string
		payload   m
		ptr       string
	}{
		{"retraction with a license (the old spec)", TypeRetract, m{"target": w.observation.Hash, "reason": "r", "license": license}, "/event/payload"},
		{"unknown kind", TypePublish, publication("claim", nil), "/event/payload/kind"},
		{"http license", TypePublish, publication(KindObservation, m{"license": "http://x.example/"}), "/event/payload/license"},
		{"license with user info", TypePublish, publication(KindObservation, m{"license": "https://u@x.example/"}), "/event/payload/license"},
		{"license with a non-ASCII path", TypePublish, publication(KindObservation, m{"license": "https://x.example/é"}), "/event/payload/license"},
		{"evidence url http", TypePublish, publication(KindObservation, m{"evidence": a{m{"url": "http://x/", "description": "d"}}}), "/event/payload/evidence/0/url"},
		{"evidence digest non-canonical", TypePublish, publication(KindObservation, m{"evidence": a{m{"url": "https://x/", "description": "d", "digest": nonCanonical}}}), "/event/payload/evidence/0/digest"},
		{"duplicate profile digest", TypePublish, publication(KindObservation, m{"profiles": twoProfiles}), "/event/payload/profiles/1/profile/digest"},
		{"relation target non-canonical", TypePublish, publication(KindObservation, m{"relations": a{m{"relation": RelationExtends, "target": nonCanonical}}}), "/event/payload/relations/0/target"},
		{"assessment target non-canonical", TypeAssess, assessment(nonCanonical, VerdictSupports, nil), "/event/payload/target"},
		{"resource without output evidence", TypePublish, publication(KindResource, nil), "/event/payload"},
		{"contains on a non-collection", TypePublish, publication(KindObservation, m{"relations": a{m{"relation": RelationContains, "target": w.question.Hash}}}), "/event/payload/kind"},
		{"reproduced without reproduction", TypeAssess, assessment(w.observation.Hash, VerdictReproduced, nil), "/event/payload"},
		{"tag in capitals", TypePublish, publication(KindObservation, m{"tags": a{"Physics"}}), "/event/payload/tags/0"},
		{"language with underscore", TypePublish, publication(KindObservation, m{"language": "en_US"}), "/event/payload/language"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := signed(t, "alice", tc.typ, 9, tc.payload)
			_, err := ValidateEnvelope(envValue(t, env))
			if code(err) != CodeInvalidEvent || pointer(err) != tc.ptr {
				t.Fatalf("got %s at %q (%v), want invalid_event at %q", code(err), pointer(err), err, tc.ptr)
			}
		})
	}
}

// Envelope-level mutations are not re-signed: identity's codes come through.
func TestValidateEnvelopeRefusesEnvelopes(t *testing.T) {
	w := newWorld(t)
	base := envValue(t, w.observation)
	tests := []struct {
		name string
		fn   func(m)
		want string
	}{
		{"hash of other content", func(e m) { e["hash"] = w.question.Hash }, CodeInvalidEventHash},
		{"signature of another event", func(e m) { e["signature"] = w.question.Signature }, CodeInvalidSignature},
		{"unknown envelope member", func(e m) { e["seq"] = json.Number("1") }, CodeInvalidEvent},
		{"Discourse field", func(e m) { e["event"].(m)["room_id"] = "r1" }, CodeInvalidEvent},
		{"other protocol", func(e m) { e["event"].(m)["protocol"] = "agent-discourse/1.0" }, CodeInvalidEvent},
		{"nonce zero", func(e m) { e["event"].(m)["nonce"] = json.Number("0") }, CodeInvalidEvent},
		{"nonce with a fraction", func(e m) { e["event"].(m)["nonce"] = json.Number("3.5") }, CodeInvalidEvent},
		{"payload not an object", func(e m) { e["event"].(m)["payload"] = a{} }, CodeInvalidEvent},
		{"integral floats (same hash)", func(e m) {
			e["event"].(m)["nonce"] = json.Number("3.0")
			e["event"].(m)["created_at"] = json.Number("1.800000000003e12")
		}, "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateEnvelope(mutate(t, base, tc.fn))
			if code(err) != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestParseEnvelopeIsStrict(t *testing.T) {
	w := newWorld(t)
	good, err := w.observation.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseEnvelope(good); err != nil {
		t.Fatal(err)
	}
	dup := strings.Replace(string(good), `{"event":`, `{"hash":"x","event":`, 1)
	if _, err := ParseEnvelope([]byte(dup)); code(err) != CodeInvalidEvent || pointer(err) != "/hash" {
		t.Fatalf("duplicate member: %v", err)
	}
	if _, err := ValidateEnvelope(map[string]any{"hash": 1.5e300}); code(err) != CodeInvalidEvent {
		t.Fatalf("non-strict value: %v", err)
	}
}

func TestEnvelopeSizeIsTheCanonicalLength(t *testing.T) {
	w := newWorld(t)
	b, _ := w.observation.MarshalJSON()
	n, err := EnvelopeSize(w.observation)
	if err != nil || n != len(b) {
		t.Fatalf("size %d, %v; want %d", n, err, len(b))
	}
	big := signed(t, "alice", TypePublish, 9, publication(KindObservation, m{"statement": strings.Repeat("é", 131_100)}))
	if n, _ := EnvelopeSize(big); n <= DefaultMaxEnvelopeBytes {
		t.Fatalf("a 262200-byte statement measured %d", n)
	}
}

func TestNewEventHasOnlyIdentityFields(t *testing.T) {
	ev := NewEvent(TypeRetract, signerOf("a").AgentID(), t0, 1, map[string]any{"target": digestOf("x"), "reason": "r"})
	if got := ev.Object(); len(got) != 6 || ev.Fields != nil || got["protocol"] != Protocol {
		t.Fatalf("event object %v", got)
	}
	if _, err := identity.SignEvent(signerOf("a"), ev); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyEvidence(t *testing.T) {
	d := digestOf("bytes")
	tests := []struct {
		digest string
		data   []byte
		want   string
	}{
		{"", []byte("bytes"), EvidenceUnchecked},
		{d, []byte("bytes"), EvidenceMatched},
		{d, []byte("other"), EvidenceMismatched},
		{d, []byte{}, EvidenceMismatched},
		{d, nil, EvidenceUnavailable},
		{d[:42] + "h", []byte("bytes"), CodeInvalidEvent},
	}
	for _, tc := range tests {
		got, err := VerifyEvidence(tc.digest, tc.data)
		if err != nil {
			got = code(err)
		}
		if got != tc.want {
			t.Errorf("%q %q: %s, want %s", tc.digest, tc.data, got, tc.want)
		}
	}
}
