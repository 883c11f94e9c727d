package identity

import (
	"encoding/json"
	"testing"
)

// TestEventCanonicalMatchesObject holds the member-by-member event
// serialization to Canonicalize of Object, with and without the optional
// members and with payloads that need escaping, and keeps its errors.
func TestEventCanonicalMatchesObject(t *testing.T) {
	payload, err := ParseStrict([]byte(`{"z":1,"a":[1.5,"x\u0001\"\\\\"],"é":{"\ud83d\ude00":null,"\ue000":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	base := Event{Protocol: "agent-discourse/1.0", Type: "message.create", Actor: "did:agent:x", CreatedAt: 1, Nonce: 2, Payload: payload}
	events := []Event{base}
	full := base
	// Fields before, between and after the six in JCS order.
	full.Fields = map[string]any{"room_id": "room1", "base_seq": int64(7), "base_hash": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"mentions": []any{"b", "a"}, "a": true, "zz": json.Number("1"), "p": nil}
	events = append(events, full)
	empty := base
	empty.Fields = map[string]any{"mentions": []any{}}
	events = append(events, empty)
	for i, ev := range events {
		want, err := Canonicalize(ev.Object())
		if err != nil {
			t.Fatal(err)
		}
		got, err := ev.Canonical()
		if err != nil || string(got) != string(want) {
			t.Errorf("event %d:\n got %s\nwant %s (%v)", i, got, want, err)
		}
	}
	bad := base
	bad.Nonce = MaxSafeInteger + 1
	if _, err := bad.Canonical(); err == nil {
		t.Error("a nonce beyond 2^53-1 canonicalized")
	}
	bad = base
	bad.Payload = map[string]any{"f": func() {}}
	if _, err := bad.Canonical(); err == nil {
		t.Error("an unsupported payload value canonicalized")
	}
}
