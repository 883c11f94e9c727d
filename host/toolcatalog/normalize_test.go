package toolcatalog

import (
	"encoding/json"
	"testing"
)

// The reference SDK 0.12.6's input handling: a declared top-level member
// that is null, or "" (but for content, text and subject), counts as
// omitted; anything else is left for the schema to judge.
func TestNormalizeArgs(t *testing.T) {
	declared := []string{"room_id", "host", "content", "limit", "types"}
	tests := []struct{ in, want string }{
		{`{"room_id":"r","host":null}`, `{"room_id":"r"}`},
		{`{"room_id":"r","host":""}`, `{"room_id":"r"}`},
		{`{"room_id":"r","content":""}`, `{"room_id":"r","content":""}`},
		{`{"room_id":"r","limit":null,"types":null}`, `{"room_id":"r"}`},
		{`{"room_id":"r","types":[""]}`, `{"room_id":"r","types":[""]}`},
		{`{"room_id":"r","bogus":null}`, `{"room_id":"r","bogus":null}`}, // undeclared: refused later
		{`{"room_id":"r","types":{"x":null}}`, `{"room_id":"r","types":{"x":null}}`},
		{`{"room_id":"r"}`, `{"room_id":"r"}`},
		{`null`, `null`},
		{`[]`, `[]`},
		{`{"room_id":"r","room_id":null}`, `{"room_id":"r","room_id":null}`}, // duplicates: left to the strict parser
	}
	for _, tc := range tests {
		got := normalizeArgs(json.RawMessage(tc.in), declared)
		if tc.want == tc.in {
			// Nothing to drop: the arguments pass through byte for byte.
			if string(got) != tc.in {
				t.Errorf("normalizeArgs(%s) = %s, want it unchanged", tc.in, got)
			}
			continue
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("normalizeArgs(%s) = %s: %v", tc.in, got, err)
		}
		_ = json.Unmarshal([]byte(tc.want), &w)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("normalizeArgs(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
