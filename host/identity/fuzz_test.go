package identity

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gowebpki/jcs"
)

func jsonSeeds(f *testing.F) {
	v := loadVectors(f)
	for _, e := range v.Events {
		f.Add([]byte(e.Event))
	}
	for _, j := range v.JSON.Valid {
		f.Add([]byte(j.Text))
	}
	for _, j := range v.JSON.Invalid {
		f.Add([]byte(j.Text))
	}
	f.Add([]byte(`{"a":[1,2.5e-3,"\u2028",{"b":null}],"\ud83d\ude00":true}`))
}

// FuzzParseStrict checks that the strict parser never panics, never accepts
// what encoding/json considers malformed, and that whatever it accepts
// canonicalizes and re-parses to the same value.
func FuzzParseStrict(f *testing.F) {
	jsonSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseStrict(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("strict parser accepted malformed JSON %q", data)
		}
		c, err := Canonicalize(v)
		if err != nil {
			t.Fatalf("accepted value does not canonicalize: %v", err)
		}
		back, err := ParseStrict(c)
		if err != nil {
			t.Fatalf("canonical form %q does not re-parse: %v", c, err)
		}
		c2, err := Canonicalize(back)
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("canonicalizing twice changed the bytes: %q -> %q", c, c2)
		}
	})
}

// FuzzCanonicalize compares our JCS with the independent gowebpki/jcs
// implementation on every input both accept, and checks the value survives.
func FuzzCanonicalize(f *testing.F) {
	jsonSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseStrict(data)
		if err != nil {
			return
		}
		ours, err := Canonicalize(v)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := jcs.Transform(data)
		if err != nil {
			t.Fatalf("reference rejects what we accept (%q): %v", data, err)
		}
		if !bytes.Equal(ours, ref) {
			t.Fatalf("JCS mismatch for %q:\n ours %q\n  ref %q", data, ours, ref)
		}
		var a, b any
		if json.Unmarshal(data, &a) != nil || json.Unmarshal(ours, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form changed the value: %q -> %q", data, ours)
		}
	})
}

// FuzzParseAgentID checks that every accepted Agent ID is the unique text form
// of its key.
func FuzzParseAgentID(f *testing.F) {
	v := loadVectors(f)
	for _, id := range v.AgentIDs.Valid {
		f.Add(id)
	}
	for _, id := range v.AgentIDs.Invalid {
		f.Add(id.Value)
	}
	f.Fuzz(func(t *testing.T, id string) {
		pub, err := ParseAgentID(id)
		if err != nil {
			return
		}
		if len(pub) != 32 {
			t.Fatalf("accepted %q with a %d-byte key", id, len(pub))
		}
		if back := AgentIDFromPublicKey(pub); back != id {
			t.Fatalf("accepted non-canonical %q (canonical %q)", id, back)
		}
	})
}
