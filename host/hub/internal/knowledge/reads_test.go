package knowledge_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// TestQueryFilters: every filter selects exactly what rules.Matches does,
// over a corpus of every event type.
func TestQueryFilters(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	prof := digest("profile")
	q := f.publish(f.alice, "question", "Cache keys", "Which cache key is right?", obj{"tags": list{"caching"}})
	h := f.publish(f.alice, "hypothesis", "Language key", "The language belongs in the key.",
		obj{"tags": list{"caching", "i18n"}, "language": "EN", "relations": list{obj{"relation": "addresses", "target": q.ID()}},
			"profiles": list{obj{"profile": obj{"url": "https://profiles.example/p", "digest": prof}, "data": obj{}}}})
	f.clock.Advance(time.Second)
	o := f.publish(f.bob, "observation", "Measured", "Both keys hit.", obj{"language": "en-US",
		"relations": list{obj{"relation": "tests", "target": h.ID()}, obj{"relation": "derived_from", "target": q.ID()}}})
	a := f.submit(f.sign(f.bob, rules.TypeAssess, obj{"license": license, "target": h.ID(), "verdict": "supports", "summary": "Same.",
		"context": context3(), "basis": "Ran it.", "profiles": list{obj{"profile": obj{"url": "https://profiles.example/p", "digest": prof}, "data": obj{"k": 1}}}}, 0))
	r := f.submit(f.sign(f.alice, rules.TypeRetract, retraction(q.ID()), 0))
	all := []*rules.Record{q, h, o, a, r}
	from, before := t0.UnixMilli()+1, t0.UnixMilli()+2000
	for _, c := range []struct {
		name  string
		query obj
	}{
		{"none", obj{}},
		{"actor", obj{"actor": f.bob.ID}},
		{"type", obj{"type": rules.TypeAssess}},
		{"kind", obj{"kind": "hypothesis"}},
		{"tag", obj{"tag": "caching"}},
		{"tag of an assessment never", obj{"tag": "i18n", "type": rules.TypeAssess}},
		{"language folds ASCII", obj{"language": "en"}},
		{"language is exact", obj{"language": "EN-us"}},
		{"verdict", obj{"verdict": "supports"}},
		{"target: any link", obj{"target": q.ID()}},
		{"target and relation: one edge", obj{"target": q.ID(), "relation": "derived_from"}},
		{"relation alone", obj{"relation": "tests"}},
		{"relation never matches a retraction", obj{"relation": "addresses", "type": rules.TypeRetract}},
		{"profile: publications and assessments", obj{"profile": prof}},
		{"time range", obj{"created_from": from, "created_before": before}},
		{"incompatible", obj{"type": rules.TypeRetract, "kind": "question"}},
	} {
		query, err := rules.QueryFromValue(value(t, c.query))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var want []string
		for _, rec := range all {
			if query.Filters.Matches(&rec.Envelope.Event) {
				want = append(want, rec.ID())
			}
		}
		page, err := f.kc.Query(ctx, query)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := ids(page.Result); !slices.Equal(got, want) || page.NextCursor != "" || page.Checkpoint != 5 {
			t.Errorf("%s: %v (checkpoint %d, next %q), want %v", c.name, got, page.Checkpoint, page.NextCursor, want)
		}
	}
	// Not every filter is trivial: the corpus selects something for most.
	if n := len(must(f.kc.Query(ctx, &rules.Query{Filters: rules.Filters{Target: q.ID()}})).Result); n != 3 {
		t.Fatalf("target={question}: %d records, want 3", n)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestQueryPagination: pages of a traversal keep the first page's
// checkpoint and clock while new events arrive; cursors are stateless and
// bound to their query.
func TestQueryPagination(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var want []string
	for i := range 7 {
		want = append(want, f.publish(f.alice, "observation", "Obs", strings.Repeat("o", i+1), nil).ID())
	}
	f.publish(f.bob, "observation", "Bob's", "Not alice's.", nil)
	q := &rules.Query{Filters: rules.Filters{Actor: f.alice.ID}, Limit: ptr(int64(3))}
	tr, err := f.kc.Traverse(q)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var scope rules.Scope
	for i := 0; !tr.Complete(); i++ {
		page, err := tr.Next(ctx)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		if i == 0 {
			scope = page.Scope
			f.clock.Advance(time.Minute)
			f.publish(f.alice, "observation", "Late", "After the first page.", nil)
		} else if page.Scope != scope {
			t.Fatalf("page %d scope %+v, want %+v", i, page.Scope, scope)
		}
		got = append(got, ids(page.Result)...)
	}
	if !slices.Equal(got, want) || scope.Checkpoint != 8 || scope.AsOf != t0.UnixMilli() {
		t.Fatalf("traversal %v scope %+v, want %v at checkpoint 8", got, scope, want)
	}
	if cp, ok := tr.Checkpoint(); !ok || cp != 8 {
		t.Fatalf("checkpoint %d %v", cp, ok)
	}
	// Polling from the checkpoint finds the late event only.
	poll, err := f.kc.Query(ctx, &rules.Query{Filters: rules.Filters{Actor: f.alice.ID}, AfterSeq: ptr(int64(8))})
	if err != nil || len(poll.Result) != 1 || poll.Result[0].Seq != 9 {
		t.Fatalf("poll: %+v %v", poll, err)
	}
	first, err := f.kc.Query(ctx, q)
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page: %+v %v", first, err)
	}
	cursor := first.NextCursor
	parts := strings.Split(cursor, ".")
	for _, c := range []struct {
		name, query string
		want        string
	}{
		{"the cursor", "actor=" + f.alice.ID + "&limit=3&cursor=" + cursor, "ok"},
		{"another limit", "actor=" + f.alice.ID + "&limit=4&cursor=" + cursor, rules.CodeInvalidCursor},
		{"another filter", "actor=" + f.bob.ID + "&limit=3&cursor=" + cursor, rules.CodeInvalidCursor},
		{"malformed", "actor=" + f.alice.ID + "&limit=3&cursor=abc", rules.CodeInvalidCursor},
		{"beyond the sequence", "actor=" + f.alice.ID + "&limit=3&cursor=" + strings.Join([]string{"99", parts[1], "99", parts[3]}, "."), rules.CodeInvalidCursor},
		{"repeated parameter", "actor=" + f.alice.ID + "&actor=" + f.alice.ID, rules.CodeInvalidRequest},
		{"unknown parameter", "q=cache", rules.CodeInvalidRequest},
		{"signed limit", "limit=+3", rules.CodeInvalidRequest},
		{"limit 0", "limit=0", rules.CodeInvalidRequest},
		{"limit 1001", "limit=1001", rules.CodeInvalidRequest},
		{"leading zeros", "limit=0003", "ok"},
		{"after_seq beyond the checkpoint", "after_seq=10", rules.CodeInvalidRequest},
		{"empty time range", "created_from=5&created_before=5", rules.CodeInvalidRequest},
		{"bad escape", "actor=%zz", rules.CodeInvalidRequest},
	} {
		r := f.h.Do(http.MethodGet, "/v1/knowledge/query?"+c.query, nil, nil)
		got := r.ErrorCode()
		if r.Status == http.StatusOK {
			got = "ok"
		}
		if got != c.want || (got != "ok" && r.Status != http.StatusBadRequest) {
			t.Errorf("%s: %d %s, want %s", c.name, r.Status, r.Body, c.want)
		}
	}
}

// TestEventAndBatch: one record by id; batch partitions the requested ids
// in request order.
func TestEventAndBatch(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.publish(f.alice, "observation", "A", "First.", nil)
	b := f.publish(f.bob, "observation", "B", "Second.", nil)
	if got, err := f.kc.Event(ctx, b.ID()); err != nil || got.ID() != b.ID() || got.Seq != 2 {
		t.Fatalf("event: %+v %v", got, err)
	}
	for _, c := range []struct{ path, want string }{
		{"/v1/knowledge/events/" + digest("none"), identity.CodeNotFound},
		{"/v1/knowledge/events/short", rules.CodeInvalidRequest},
		{"/v1/knowledge/events/" + a.ID() + "?x=1", rules.CodeInvalidRequest},
	} {
		if r := f.h.Do(http.MethodGet, c.path, nil, nil); r.ErrorCode() != c.want {
			t.Errorf("%s: %d %s, want %s", c.path, r.Status, r.Body, c.want)
		}
	}
	x, y := digest("x"), digest("y")
	page, err := f.kc.Batch(ctx, []string{x, b.ID(), y, a.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(page.Result); !slices.Equal(got, []string{b.ID(), a.ID()}) || !slices.Equal(page.Missing, []string{x, y}) || page.Checkpoint != 2 {
		t.Fatalf("batch %v missing %v checkpoint %d", got, page.Missing, page.Checkpoint)
	}
	var hundred1 []any
	for i := range 101 {
		hundred1 = append(hundred1, digest(strings.Repeat("h", i+1)))
	}
	for _, c := range []struct {
		name string
		body string
		want string
	}{
		{"empty", `{"hashes":[]}`, rules.CodeInvalidRequest},
		{"duplicate", `{"hashes":["` + x + `","` + x + `"]}`, rules.CodeInvalidRequest},
		{"malformed id", `{"hashes":["abc"]}`, rules.CodeInvalidRequest},
		{"unknown member", `{"hashes":["` + x + `"],"more":1}`, rules.CodeInvalidRequest},
		{"duplicate member", `{"hashes":["` + x + `"],"hashes":["` + y + `"]}`, rules.CodeInvalidRequest},
		{"not JSON", `{`, rules.CodeInvalidRequest},
	} {
		if r := f.h.Do(http.MethodPost, "/v1/knowledge/batch", c.body, nil); r.ErrorCode() != c.want || r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want %s", c.name, r.Status, r.Body, c.want)
		}
	}
	if r := f.h.Do(http.MethodPost, "/v1/knowledge/batch", map[string]any{"hashes": hundred1}, nil); r.ErrorCode() != rules.CodeInvalidRequest {
		t.Errorf("101 ids: %d %s", r.Status, r.Body)
	}
}
