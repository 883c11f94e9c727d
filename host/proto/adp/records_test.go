package adp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// vectorRecordValue returns vector record i as a mutable JSON value.
func vectorRecordValue(t *testing.T, set []json.RawMessage, i int) map[string]any {
	t.Helper()
	v, err := identity.ParseStrict(set[i])
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func TestParseRecordRejects(t *testing.T) {
	v := loadVectors(t)
	rehash := func(m map[string]any) {
		rec := &Record{RoomID: m["room_id"].(string), AcceptedAt: 0}
		rec.Seq, _ = identity.IntValue(m["seq"])
		rec.AcceptedAt, _ = identity.IntValue(m["accepted_at"])
		if p, ok := m["pre_hash"].(string); ok {
			rec.PreHash = p
		}
		env := m["envelope"].(map[string]any)
		h, _ := RecordHash(rec.RoomID, rec.Seq, rec.PreHash, env["hash"].(string), rec.AcceptedAt)
		m["hash"] = h
	}
	cases := []struct {
		name   string
		index  int
		mutate func(m map[string]any)
		want   string
	}{
		{"tampered accepted_at", 1, func(m map[string]any) { m["accepted_at"] = json.Number("1779753601011") }, CodeInvalidRecord},
		{"seq 1 with a pre_hash", 0, func(m map[string]any) { m["pre_hash"] = m["hash"] }, CodeInvalidRecord},
		{"seq 2 with a null pre_hash", 1, func(m map[string]any) { m["pre_hash"] = nil; rehash(m) }, CodeInvalidRecord},
		{"missing envelope", 1, func(m map[string]any) { delete(m, "envelope") }, CodeInvalidRecord},
		{"room.create at seq 2", 0, func(m map[string]any) {
			m["seq"] = json.Number("2")
			m["pre_hash"] = m["hash"]
			rehash(m)
		}, CodeInvalidRecord},
		{"event of another room", 1, func(m map[string]any) {
			m["room_id"] = "otherroom"
			rehash(m)
		}, CodeInvalidRecord},
		{"redacted room.update", 4, func(m map[string]any) {
			env := m["envelope"].(map[string]any)
			m["envelope"] = map[string]any{"hash": env["hash"], "redacted": true, "type": "room.update"}
		}, CodeInvalidRecord},
		{"redacted room.join", 1, func(m map[string]any) {
			env := m["envelope"].(map[string]any)
			m["envelope"] = map[string]any{"hash": env["hash"], "redacted": true, "type": "room.join"}
		}, CodeInvalidRecord},
		{"redaction keeping content", 2, func(m map[string]any) {
			env := m["envelope"].(map[string]any)
			m["envelope"] = map[string]any{"hash": env["hash"], "redacted": true, "type": "message.create", "event": env["event"]}
		}, CodeInvalidRecord},
		{"redacted false", 2, func(m map[string]any) {
			env := m["envelope"].(map[string]any)
			m["envelope"] = map[string]any{"hash": env["hash"], "redacted": false, "type": "message.create"}
		}, CodeInvalidRecord},
		{"unknown envelope member", 2, func(m map[string]any) {
			m["envelope"].(map[string]any)["received_at"] = json.Number("1")
		}, CodeInvalidEvent},
		{"unknown event member", 2, func(m map[string]any) {
			m["envelope"].(map[string]any)["event"].(map[string]any)["thread"] = "x"
		}, CodeInvalidEvent},
		{"non-canonical hash", 2, func(m map[string]any) { m["hash"] = m["hash"].(string) + "=" }, CodeInvalidRecord},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := vectorRecordValue(t, v.Records, tc.index)
			tc.mutate(m)
			b, err := identity.Canonicalize(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseRecord(b)
			wantCode(t, err, tc.want)
		})
	}

	t.Run("strict JSON", func(t *testing.T) {
		dup := `{"room_id":"r","room_id":"r","seq":1,"pre_hash":null,"hash":"x","accepted_at":1,"envelope":{}}`
		_, err := ParseRecord([]byte(dup))
		wantCode(t, err, CodeInvalidRecord)
		_, err = ParseRecord([]byte(`{"seq": 9007199254740993}`))
		wantCode(t, err, CodeInvalidRecord)
	})

	t.Run("join requests are never records", func(t *testing.T) {
		f := newFixture(t, nil)
		req := f.joinRequest("bob", obj{"role": "speaker"})
		_, err := NewRecord(testRoom, f.room.Last.Link(), f.now, req)
		wantCode(t, err, CodeInvalidRecord)
	})
}

func TestRecordRoundTrip(t *testing.T) {
	v := loadVectors(t)
	for _, raw := range append(append([]json.RawMessage{}, v.Records...), v.RedactedRecords...) {
		rec, err := ParseRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		canon, _ := identity.CanonicalizeJSON(raw)
		if !bytes.Equal(out, canon) {
			t.Errorf("seq %d: marshal is not the canonical input\n%s\n%s", rec.Seq, out, canon)
		}
		var back Record
		if err := json.Unmarshal(out, &back); err != nil || back.Hash != rec.Hash {
			t.Fatalf("unmarshal: %v", err)
		}
	}

	t.Run("extra members are preserved", func(t *testing.T) {
		m := vectorRecordValue(t, v.Records, 2)
		m["received_by"] = "edge-1"
		b, _ := identity.Canonicalize(m)
		rec, err := ParseRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(rec)
		if !bytes.Equal(out, b) || rec.Extra["received_by"] != "edge-1" {
			t.Fatalf("extra lost: %s", out)
		}
	})
}

func TestRedact(t *testing.T) {
	v := loadVectors(t)
	recs := parseVectorRecords(t, v.Records)
	red, err := recs[2].Redact()
	if err != nil {
		t.Fatal(err)
	}
	want := parseVectorRecords(t, v.RedactedRecords)[2]
	a, _ := json.Marshal(red)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Fatalf("redaction\n%s\nwant\n%s", a, b)
	}
	if red.Type() != TypeMessageCreate || red.Actor() != "" || !red.IsRedacted() {
		t.Fatal("redacted accessors")
	}
	for _, i := range []int{0, 1, 4} {
		_, err := recs[i].Redact()
		wantCode(t, err, CodeInvalidRecord)
	}
	// A custom-type record may be redacted.
	if _, err := recs[3].Redact(); err != nil {
		t.Fatal(err)
	}
	if !Redactable("session.offer") || Redactable(TypeRoomJoin) || Redactable("Not A Type") {
		t.Fatal("Redactable")
	}
}

func TestChainErrors(t *testing.T) {
	v := loadVectors(t)
	recs := parseVectorRecords(t, v.Records)
	cases := []struct {
		name string
		from Link
		recs []*Record
		want string
	}{
		{"complete", Link{}, recs, ""},
		{"gap", Link{}, []*Record{recs[0], recs[2]}, CodeChainBroken},
		{"not from genesis", Link{}, recs[1:], CodeChainBroken},
		{"wrong anchor hash", Link{Seq: 1, Hash: recs[1].Hash}, recs[1:], CodeChainBroken},
		{"out of order", Link{}, []*Record{recs[0], recs[2], recs[1]}, CodeChainBroken},
		{"nil record", Link{}, []*Record{recs[0], nil}, CodeInvalidRecord},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := VerifyChain(v.RoomID, tc.from, tc.recs)
			wantCode(t, err, tc.want)
		})
	}
	t.Run("other room", func(t *testing.T) {
		_, err := VerifyChain("elsewhere", Link{}, recs)
		wantCode(t, err, CodeChainBroken)
		if !strings.Contains(err.Error(), "seq 1") {
			t.Errorf("error does not name the seq: %v", err)
		}
	})
}

// RecordsFromValues reads on every core what RecordFromValue reads one by
// one, errors located at each value's pointer.
func TestRecordsFromValues(t *testing.T) {
	f := newFixture(t, nil)
	values := make([]any, 64) // enough values for several workers
	for i := range values {
		values[i] = jsonValue(t, f.records[0])
		if i%5 == 3 {
			values[i] = "not a record"
		}
	}
	pointer := func(i int) string { return fmt.Sprintf("/result/%d", i) }
	recs, errs := RecordsFromValues(values, pointer)
	for i := range values {
		want, werr := RecordFromValue(values[i], pointer(i))
		if (errs[i] == nil) != (werr == nil) || (werr != nil && AsError(errs[i]).Pointer != pointer(i)) {
			t.Fatalf("value %d: err %v, want %v", i, errs[i], werr)
		}
		if werr == nil && recs[i].Hash != want.Hash {
			t.Fatalf("value %d: record %+v, want %+v", i, recs[i], want)
		}
	}
}
