package knowledge

import (
	"net/url"
	"testing"

	"apconnect/host/identity"
)

func TestParseQuery(t *testing.T) {
	alice := signerOf("alice").AgentID()
	tests := []struct {
		name   string
		params [][2]string
		want   string
	}{
		{"empty", nil, "ok"},
		{"filters", [][2]string{{"actor", alice}, {"type", TypeAssess}, {"verdict", VerdictApplied}, {"limit", "0007"}}, "ok"},
		{"repeated", [][2]string{{"tag", "a"}, {"tag", "b"}}, CodeInvalidRequest},
		{"unknown q", [][2]string{{"q", "text"}}, CodeInvalidRequest},
		{"sign", [][2]string{{"limit", "+5"}}, CodeInvalidRequest},
		{"empty integer", [][2]string{{"after_seq", ""}}, CodeInvalidRequest},
		{"fullwidth digit", [][2]string{{"limit", "５"}}, CodeInvalidRequest},
		{"limit zero", [][2]string{{"limit", "0"}}, CodeInvalidRequest},
		{"limit 1001", [][2]string{{"limit", "1001"}}, CodeInvalidRequest},
		{"17 digits", [][2]string{{"after_seq", "10000000000000000"}}, CodeInvalidRequest},
		{"beyond 2^53", [][2]string{{"after_seq", "9007199254740992"}}, CodeInvalidRequest},
		{"leading zeros", [][2]string{{"after_seq", "000000000000000000009007199254740991"}}, "ok"},
		{"empty range", [][2]string{{"created_from", "5"}, {"created_before", "5"}}, CodeInvalidRequest},
		{"actor non-canonical", [][2]string{{"actor", alice[:len(alice)-1] + "h"}}, CodeInvalidRequest},
		{"target short", [][2]string{{"target", "abc"}}, CodeInvalidRequest},
		{"empty cursor", [][2]string{{"cursor", ""}}, CodeInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := ParseQuery(tc.params)
			if code(err) != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
			if err != nil {
				return
			}
			// What a client sends reads back as the same query.
			back, err := ParseQueryValues(q.Params())
			if err != nil || back.Digest() != q.Digest() || len(back.Value()) != len(q.Value()) {
				t.Fatalf("round trip %v -> %v: %v", q.Value(), back.Value(), err)
			}
		})
	}
	if _, err := ParseQueryValues(url.Values{"limit": {"1", "2"}}); code(err) != CodeInvalidRequest {
		t.Fatalf("repeated in url.Values: %v", err)
	}
}

func TestMatches(t *testing.T) {
	w := newWorld(t)
	alice := signerOf("alice").AgentID()
	from, before := t0+3, t0+5
	tests := []struct {
		name  string
		f     Filters
		match []*identity.Envelope
	}{
		{"none", Filters{}, w.all()},
		{"actor", Filters{Actor: alice}, []*identity.Envelope{w.question, w.hypothesis, w.observation, w.successor, w.retract}},
		{"type", Filters{Type: TypeAssess}, []*identity.Envelope{w.assess}},
		{"kind", Filters{Kind: KindQuestion}, []*identity.Envelope{w.question}},
		{"tag", Filters{Tag: "physics"}, []*identity.Envelope{w.observation}},
		{"language ASCII case", Filters{Language: "en-GB"}, []*identity.Envelope{w.bobObs}},
		{"verdict", Filters{Verdict: VerdictChallenges}, []*identity.Envelope{w.assess}},
		{"time range", Filters{CreatedFrom: &from, CreatedBefore: &before}, []*identity.Envelope{w.observation, w.bobObs}},
		{"target, any link", Filters{Target: w.observation.Hash}, []*identity.Envelope{w.assess, w.successor, w.retract}},
		{"target and relation", Filters{Target: w.observation.Hash, Relation: RelationSupersedes}, []*identity.Envelope{w.successor}},
		{"relation alone", Filters{Relation: RelationSupersedes}, []*identity.Envelope{w.successor}},
		{"target and another relation", Filters{Target: w.observation.Hash, Relation: RelationExtends}, nil},
		{"profile", Filters{Profile: digestOf("p")}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, env := range w.all() {
				want := false
				for _, e := range tc.match {
					want = want || e == env
				}
				if got := tc.f.Matches(&env.Event); got != want {
					t.Errorf("%s (%s): %v, want %v", env.Event.Type, env.Hash[:8], got, want)
				}
			}
		})
	}
}

func TestParseBatchRequest(t *testing.T) {
	x, y := digestOf("x"), digestOf("y")
	ids, err := ParseBatchRequest(val(t, m{"hashes": a{y, x}}))
	if err != nil || len(ids) != 2 || ids[0] != y {
		t.Fatalf("%v %v", ids, err)
	}
	for _, bad := range []any{m{"hashes": a{}}, m{"hashes": a{x, x}}, m{"hashes": a{x[:42] + "h"}}, m{}, a{}} {
		if _, err := ParseBatchRequest(val(t, bad)); code(err) != CodeInvalidRequest {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

func TestParseReadJSON(t *testing.T) {
	if _, err := ParseReadJSON([]byte(`{"hashes":["a"]}`)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":9007199254740993}`, `[1,]`, ``} {
		if _, err := ParseReadJSON([]byte(bad)); code(err) != CodeInvalidRequest {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
