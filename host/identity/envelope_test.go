package identity

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// discourseEvent is an event with protocol fields beyond the six (an Agent
// Discourse message): this package keeps them without interpreting them.
func discourseEvent(s Signer, typ string) Event {
	return Event{
		Protocol: "agent-discourse/1.0", Type: typ, Actor: s.AgentID(),
		CreatedAt: 1779753700000, Nonce: 1779753700000,
		Payload: map[string]any{"content_type": "text/plain", "content": "hi", "references": []any{}},
		Fields: map[string]any{"room_id": "d8ftedhpqhsusbg001tg", "base_seq": int64(3),
			"base_hash": "QmFzZTY0dXJsLXByZXZpb3VzLXJlY29yZC1oYXNoMDA", "mentions": []any{}},
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	s := testSigner(t, "alice")
	env, err := SignEvent(s, discourseEvent(s, "message.create"))
	if err != nil {
		t.Fatal(err)
	}
	wire, _ := json.Marshal(env)
	back, err := ParseEnvelope(wire)
	if err != nil {
		t.Fatal(err)
	}
	if back.Event.Fields["room_id"] != "d8ftedhpqhsusbg001tg" || back.Event.Fields["base_seq"] != json.Number("3") || back.Event.Fields["mentions"] == nil {
		t.Fatalf("fields lost: %+v", back.Event)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(wire) {
		t.Fatalf("re-marshal differs:\n%s\n%s", wire, again)
	}
}

// mutate signs a valid envelope, applies f to its JSON object form, and
// returns the resulting wire bytes.
func mutate(t *testing.T, f func(env map[string]any)) []byte {
	t.Helper()
	s := testSigner(t, "alice")
	env, err := SignEvent(s, discourseEvent(s, "message.create"))
	if err != nil {
		t.Fatal(err)
	}
	wire, _ := json.Marshal(env)
	v, err := ParseStrict(wire)
	if err != nil {
		t.Fatal(err)
	}
	f(v.(map[string]any))
	out, err := Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseEnvelopeRejections(t *testing.T) {
	bob := testSigner(t, "bob")
	cases := []struct {
		name    string
		wire    []byte
		code    string
		pointer string
	}{
		{"tampered payload", mutate(t, func(e map[string]any) {
			e["event"].(map[string]any)["payload"].(map[string]any)["content"] = "changed"
		}), CodeInvalidEventHash, "/hash"},
		{"hash of another event", mutate(t, func(e map[string]any) { e["hash"] = "pSqPTRievcRBpiy9Uk61jqkVdulqwvl-mp-FemLvsNs" }), CodeInvalidEventHash, "/hash"},
		{"signature by another key", func() []byte {
			// Re-sign the same event content with bob's key but keep alice as actor.
			return mutate(t, func(e map[string]any) {
				ev, _ := EventFromValue(e["event"], "")
				d, _ := ev.Digest()
				e["signature"] = EncodeBase64URL(bob.SignDigest(d[:]))
			})
		}(), CodeInvalidSignature, "/signature"},
		{"non-canonical signature text", mutate(t, func(e map[string]any) { e["signature"] = e["signature"].(string) + "=" }), CodeInvalidSignature, "/signature"},
		{"unknown envelope field", mutate(t, func(e map[string]any) { e["extra"] = 1 }), CodeInvalidEvent, "/extra"},
		{"bad actor", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["actor"] = "did:agent:xyz" }), CodeInvalidActor, "/event/actor"},
		{"zero nonce", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["nonce"] = json.Number("0") }), CodeInvalidEvent, "/event/nonce"},
		{"fractional created_at", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["created_at"] = json.Number("1.5") }), CodeInvalidEvent, "/event/created_at"},
		{"negative created_at", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["created_at"] = json.Number("-1") }), CodeInvalidEvent, "/event/created_at"},
		{"missing payload", mutate(t, func(e map[string]any) { delete(e["event"].(map[string]any), "payload") }), CodeInvalidEvent, "/event"},
		{"duplicate member", []byte(`{"hash":"x","hash":"y"}`), CodeInvalidEvent, "/hash"},
		{"not an object", []byte(`[]`), CodeInvalidEvent, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEnvelope(tc.wire)
			if err == nil {
				t.Fatal("accepted")
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			if e.Code != tc.code || e.Pointer != tc.pointer {
				t.Fatalf("got %s at %q (%v); want %s at %q", e.Code, e.Pointer, e, tc.code, tc.pointer)
			}
		})
	}
}

// The fields a protocol defines beyond the six are kept as signed, in JCS
// order among the six, and CheckFields refuses those not allowed.
func TestProtocolFields(t *testing.T) {
	s := testSigner(t, "alice")
	ev := discourseEvent(s, "message.create")
	got, err := ev.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Canonicalize(ev.Object())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("canonical form\n%s\nwant\n%s", got, want)
	}
	wire := mutate(t, func(e map[string]any) { e["event"].(map[string]any)["audience"] = "x" })
	if _, err := ParseEnvelope(wire); ErrorCode(err) != CodeInvalidEventHash {
		t.Fatalf("an added field must break the hash: %v", err)
	}
	env, err := SignEvent(s, ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Event.CheckFields("/event", "room_id", "base_seq", "base_hash", "mentions"); err != nil {
		t.Fatalf("allowed fields refused: %v", err)
	}
	err = env.Event.CheckFields("/event", "room_id", "base_seq", "base_hash")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidEvent || e.Pointer != "/event/mentions" {
		t.Fatalf("a field not allowed: %v", err)
	}
	plain := Event{Protocol: "agent-profile/1.0", Type: "profile.update", Actor: s.AgentID(), CreatedAt: 1, Nonce: 1, Payload: map[string]any{}}
	if err := plain.CheckFields("/event"); err != nil {
		t.Fatalf("no fields: %v", err)
	}
}

func TestSignEventRefusesForeignActor(t *testing.T) {
	alice, bob := testSigner(t, "alice"), testSigner(t, "bob")
	ev := discourseEvent(alice, "message.create")
	if _, err := SignEvent(bob, ev); ErrorCode(err) != CodeInvalidActor {
		t.Fatalf("err = %v", err)
	}
	if s := bob.String(); !strings.Contains(s, bob.AgentID()) || strings.Contains(s, EncodeBase64URL(bob.key.Seed())) {
		t.Fatalf("String() = %q", s)
	}
}

// TestVerifyAppend: VerifyAppend writes JCS(event) after what the buffer
// holds, as VerifyCanonical returns it, and refuses what VerifyCanonical
// refuses, whatever the buffer held before.
func TestVerifyAppend(t *testing.T) {
	s := testSigner(t, "alice")
	env, err := SignEvent(s, discourseEvent(s, "message.create"))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := env.VerifyCanonical()
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", "{", `{"event":`, strings.Repeat("x", 600)} {
		got, err := env.VerifyAppend([]byte(prefix))
		if err != nil || string(got) != prefix+string(canon) {
			t.Fatalf("prefix %.10q: %s (%v)", prefix, got, err)
		}
	}
	for name, change := range map[string]func(e *Envelope){
		"payload":   func(e *Envelope) { e.Event.Payload = map[string]any{"content": "changed"} },
		"field":     func(e *Envelope) { e.Event.Fields = map[string]any{"room_id": "other"} },
		"signature": func(e *Envelope) { e.Signature = e.Signature[:85] + "A" },
		"actor":     func(e *Envelope) { e.Event.Actor = "did:agent:x" },
	} {
		bad := *env
		change(&bad)
		_, want := bad.VerifyCanonical()
		_, got := bad.VerifyAppend([]byte(`{"event":`))
		if want == nil || got == nil || got.Error() != want.Error() || ErrorCode(got) != ErrorCode(want) {
			t.Fatalf("%s: VerifyAppend %v, VerifyCanonical %v", name, got, want)
		}
	}
}
