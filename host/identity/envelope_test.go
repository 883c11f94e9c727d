package identity

import (
	"encoding/json"
	"strings"
	"testing"
)

func discourseEvent(s Signer, typ string) Event {
	return Event{
		Protocol: ProtocolDiscourse, Type: typ, Actor: s.AgentID(),
		CreatedAt: 1779753700000, Nonce: 1779753700000,
		Payload:  map[string]any{"content_type": "text/plain", "content": "hi", "references": []any{}},
		RoomID:   ptr("d8ftedhpqhsusbg001tg"),
		BaseSeq:  ptr(int64(3)),
		BaseHash: ptr("QmFzZTY0dXJsLXByZXZpb3VzLXJlY29yZC1oYXNoMDA"),
		Mentions: []string{},
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
	if *back.Event.RoomID != "d8ftedhpqhsusbg001tg" || *back.Event.BaseSeq != 3 || back.Event.Mentions == nil {
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
		{"unknown event field", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["audience"] = "x" }), CodeInvalidEvent, "/event/audience"},
		{"bad actor", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["actor"] = "did:agent:xyz" }), CodeInvalidActor, "/event/actor"},
		{"zero nonce", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["nonce"] = json.Number("0") }), CodeInvalidEvent, "/event/nonce"},
		{"fractional created_at", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["created_at"] = json.Number("1.5") }), CodeInvalidEvent, "/event/created_at"},
		{"negative created_at", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["created_at"] = json.Number("-1") }), CodeInvalidEvent, "/event/created_at"},
		{"duplicate mention", mutate(t, func(e map[string]any) {
			a := e["event"].(map[string]any)["actor"]
			e["event"].(map[string]any)["mentions"] = []any{a, a}
		}), CodeInvalidEvent, "/event/mentions/1"},
		{"too many mentions", mutate(t, func(e map[string]any) {
			var ms []any
			for i := 0; i <= MaxMentions; i++ {
				ms = append(ms, testSigner(t, strings.Repeat("m", i+1)).AgentID())
			}
			e["event"].(map[string]any)["mentions"] = ms
		}), CodeInvalidEvent, "/event/mentions"},
		{"bad room id", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["room_id"] = "has space" }), CodeInvalidEvent, "/event/room_id"},
		{"base_seq zero", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["base_seq"] = json.Number("0") }), CodeInvalidEvent, "/event/base_seq"},
		{"missing base_hash", mutate(t, func(e map[string]any) { delete(e["event"].(map[string]any), "base_hash") }), CodeInvalidEvent, "/event"},
		{"payload not an object", mutate(t, func(e map[string]any) { e["event"].(map[string]any)["payload"] = "x" }), CodeInvalidEvent, "/event/payload"},
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

func TestDiscoursePerTypeFields(t *testing.T) {
	s := testSigner(t, "alice")
	create := Event{Protocol: ProtocolDiscourse, Type: "room.create", Actor: s.AgentID(), CreatedAt: 1, Nonce: 1,
		Payload: map[string]any{"host": "https://h"}}
	if _, err := SignEvent(s, create); err != nil {
		t.Fatalf("plain room.create: %v", err)
	}
	for _, f := range []func(*Event){
		func(e *Event) { e.RoomID = ptr("r1") },
		func(e *Event) { e.BaseSeq = ptr(int64(1)) },
		func(e *Event) { e.Mentions = []string{} },
	} {
		e := create
		f(&e)
		if _, err := SignEvent(s, e); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("room.create with extra field: err = %v", err)
		}
	}
	req := Event{Protocol: ProtocolDiscourse, Type: "room.join.request", Actor: s.AgentID(), CreatedAt: 1, Nonce: 1,
		Payload: map[string]any{"role": "speaker"}, RoomID: ptr("r1")}
	if _, err := SignEvent(s, req); err != nil {
		t.Fatalf("room.join.request: %v", err)
	}
	req.BaseSeq, req.BaseHash = ptr(int64(1)), ptr("QmFzZTY0dXJsLXByZXZpb3VzLXJlY29yZC1oYXNoMDA")
	if _, err := SignEvent(s, req); ErrorCode(err) != CodeInvalidEvent {
		t.Errorf("room.join.request with base: err = %v", err)
	}
	req.BaseSeq, req.BaseHash, req.RoomID = nil, nil, nil
	if _, err := SignEvent(s, req); ErrorCode(err) != CodeInvalidEvent {
		t.Errorf("room.join.request without room_id: err = %v", err)
	}
	// Agent Profile defines no extra fields.
	prof := Event{Protocol: ProtocolProfile, Type: "profile.update", Actor: s.AgentID(), CreatedAt: 1, Nonce: 1,
		Payload: map[string]any{}, RoomID: ptr("r1")}
	if _, err := SignEvent(s, prof); ErrorCode(err) != CodeInvalidEvent {
		t.Errorf("profile event with room_id: err = %v", err)
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
