package room

import (
	"encoding/json"
	"testing"
)

// TestPlainPayloadJSONMatchesMarshal holds the plain payload writer to
// json.Marshal: equal bytes whenever it writes, and every payload it
// declines (a non-string member, a byte encoding/json would escape) is one
// json.Marshal is asked for.
func TestPlainPayloadJSONMatchesMarshal(t *testing.T) {
	var payloads []map[string]any
	for c := 0; c < 256; c++ {
		s := "a" + string([]byte{byte(c)}) + "z"
		payloads = append(payloads, map[string]any{"content": s, "content_type": "text/plain"}, map[string]any{s: "v"})
	}
	for _, r := range []rune{'é', '\u2028', '\u2029', '\ufffd', 0x7f, '😀'} {
		payloads = append(payloads, map[string]any{"content": "x" + string(r)})
	}
	payloads = append(payloads,
		map[string]any{}, nil,
		map[string]any{"b": "2", "a": "1", "c": "", "B": "x", "a b": "<"},
		map[string]any{"b": "2", "a": "1", "c": "", "B": "x", "a b": "c d"},
		map[string]any{"content": map[string]any{"k": "v"}, "content_type": "application/json"},
		map[string]any{"n": json.Number("12")}, map[string]any{"t": true}, map[string]any{"z": nil},
	)
	plain := 0
	for _, p := range payloads {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := plainPayloadJSON(p)
		if !ok {
			continue
		}
		plain++
		if string(got) != string(want) {
			t.Fatalf("%#v: %s, json.Marshal %s", p, got, want)
		}
	}
	if plain < 180 {
		t.Fatalf("only %d payloads written plainly", plain)
	}
}
