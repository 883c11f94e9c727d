package knowledge

import (
	"encoding/json"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// CheckSubmission runs the SDK store's order: the clock, then the
// dependencies, then the size.
func TestCheckSubmission(t *testing.T) {
	w := newWorld(t)
	held := lookupOf(w.question, w.observation)
	future := func(ms int64, payload m) *identity.Envelope {
		env := signed(t, "alice", TypePublish, 20, payload)
		env.Event.CreatedAt = tNow + ms // CheckSubmission reads the verified event only
		return env
	}
	missingDep := publication(KindInference, m{"relations": a{m{"relation": RelationExtends, "target": digestOf("none")}}})
	huge := publication(KindInference, m{"statement": strings.Repeat("x", DefaultMaxEnvelopeBytes)})
	hugeMissing := publication(KindInference, m{"statement": strings.Repeat("x", DefaultMaxEnvelopeBytes),
		"relations": a{m{"relation": RelationExtends, "target": digestOf("none")}}})
	tests := []struct {
		name string
		env  *identity.Envelope
		lim  Limits
		now  int64
		want string
	}{
		{"accepted", future(0, publication(KindObservation, nil)), DefaultLimits, tNow, "ok"},
		{"at the skew bound", future(DefaultFutureSkewMS, publication(KindObservation, nil)), DefaultLimits, tNow, "ok"},
		{"past the skew bound", future(DefaultFutureSkewMS+1, publication(KindObservation, nil)), DefaultLimits, tNow, CodeTimestampOutOfWindow},
		{"long ago", future(-tNow, publication(KindObservation, nil)), DefaultLimits, tNow, "ok"},
		{"future before missing", future(DefaultFutureSkewMS+1, missingDep), DefaultLimits, tNow, CodeTimestampOutOfWindow},
		{"missing", future(0, missingDep), DefaultLimits, tNow, CodeMissingDependency},
		{"missing before size", future(0, hugeMissing), DefaultLimits, tNow, CodeMissingDependency},
		{"too large", future(0, huge), DefaultLimits, tNow, CodePayloadTooLarge},
		{"a small limit", future(0, publication(KindObservation, nil)), Limits{FutureSkewMS: 0, MaxEnvelopeBytes: 100}, tNow, CodePayloadTooLarge},
		{"a negative clock", future(0, publication(KindObservation, nil)), DefaultLimits, -1, CodeInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckSubmission(tc.env, tc.now, held, tc.lim); code(err) != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestRecordRoundTrip(t *testing.T) {
	w := newWorld(t)
	r := NewRecord(w.assess, tNow, 7)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ValidateRecord(val(t, json.RawMessage(b)), w.assess.Hash)
	if err != nil || back.Seq != 7 || back.AcceptedAt != tNow || back.ID() != w.assess.Hash {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	item := back.Item()
	if item.ID != w.assess.Hash || item.Type != TypeAssess || item.Actor != w.assess.Event.Actor || item.Seq != 7 {
		t.Fatalf("item %+v", item)
	}
	tests := []struct {
		name     string
		fn       func(m)
		expected string
	}{
		{"other id asked", func(m) {}, w.question.Hash},
		{"seq zero", func(r m) { r["seq"] = json.Number("0") }, ""},
		{"bad envelope", func(r m) { r["envelope"].(m)["signature"] = w.question.Signature }, ""},
		{"no accepted_at", func(r m) { delete(r, "accepted_at") }, ""},
	}
	for _, tc := range tests {
		if _, err := ValidateRecord(mutate(t, r.Value(), tc.fn), tc.expected); code(err) != CodeInvalidResponse {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
	if _, err := ValidateRecord(mutate(t, r.Value(), func(r m) { r["note"] = "x" }), ""); err != nil {
		t.Errorf("extra member: %v", err)
	}
}
