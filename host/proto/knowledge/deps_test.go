package knowledge

import (
	"slices"
	"testing"

	"apconnect/host/identity"
)

func TestDependencies(t *testing.T) {
	x, y := digestOf("x"), digestOf("y")
	pub := signed(t, "a", TypePublish, 1, publication(KindSynthesis, m{"relations": a{
		m{"relation": RelationExtends, "target": y}, m{"relation": RelationSupports, "target": x},
		m{"relation": RelationDerivedFrom, "target": y}}}))
	want := []string{x, y}
	slices.Sort(want)
	if got := Dependencies(&pub.Event); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := Dependencies(&signed(t, "a", TypeRetract, 2, retraction(x)).Event); !slices.Equal(got, []string{x}) {
		t.Fatalf("retraction: %v", got)
	}
	if got := Dependencies(&signed(t, "a", TypePublish, 3, publication(KindQuestion, nil)).Event); len(got) != 0 {
		t.Fatalf("no relations: %v", got)
	}
}

func TestCheckDependencies(t *testing.T) {
	w := newWorld(t)
	held := lookupOf(w.all()...)
	rel := func(name string, n int64, relation string, target *identity.Envelope) *identity.Envelope {
		kind := KindInference
		if relation == RelationContains {
			kind = KindCollection
		}
		return signed(t, name, TypePublish, n, publication(kind, m{"relations": a{m{"relation": relation, "target": target.Hash}}}))
	}
	tests := []struct {
		name string
		env  *identity.Envelope
		want string
		ptr  string
	}{
		{"addresses a question", rel("bob", 20, RelationAddresses, w.question), "ok", ""},
		{"addresses an observation", rel("bob", 20, RelationAddresses, w.observation), CodeInvalidTarget, "/event/payload/relations/0/target"},
		{"tests a hypothesis", rel("bob", 20, RelationTests, w.hypothesis), "ok", ""},
		{"tests a question", rel("bob", 20, RelationTests, w.question), CodeInvalidTarget, "/event/payload/relations/0/target"},
		{"supports an assessment", rel("bob", 20, RelationSupports, w.assess), "ok", ""},
		{"extends an assessment", rel("bob", 20, RelationExtends, w.assess), CodeInvalidTarget, "/event/payload/relations/0/target"},
		{"derived_from a retraction", rel("bob", 20, RelationDerivedFrom, w.retract), CodeInvalidTarget, "/event/payload/relations/0/target"},
		{"contains another author's", rel("alice", 20, RelationContains, w.bobObs), "ok", ""},
		{"supersedes own, higher nonce", rel("alice", 20, RelationSupersedes, w.observation), "ok", ""},
		{"supersedes own, equal nonce", rel("alice", 3, RelationSupersedes, w.observation), CodeInvalidTarget, "/event/payload/relations/0/target"},
		{"supersedes another author's", rel("bob", 20, RelationSupersedes, w.observation), CodeInvalidTarget, "/event/payload/relations/0/target"},
		{"assess an assessment", signed(t, "alice", TypeAssess, 20, assessment(w.assess.Hash, VerdictSupports, nil)), CodeInvalidTarget, "/event/payload/target"},
		{"retract own assessment", signed(t, "bob", TypeRetract, 20, retraction(w.assess.Hash)), "ok", ""},
		{"retract another author's", signed(t, "bob", TypeRetract, 20, retraction(w.observation.Hash)), CodeInvalidTarget, "/event/payload/target"},
		{"retract with a lower nonce", signed(t, "alice", TypeRetract, 2, retraction(w.observation.Hash)), CodeInvalidTarget, "/event/payload/target"},
		{"retract a retraction", signed(t, "alice", TypeRetract, 20, retraction(w.retract.Hash)), CodeInvalidTarget, "/event/payload/target"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDependencies(&tc.env.Event, held)
			if code(err) != tc.want || (err != nil && pointer(err) != tc.ptr) {
				t.Fatalf("got %v at %q, want %s at %q", err, pointer(err), tc.want, tc.ptr)
			}
		})
	}
}

// missing_dependency lists every missing id, sorted and distinct, before
// any target rule is looked at.
func TestCheckDependenciesMissing(t *testing.T) {
	w := newWorld(t)
	ids := []string{digestOf("m1"), digestOf("m2"), digestOf("m3")}
	rels := a{m{"relation": RelationTests, "target": w.question.Hash}} // would be invalid_target
	for i := len(ids) - 1; i >= 0; i-- {
		rels = append(rels, m{"relation": RelationExtends, "target": ids[i]}, m{"relation": RelationSupports, "target": ids[i]})
	}
	env := signed(t, "alice", TypePublish, 20, publication(KindSynthesis, m{"relations": rels}))
	err := CheckDependencies(&env.Event, lookupOf(w.all()...))
	e, ok := err.(*identity.Error)
	if !ok || e.Code != CodeMissingDependency {
		t.Fatalf("got %v", err)
	}
	slices.Sort(ids)
	got, _ := e.Data["missing"].([]any)
	if len(got) != len(ids) {
		t.Fatalf("missing %v, want %v", got, ids)
	}
	for i := range ids {
		if got[i] != ids[i] {
			t.Fatalf("missing %v, want %v", got, ids)
		}
	}
}
