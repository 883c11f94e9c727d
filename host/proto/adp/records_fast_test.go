package adp

import (
	"bytes"
	"crypto/sha3"
	"testing"

	"apconnect/host/identity"
)

// mapRecordHash is the record hash as the spec states it: SHA3-256 of JCS of
// the five-member object, built as a map.
func mapRecordHash(t *testing.T, roomID string, seq int64, pre, env string, at int64) string {
	t.Helper()
	var p any
	if pre != "" {
		p = pre
	}
	b, err := identity.Canonicalize(map[string]any{"room_id": roomID, "seq": seq, "pre_hash": p, "envelope_hash": env, "accepted_at": at})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha3.Sum256(b)
	return identity.EncodeBase64URL(sum[:])
}

// TestRecordHashMatchesMap holds the directly written record hash payload to
// Canonicalize of the map, for ordinary and awkward member values (escapes,
// non-ASCII, null pre_hash, the integer bounds).
func TestRecordHashMatchesMap(t *testing.T) {
	h := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, c := range []struct {
		room     string
		seq, at  int64
		pre, env string
	}{
		{"room0001", 1, 0, "", h},
		{"room0001", 2, 1_800_000_000_000, h, h},
		{"r", identity.MaxSafeInteger, identity.MaxSafeInteger, "p\"q\\r\n\u2028", "é\u0001<>&"},
		{"", 0, 0, "", ""},
		{"\U0001F600\uE000", 7, -1, "x", "y"},
	} {
		got, err := RecordHash(c.room, c.seq, c.pre, c.env, c.at)
		if err != nil {
			t.Fatal(err)
		}
		if want := mapRecordHash(t, c.room, c.seq, c.pre, c.env, c.at); got != want {
			t.Errorf("%+v: %s, want %s", c, got, want)
		}
	}
	if _, err := RecordHash("r", identity.MaxSafeInteger+1, "", h, 0); ErrorCode(err) != CodeInvalidRecord {
		t.Errorf("seq beyond 2^53-1: %v", err)
	}
	if _, err := RecordHash("r", 1, "", h, -identity.MaxSafeInteger-1); ErrorCode(err) != CodeInvalidRecord {
		t.Errorf("accepted_at beyond -(2^53-1): %v", err)
	}
}

// TestRecordAppendCanonical holds the record serialized around the verified
// event bytes to MarshalJSON, and checks the fallbacks (redacted, extra
// members, no event bytes) still give MarshalJSON's bytes.
func TestRecordAppendCanonical(t *testing.T) {
	f := newFixture(t, nil)
	f.at(tStart).must("creator", TypeMessageCreate, obj{"content_type": "text/plain", "content": "hello <world> & \"friends\" \u2028 é"})
	for _, rec := range f.records {
		want, err := rec.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		canon, err := rec.Envelope.VerifyCanonical()
		if err != nil {
			t.Fatal(err)
		}
		got, err := rec.AppendCanonical([]byte("prefix"), canon)
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("seq %d:\n got %s\nwant %s (%v)", rec.Seq, got, want, err)
		}
		if got, _ := rec.AppendCanonical(nil, nil); !bytes.Equal(got, want) {
			t.Fatalf("seq %d without event bytes: %s", rec.Seq, got)
		}
		extra := *rec
		extra.Extra = map[string]any{"zz": "host data", "a": true}
		wantExtra, _ := extra.MarshalJSON()
		if got, _ := extra.AppendCanonical(nil, canon); !bytes.Equal(got, wantExtra) {
			t.Fatalf("seq %d with extra members: %s", rec.Seq, got)
		}
		if rec.Seq > 1 {
			red, err := rec.Redact()
			if err == nil {
				wantRed, _ := red.MarshalJSON()
				if got, _ := red.AppendCanonical(nil, canon); !bytes.Equal(got, wantRed) {
					t.Fatalf("seq %d redacted: %s", rec.Seq, got)
				}
			}
		}
	}
}

// TestValidateAfterChange: a record built by RecordFromValue (which
// remembers that it passed Validate) and then changed in any value Validate
// reads is validated from scratch and refused as a fresh record with the
// same change would be.
func TestValidateAfterChange(t *testing.T) {
	f := newFixture(t, nil)
	f.at(tStart).must("creator", TypeMessageCreate, obj{"content_type": "text/plain", "content": "hello"})
	src := f.records[len(f.records)-1]
	data, err := src.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	other := "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	changes := map[string]func(r *Record){
		"room_id":     func(r *Record) { r.RoomID = "other-room" },
		"seq":         func(r *Record) { r.Seq++ },
		"pre_hash":    func(r *Record) { r.PreHash = other },
		"hash":        func(r *Record) { r.Hash = other },
		"bad hash":    func(r *Record) { r.Hash = "x" },
		"accepted_at": func(r *Record) { r.AcceptedAt++ },
		"env hash":    func(r *Record) { r.Envelope.Hash = other },
		"protocol":    func(r *Record) { r.Envelope.Event.Protocol = "x" },
		"type":        func(r *Record) { r.Envelope.Event.Type = TypeJoinRequest },
		"event room":  func(r *Record) { r.Envelope.Event.Fields[FieldRoomID] = "other-room" },
		"new env": func(r *Record) {
			e := *r.Envelope
			e.Hash = other
			r.Envelope = &e
		},
		"no envelope": func(r *Record) { r.Envelope = nil },
		"redaction":   func(r *Record) { r.Redaction = &Redaction{Hash: r.Envelope.Hash, Type: TypeMessageCreate} },
	}
	for name, change := range changes {
		rec, err := ParseRecord(data)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.valid.ok || rec.Validate() != nil {
			t.Fatalf("%s: parsed record not remembered as valid", name)
		}
		change(rec)
		fresh := *rec
		fresh.valid = validated{}
		want := fresh.Validate()
		if want == nil {
			t.Fatalf("%s: the change is valid", name)
		}
		if got := rec.Validate(); got == nil || got.Error() != want.Error() {
			t.Errorf("%s: Validate = %v, want %v", name, got, want)
		}
	}
	// A redacted record, remembered, and its redaction changed.
	red, err := src.Redact()
	if err != nil {
		t.Fatal(err)
	}
	rdata, _ := red.MarshalJSON()
	for name, change := range map[string]func(r *Record){
		"redaction hash": func(r *Record) { r.Redaction.Hash = other },
		"redaction type": func(r *Record) { r.Redaction.Type = TypeRoomUpdate },
	} {
		rec, err := ParseRecord(rdata)
		if err != nil || !rec.valid.ok {
			t.Fatal(err)
		}
		change(rec)
		if rec.Validate() == nil {
			t.Errorf("%s: changed redacted record validates", name)
		}
	}
}

// TestRecordsFromValuesPointers: a failing record of a list gets the error
// RecordFromValue gives it at its own pointer, whatever member fails.
func TestRecordsFromValuesPointers(t *testing.T) {
	f := newFixture(t, nil)
	f.at(tStart).must("creator", TypeMessageCreate, obj{"content_type": "text/plain", "content": "hello"})
	rec := f.records[len(f.records)-1]
	data, err := rec.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	value := func() map[string]any {
		v, err := identity.ParseStrict(data)
		if err != nil {
			t.Fatal(err)
		}
		return v.(map[string]any)
	}
	env := func(m map[string]any) map[string]any { return m["envelope"].(map[string]any) }
	breaks := []func(m map[string]any){
		func(m map[string]any) { m["seq"] = "x" },
		func(m map[string]any) { m["hash"] = "x" },
		func(m map[string]any) { delete(env(m), "signature") },
		func(m map[string]any) { env(m)["event"].(map[string]any)["actor"] = "did:agent:x" },
		func(m map[string]any) { env(m)["event"].(map[string]any)["base_seq"] = "x" },
		func(m map[string]any) { env(m)["extra"] = 1 },
	}
	pointer := func(i int) string { return "/result/" + string(rune('0'+i)) }
	for n, brk := range breaks {
		values := []any{value(), value(), value()}
		brk(values[1].(map[string]any))
		recs, errs := RecordsFromValues(values, pointer)
		_, want := RecordFromValue(values[1], pointer(1))
		if errs[0] != nil || errs[2] != nil || recs[0] == nil || recs[2] == nil {
			t.Fatalf("break %d: the good records failed: %v %v", n, errs[0], errs[2])
		}
		if want == nil || errs[1] == nil || errs[1].Error() != want.Error() || recs[1] != nil {
			t.Fatalf("break %d: %v, want %v", n, errs[1], want)
		}
		if e := AsError(errs[1]); e == nil || len(e.Pointer) < 9 || e.Pointer[:9] != "/result/1" {
			t.Fatalf("break %d: pointer of %v", n, errs[1])
		}
	}
}
