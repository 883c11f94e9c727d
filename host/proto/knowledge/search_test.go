package knowledge

import (
	"slices"
	"strings"
	"testing"
)

func TestTextTerms(t *testing.T) {
	tests := []struct {
		text    string
		lexical bool
		want    []string // nil: invalid_request
	}{
		{"Hello World", true, []string{"hello", "world"}},
		{"  a\t\nb\v\fc\r ", true, []string{"a", "b", "c"}},
		{"a\u00a0b a\u3000b", true, []string{"a\u00a0b", "a\u3000b"}},               // Unicode space does not split
		{"ÀÉÎ STRASSE İ K\u212a", true, []string{"ÀÉÎ", "strasse", "İ", "k\u212a"}}, // ASCII folding only
		{"x", true, []string{"x"}},
		{"", true, nil},
		{"   ", true, nil},
		{strings.Repeat("t ", 16), true, slices.Repeat([]string{"t"}, 16)},
		{strings.Repeat("t ", 17), true, nil},
		{strings.Repeat("t ", 17), false, slices.Repeat([]string{"t"}, 17)},
		{strings.Repeat("é", 1024), true, []string{strings.Repeat("é", 1024)}},
		{strings.Repeat("é", 1025), false, nil},
		{"\xff", true, nil},
	}
	for _, tc := range tests {
		got, err := TextTerms(tc.text, tc.lexical)
		if tc.want == nil {
			if code(err) != CodeInvalidRequest {
				t.Errorf("%q: got %q, %v; want invalid_request", tc.text, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.text, got, err, tc.want)
		}
	}
}

func TestTextMatches(t *testing.T) {
	pub := signed(t, "alice", TypePublish, 1, publication(KindObservation, m{"title": "Ünïcödé TITLE",
		"context": m{"scope": "Scope", "conditions": a{"COND"}, "limitations": a{"limit"}}}))
	ret := signed(t, "alice", TypeRetract, 2, retraction(pub.Hash))
	tests := []struct {
		env  bool // true: the publication, false: the retraction
		text string
		want bool
	}{
		{true, "title", true},
		{true, "TITLE Ünïcödé", true},
		{true, "ünïcödé", false}, // non-ASCII letters are not folded
		{true, "ÜNÏCÖDÉ", false},
		{true, "tit statement", true},
		{true, "cond limit scope", true},
		{true, "measured twice", true},
		{true, "title missing", false},
		{false, "superseded", true},
		{false, "title", false},
	}
	for _, tc := range tests {
		env := pub
		if !tc.env {
			env = ret
		}
		if got, err := TextMatches(&env.Event, tc.text); err != nil || got != tc.want {
			t.Errorf("%s %q: %v, %v; want %v", env.Event.Type, tc.text, got, err, tc.want)
		}
	}
	if _, err := TextMatches(&pub.Event, ""); code(err) != CodeInvalidRequest {
		t.Errorf("empty text: %v", err)
	}
}

func TestParseSearchRequest(t *testing.T) {
	lexical := []string{ModeLexical}
	tests := []struct {
		name  string
		req   any
		modes []string
		want  string
	}{
		{"lexical", m{"text": "x", "mode": ModeLexical}, lexical, "ok"},
		{"filters and limit", m{"text": "x", "mode": ModeLexical, "filters": m{"kind": KindQuestion}, "limit": 100}, lexical, "ok"},
		{"semantic not advertised", m{"text": "x", "mode": ModeSemantic}, lexical, CodeUnsupportedSearchMode},
		{"unknown mode even if listed", m{"text": "x", "mode": "fuzzy"}, []string{ModeLexical, "fuzzy"}, CodeUnsupportedSearchMode},
		{"mode not a string", m{"text": "x", "mode": 5}, lexical, CodeInvalidRequest},
		{"no mode", m{"text": "x"}, lexical, CodeInvalidRequest},
		{"unadvertised before malformed", m{"mode": ModeHybrid, "limit": 0}, lexical, CodeUnsupportedSearchMode},
		{"17 lexical terms", m{"text": strings.Repeat("t ", 17), "mode": ModeLexical}, lexical, CodeInvalidRequest},
		{"17 semantic terms", m{"text": strings.Repeat("t ", 17), "mode": ModeSemantic}, []string{ModeSemantic}, "ok"},
		{"limit 101", m{"text": "x", "mode": ModeLexical, "limit": 101}, lexical, CodeInvalidRequest},
		{"read parameter in filters", m{"text": "x", "mode": ModeLexical, "filters": m{"after_seq": 1}}, lexical, CodeInvalidRequest},
		{"empty time range", m{"text": "x", "mode": ModeLexical, "filters": m{"created_from": 5, "created_before": 5}}, lexical, CodeInvalidRequest},
		{"not an object", "x", lexical, CodeInvalidRequest},
	}
	for _, tc := range tests {
		r, err := ParseSearchRequest(val(t, tc.req), tc.modes)
		if code(err) != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
			continue
		}
		if err == nil {
			back, err := ParseSearchRequest(val(t, r.Value()), tc.modes)
			if err != nil || back.EffectiveLimit() != r.EffectiveLimit() || back.HasFilters != r.HasFilters {
				t.Errorf("%s: round trip %v: %v", tc.name, r.Value(), err)
			}
		}
	}
}

func TestCheckSelection(t *testing.T) {
	w := newWorld(t)
	req, err := ParseSearchRequest(val(t, m{"text": "statement", "mode": ModeLexical}), SearchModes())
	if err != nil {
		t.Fatal(err)
	}
	eligible := map[string]bool{}
	var ids []string
	for _, e := range w.all() {
		if req.Eligible(&e.Event) {
			eligible[e.Hash] = true
			ids = append(ids, e.Hash)
		}
	}
	if len(ids) != 5 {
		t.Fatalf("fixture: %d eligible", len(ids))
	}
	lex := Ranking{Mode: ModeLexical, ID: "bm25"}
	full, partial := Coverage{Exhaustive: true, Reasons: []string{}}, Coverage{Reasons: []string{"candidate_limit"}}
	tests := []struct {
		name  string
		cands []string
		rank  Ranking
		cov   Coverage
		want  string
	}{
		{"every match, exhaustive", ids, lex, full, "ok"},
		{"a subset, exhaustive", ids[1:], lex, full, CodeInvalidResponse},
		{"a subset, partial", ids[1:], lex, partial, "ok"},
		{"a non-match", append(slices.Clone(ids[:1]), w.assess.Hash), lex, partial, CodeInvalidResponse},
		{"repeated", append(slices.Clone(ids[:1]), ids[0]), lex, partial, CodeInvalidResponse},
		{"other ranking mode", ids, Ranking{Mode: ModeSemantic, ID: "v"}, Coverage{Reasons: []string{"approximate"}}, CodeInvalidResponse},
		{"partial without reasons", ids, lex, Coverage{}, CodeInvalidResponse},
		{"ranking without id", ids, Ranking{Mode: ModeLexical}, full, CodeInvalidResponse},
	}
	for _, tc := range tests {
		if err := CheckSelection(req, eligible, tc.cands, tc.rank, tc.cov); code(err) != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
}
