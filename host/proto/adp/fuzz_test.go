package adp

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// FuzzRecordChain parses a JSON array of server records and verifies the
// chain. Parsing and verification must never panic; a record that parses
// must marshal to its canonical form and parse back to the same record.
func FuzzRecordChain(f *testing.F) {
	v := loadVectors(f)
	all, _ := json.Marshal(v.Records)
	red, _ := json.Marshal(v.RedactedRecords)
	f.Add(all)
	f.Add(red)
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"room_id":"r","seq":1,"pre_hash":null,"hash":"x","accepted_at":0,"envelope":{"hash":"y","redacted":true,"type":"message.create"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		val, err := identity.ParseStrict(data)
		if err != nil {
			return
		}
		list, ok := val.([]any)
		if !ok {
			return
		}
		var recs []*Record
		for i, item := range list {
			rec, err := RecordFromValue(item, "/"+itoa(i))
			if err != nil {
				if ErrorCode(err) == "" {
					t.Fatalf("error without a code: %v", err)
				}
				continue
			}
			out, err := json.Marshal(rec)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			back, err := ParseRecord(out)
			if err != nil {
				t.Fatalf("reparse of %s: %v", out, err)
			}
			again, _ := json.Marshal(back)
			if !bytes.Equal(out, again) {
				t.Fatalf("unstable round trip\n%s\n%s", out, again)
			}
			recs = append(recs, rec)
		}
		res, err := VerifyChain("", Link{}, recs)
		if err == nil && len(recs) > 0 && res.Last != recs[len(recs)-1].Link() {
			t.Fatal("verified chain does not end at its last record")
		}
		_ = Replay(nil, recs)
	})
}

// FuzzCheckPattern checks that the recognizer never panics, and that an
// admitted pattern reaches RE2 unchanged unless a large count was expanded
// (the only source of "(?:", which portable patterns cannot contain).
func FuzzCheckPattern(f *testing.F) {
	v := loadVectors(f)
	for _, p := range append(v.Patterns.Valid, v.Patterns.Invalid...) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckPattern(p) != nil {
			return
		}
		g, err := goPattern(p)
		if err != nil {
			t.Fatalf("admitted %q: %v", p, err)
		}
		if !strings.Contains(g, "(?:") && g != p {
			t.Fatalf("admitted %q reaches RE2 as %q", p, g)
		}
		if _, err := regexp.Compile(g); err != nil {
			t.Fatalf("admitted %q does not compile as %q: %v", p, g, err)
		}
	})
}
