package knowledge

import (
	"slices"
	"testing"

	"apconnect/host/identity"
)

func TestStatus(t *testing.T) {
	w := newWorld(t)
	obs := w.observation
	// What a hostile service might list under target={id}: another author's
	// retraction and successor, and the author's own with a lower nonce.
	foreignRetract := signed(t, "bob", TypeRetract, 30, retraction(obs.Hash))
	foreignSuccessor := signed(t, "bob", TypePublish, 31, publication(KindObservation, m{"relations": a{m{"relation": RelationSupersedes, "target": obs.Hash}}}))
	staleRetract := signed(t, "alice", TypeRetract, 1, retraction(obs.Hash))
	otherTarget := signed(t, "alice", TypeRetract, 32, retraction(w.question.Hash))
	hostile := []*identity.Envelope{foreignRetract, foreignSuccessor, staleRetract, otherTarget}

	tests := []struct {
		name     string
		links    []*identity.Envelope
		complete bool
		status   string
		retract  []string
		succ     []string
		assess   []string
	}{
		{"honest, complete", []*identity.Envelope{w.assess, w.successor, w.retract, w.retract}, true, StatusRetracted,
			[]string{w.retract.Hash}, []string{w.successor.Hash}, []string{w.assess.Hash}},
		{"hostile links ignored", hostile, true, StatusActive, nil, nil, nil},
		{"incomplete has no status", []*identity.Envelope{w.retract}, false, "", []string{w.retract.Hash}, nil, nil},
		{"nothing", nil, true, StatusActive, nil, nil, nil},
	}
	for _, tc := range tests {
		v := Status(obs.Hash, &obs.Event, tc.links, tc.complete)
		if v.Status != tc.status || v.Complete != tc.complete || !slices.Equal(v.Retractions, orEmpty(tc.retract)) ||
			!slices.Equal(v.Successors, orEmpty(tc.succ)) || !slices.Equal(v.Assessments, orEmpty(tc.assess)) {
			t.Errorf("%s: %+v", tc.name, v)
		}
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
