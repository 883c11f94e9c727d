package knowledge

import (
	"testing"

	"apconnect/host/identity"
)

// pageValue is a page as the client receives it: the service's Value,
// serialized and strictly parsed.
func pageValue(t testing.TB, v map[string]any) any {
	t.Helper()
	b, err := identity.Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := identity.ParseStrict(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// servePage answers q as a service built on this package does.
func servePage(t testing.TB, recs []*Record, q *Query, now int64) *QueryPage {
	t.Helper()
	win, err := q.Window(int64(len(recs)), now)
	if err != nil {
		t.Fatal(err)
	}
	res, next := win.Page(recs, &q.Filters)
	return &QueryPage{Scope: win.Scope(service), Result: res, NextCursor: next}
}

// The client's PageTracker accepts what the service's Window produces, and
// refuses every way a page can go wrong.
func TestPageTracker(t *testing.T) {
	w := newWorld(t)
	recs := records(w.all())
	two := int64(2)
	q := &Query{Limit: &two}
	var pages []*QueryPage
	var reqs []*Query
	for cur := q; ; {
		p := servePage(t, recs, cur, tNow)
		pages, reqs = append(pages, p), append(reqs, cur)
		if p.NextCursor == "" {
			break
		}
		cur = cur.WithCursor(p.NextCursor)
	}
	tr, _ := NewPageTracker(service)
	for i, p := range pages {
		if _, err := tr.Accept(reqs[i], pageValue(t, p.Value())); err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	if cp, ok := tr.Checkpoint(); !ok || !tr.Complete() || cp != int64(len(recs)) {
		t.Fatalf("checkpoint %d %v", cp, ok)
	}

	run := func(name string, reqs []*Query, pages []map[string]any) {
		t.Helper()
		tr, _ := NewPageTracker(service)
		var err error
		for i := range pages {
			if _, err = tr.Accept(reqs[i], pageValue(t, pages[i])); err != nil {
				break
			}
		}
		if code(err) != CodeInvalidResponse {
			t.Errorf("%s: got %v", name, err)
		}
	}
	v := func(i int) map[string]any { return pages[i].Value() }
	run("starts with a cursor", reqs[1:2], []map[string]any{v(1)})
	run("repeats a page", []*Query{reqs[0], reqs[1], reqs[1]}, []map[string]any{v(0), v(1), v(1)})
	run("skips a page", []*Query{reqs[0], reqs[2]}, []map[string]any{v(0), v(2)})
	changed := v(1)
	changed["as_of"] = tNow + 1
	run("scope changed", reqs[:2], []map[string]any{v(0), changed})
	three := int64(3)
	run("request changed", []*Query{reqs[0], {Limit: &three, Cursor: reqs[1].Cursor}}, []map[string]any{v(0), v(1)})
	other := v(0)
	other["service"] = "https://other.example"
	run("other service", reqs[:1], []map[string]any{other})
	over := v(0)
	over["checkpoint"] = int64(1)
	run("seq beyond checkpoint", reqs[:1], []map[string]any{over})
	swapped := v(0)
	res := swapped["result"].([]any)
	res[0], res[1] = res[1], res[0]
	run("out of order", reqs[:1], []map[string]any{swapped})
	assessOnly := &Query{Filters: Filters{Type: TypeAssess}}
	run("filter breach", []*Query{assessOnly}, []map[string]any{v(0)})
}

func TestValidateBatchResponse(t *testing.T) {
	w := newWorld(t)
	recs := records(w.all())
	gone := digestOf("gone")
	scope := Scope{Service: service, Checkpoint: int64(len(recs)), AsOf: tNow}
	tests := []struct {
		name      string
		requested []string
		page      *BatchPage
		want      string
	}{
		{"partition", []string{recs[0].ID(), gone, recs[2].ID()}, &BatchPage{scope, []*Record{recs[0], recs[2]}, []string{gone}}, "ok"},
		{"out of order", []string{recs[0].ID(), recs[2].ID()}, &BatchPage{scope, []*Record{recs[2], recs[0]}, []string{}}, CodeInvalidResponse},
		{"incomplete", []string{recs[0].ID(), gone}, &BatchPage{scope, []*Record{recs[0]}, []string{}}, CodeInvalidResponse},
		{"both lists", []string{recs[0].ID()}, &BatchPage{scope, []*Record{recs[0]}, []string{recs[0].ID()}}, CodeInvalidResponse},
		{"unrequested", []string{recs[0].ID()}, &BatchPage{scope, []*Record{recs[0], recs[1]}, []string{}}, CodeInvalidResponse},
	}
	for _, tc := range tests {
		if _, err := ValidateBatchResponse(pageValue(t, tc.page.Value()), tc.requested, service); code(err) != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
}

func TestValidateSearchResponse(t *testing.T) {
	w := newWorld(t)
	recs := records(w.all())
	scope := Scope{Service: service, Checkpoint: int64(len(recs)), AsOf: tNow}
	req, err := ParseSearchRequest(val(t, m{"text": "statement", "mode": ModeLexical, "limit": 2}), SearchModes())
	if err != nil {
		t.Fatal(err)
	}
	lex, ex := Ranking{Mode: ModeLexical, ID: "bm25"}, Coverage{Exhaustive: false, Reasons: []string{"candidate_limit"}}
	tests := []struct {
		name string
		page *SearchPage
		want string
	}{
		{"hits", &SearchPage{scope, []SearchHit{{recs[0], "title"}, {recs[1], ""}}, lex, ex}, "ok"},
		{"over the limit", &SearchPage{scope, []SearchHit{{recs[0], ""}, {recs[1], ""}, {recs[2], ""}}, lex, ex}, CodeInvalidResponse},
		{"text not matched", &SearchPage{scope, []SearchHit{{recs[4], ""}}, lex, ex}, CodeInvalidResponse},
		{"mode substituted", &SearchPage{scope, nil, Ranking{Mode: ModeSemantic, ID: "v"}, Coverage{Reasons: []string{"approximate"}}}, CodeInvalidResponse},
		{"exhaustive with reasons", &SearchPage{scope, nil, lex, Coverage{Exhaustive: true, Reasons: []string{"timeout"}}}, CodeInvalidResponse},
	}
	for _, tc := range tests {
		got, err := ValidateSearchResponse(pageValue(t, tc.page.Value()), req, service)
		if code(err) != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
		if err == nil && (len(got.Result) != len(tc.page.Result) || got.Result[0].Explanation != tc.page.Result[0].Explanation) {
			t.Errorf("%s: read back %+v", tc.name, got)
		}
	}
}
