package identity

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidRoomIDMatchesPattern holds the hand-written check to ADP 6.1's
// pattern on every single byte and on the length bounds.
func TestValidRoomIDMatchesPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	cases := []string{"", "a", strings.Repeat("a", 64), strings.Repeat("a", 65), "room\n", "é", "a b", "A-Z_0-9"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	for _, id := range cases {
		if got, want := ValidRoomID(id), pattern.MatchString(id); got != want {
			t.Errorf("ValidRoomID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
}

// TestEventCanonicalMatchesObject holds the member-by-member event
// serialization to Canonicalize of Object, with and without the optional
// members and with payloads that need escaping, and keeps its errors.
func TestEventCanonicalMatchesObject(t *testing.T) {
	room, hash, seq := "room1", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", int64(7)
	payload, err := ParseStrict([]byte(`{"z":1,"a":[1.5,"x\u0001\"\\\\"],"é":{"\ud83d\ude00":null,"\ue000":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	base := Event{Protocol: ProtocolDiscourse, Type: "message.create", Actor: "did:agent:x", CreatedAt: 1, Nonce: 2, Payload: payload}
	events := []Event{base}
	full := base
	full.RoomID, full.BaseSeq, full.BaseHash, full.Mentions = &room, &seq, &hash, []string{"b", "a"}
	events = append(events, full)
	empty := base
	empty.Mentions = []string{}
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
