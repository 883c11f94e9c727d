package client

import (
	"context"
	"crypto/sha3"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/knowledge"
)

const knowledgeLicense = "https://creativecommons.org/licenses/by/4.0/"

// knowledgeEvent signs a Knowledge publication of title by s.
func knowledgeEvent(t *testing.T, s identity.Signer, nonce int64, kind, title string, extra map[string]any) *identity.Envelope {
	t.Helper()
	p := map[string]any{"license": knowledgeLicense, "kind": kind, "title": title, "statement": "About " + title + ".",
		"language": "en", "context": map[string]any{"scope": "tests", "conditions": []any{}, "limitations": []any{}}, "basis": "Written by a test."}
	for k, v := range extra {
		p[k] = v
	}
	env, err := identity.SignEvent(s, knowledge.NewEvent(knowledge.TypePublish, s.AgentID(), fixtureT0+nonce, nonce, jsonValue(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestKnowledgeAgainstHub: every call of the client against the real hub,
// submissions with a request JWT.
func TestKnowledgeAgainstHub(t *testing.T) {
	clock := hubtest.NewClock(time.UnixMilli(fixtureT0 + 1000))
	h, hc := realHub(t, hubtest.WithClock(clock))
	alice := testSigner("alice")
	kc, err := NewKnowledgeService(h.Origin(), hc, alice, Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	q := knowledgeEvent(t, alice, 1, "question", "cache keys", map[string]any{"tags": []any{"caching"}})
	rec, err := kc.Submit(ctx, q)
	if err != nil || rec.ID() != q.Hash || rec.Seq != 1 {
		t.Fatalf("submit: %+v %v", rec, err)
	}
	again, err := kc.Submit(ctx, q)
	if err != nil || again.Seq != 1 {
		t.Fatalf("resubmit: %+v %v", again, err)
	}
	var want []string
	for i := range 5 {
		e := knowledgeEvent(t, alice, int64(2+i), "hypothesis", "answer "+strings.Repeat("x", i), map[string]any{
			"relations": []any{map[string]any{"relation": "addresses", "target": q.Hash}}})
		if _, err := kc.Submit(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e.Hash)
	}
	if got, err := kc.Event(ctx, want[2]); err != nil || got.ID() != want[2] {
		t.Fatalf("event: %v", err)
	}
	tr, err := kc.Traverse(&knowledge.Query{Filters: knowledge.Filters{Target: q.Hash}, Limit: ptr(int64(2))})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	pages := 0
	for !tr.Complete() {
		p, err := tr.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range p.Result {
			got = append(got, r.ID())
		}
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("traversal %v in %d pages, want %v in 3", got, pages, want)
	}
	if _, err := tr.Next(ctx); !errors.Is(err, ErrTraversalComplete) {
		t.Fatalf("Next after the end: %v", err)
	}
	b, err := kc.Batch(ctx, []string{want[4], knowledgeDigest("none"), q.Hash})
	if err != nil || len(b.Result) != 2 || b.Result[0].ID() != want[4] || len(b.Missing) != 1 {
		t.Fatalf("batch: %+v %v", b, err)
	}
	s, err := kc.Search(ctx, map[string]any{"text": "CACHE", "mode": "lexical"})
	if err != nil || len(s.Result) != 1 || s.Result[0].Record.ID() != q.Hash || !s.Coverage.Exhaustive {
		t.Fatalf("search: %+v %v", s, err)
	}
	if _, err := kc.Search(ctx, map[string]any{"text": "cache", "mode": "semantic"}); identity.ErrorCode(err) != knowledge.CodeUnsupportedSearchMode {
		t.Fatalf("semantic search: %v", err)
	}
	if _, err := kc.Event(ctx, knowledgeDigest("none")); ErrorCode(err) != identity.CodeNotFound {
		t.Fatalf("unknown event: %v", err)
	}
}

func knowledgeDigest(s string) string {
	sum := sha3.Sum256([]byte(s))
	return identity.EncodeBase64URL(sum[:])
}

// knowledgeFake is a fake knowledge service answering with tampered pages.
func knowledgeFake(t *testing.T, doc func(origin string) map[string]any) (*fake, *KnowledgeService) {
	t.Helper()
	f := newFake(t)
	f.handle("GET /.well-known/agent-knowledge", func(w http.ResponseWriter, r *http.Request) {
		if doc == nil {
			writeError(w, 404, "not_found", "no", nil)
			return
		}
		writeJSON(w, 200, doc(f.origin))
	})
	kc, err := NewKnowledgeService(f.origin, f.httpClient(), nil, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	return f, kc
}

func rankedDoc(origin string) map[string]any {
	return knowledge.NewDiscovery(origin, knowledge.ModeLexical).Value()
}

func recordValue(t *testing.T, env *identity.Envelope, seq int64) map[string]any {
	return jsonValue(t, knowledge.NewRecord(env, fixtureT0, seq).Value()).(map[string]any)
}

// TestKnowledgeRefusesBadAnswers: every answer that breaks the protocol is
// refused with invalid_response (or invalid_discovery), as the SDK's
// client refuses it.
func TestKnowledgeRefusesBadAnswers(t *testing.T) {
	alice := testSigner("alice")
	a := knowledgeEvent(t, alice, 1, "observation", "cache", nil)
	b := knowledgeEvent(t, alice, 2, "question", "other", nil)
	page := func(origin string, checkpoint int64, recs ...map[string]any) map[string]any {
		res := []any{}
		for _, r := range recs {
			res = append(res, r)
		}
		return map[string]any{"result": res, "service": origin, "checkpoint": checkpoint, "as_of": fixtureT0}
	}
	type call func(ctx context.Context, kc *KnowledgeService) error
	query := func(q *knowledge.Query) call {
		return func(ctx context.Context, kc *KnowledgeService) error { _, err := kc.Query(ctx, q); return err }
	}
	search := func(r map[string]any) call {
		return func(ctx context.Context, kc *KnowledgeService) error { _, err := kc.Search(ctx, r); return err }
	}
	for _, c := range []struct {
		name    string
		doc     func(string) map[string]any
		pattern string
		answer  func(t *testing.T, origin string) (int, any)
		call    call
		want    string
	}{
		{"no discovery document", nil, "", nil, query(nil), identity.CodeNotFound},
		{"discovery of another service", func(string) map[string]any { return rankedDoc("https://other.example") }, "", nil, query(nil), knowledge.CodeInvalidDiscovery},
		{"endpoint on another origin", func(o string) map[string]any {
			d := rankedDoc(o)
			d["endpoints"].(map[string]any)["query"] = "https://other.example/q"
			return d
		}, "", nil, query(nil), knowledge.CodeInvalidDiscovery},
		{"query: another service", rankedDoc, "GET /v1/knowledge/query", func(t *testing.T, o string) (int, any) {
			return 200, page("https://other.example", 1, recordValue(t, a, 1))
		}, query(nil), knowledge.CodeInvalidResponse},
		{"query: beyond the checkpoint", rankedDoc, "GET /v1/knowledge/query", func(t *testing.T, o string) (int, any) {
			return 200, page(o, 1, recordValue(t, a, 2))
		}, query(nil), knowledge.CodeInvalidResponse},
		{"query: outside the filters", rankedDoc, "GET /v1/knowledge/query", func(t *testing.T, o string) (int, any) {
			return 200, page(o, 2, recordValue(t, a, 2))
		}, query(&knowledge.Query{Filters: knowledge.Filters{Kind: "question"}}), knowledge.CodeInvalidResponse},
		{"query: seq order", rankedDoc, "GET /v1/knowledge/query", func(t *testing.T, o string) (int, any) {
			return 200, page(o, 3, recordValue(t, a, 2), recordValue(t, b, 1))
		}, query(nil), knowledge.CodeInvalidResponse},
		{"query: tampered record", rankedDoc, "GET /v1/knowledge/query", func(t *testing.T, o string) (int, any) {
			r := recordValue(t, a, 1)
			r["envelope"].(map[string]any)["event"].(map[string]any)["nonce"] = 7
			return 200, page(o, 1, r)
		}, query(nil), knowledge.CodeInvalidResponse},
		{"query: 201", rankedDoc, "GET /v1/knowledge/query", func(t *testing.T, o string) (int, any) {
			return 201, page(o, 0)
		}, query(nil), knowledge.CodeInvalidResponse},
		{"event: another event", rankedDoc, "GET /v1/knowledge/events/{id}", func(t *testing.T, o string) (int, any) {
			return 200, recordValue(t, b, 1)
		}, func(ctx context.Context, kc *KnowledgeService) error { _, err := kc.Event(ctx, a.Hash); return err }, knowledge.CodeInvalidResponse},
		{"submit: another record", rankedDoc, "POST /v1/knowledge/events", func(t *testing.T, o string) (int, any) {
			return 200, recordValue(t, b, 1)
		}, func(ctx context.Context, kc *KnowledgeService) error { _, err := kc.Submit(ctx, a); return err }, knowledge.CodeInvalidResponse},
		{"batch: not a partition", rankedDoc, "POST /v1/knowledge/batch", func(t *testing.T, o string) (int, any) {
			p := page(o, 2, recordValue(t, b, 2))
			p["missing"] = []any{}
			return 200, p
		}, func(ctx context.Context, kc *KnowledgeService) error {
			_, err := kc.Batch(ctx, []string{a.Hash, b.Hash})
			return err
		}, knowledge.CodeInvalidResponse},
		{"search: a hit without the text", rankedDoc, "POST /v1/knowledge/search", func(t *testing.T, o string) (int, any) {
			p := page(o, 2)
			p["result"] = []any{map[string]any{"record": recordValue(t, b, 2)}}
			p["ranking"] = map[string]any{"mode": "lexical", "id": "x"}
			p["coverage"] = map[string]any{"exhaustive": true, "reasons": []any{}}
			return 200, p
		}, search(map[string]any{"text": "cache", "mode": "lexical"}), knowledge.CodeInvalidResponse},
		{"search: another mode", rankedDoc, "POST /v1/knowledge/search", func(t *testing.T, o string) (int, any) {
			p := page(o, 2)
			p["ranking"] = map[string]any{"mode": "semantic", "id": "x"}
			p["coverage"] = map[string]any{"exhaustive": false, "reasons": []any{"approximate"}}
			return 200, p
		}, search(map[string]any{"text": "cache", "mode": "lexical"}), knowledge.CodeInvalidResponse},
		{"search without ranked search", func(o string) map[string]any { return knowledge.NewDiscovery(o).Value() }, "", nil,
			search(map[string]any{"text": "cache", "mode": "lexical"}), knowledge.CodeUnsupportedSearchMode},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, kc := knowledgeFake(t, c.doc)
			if c.pattern != "" {
				f.handle(c.pattern, func(w http.ResponseWriter, r *http.Request) {
					status, body := c.answer(t, f.origin)
					writeJSON(w, status, body)
				})
			}
			err := c.call(ctxT(t), kc)
			if got := identity.ErrorCode(err); got != c.want && ErrorCode(err) != c.want {
				t.Fatalf("%v, want %s", err, c.want)
			}
			if c.want == knowledge.CodeUnsupportedSearchMode && f.count("/v1/knowledge/search") != 0 {
				t.Fatal("a search was sent to a service without ranked search")
			}
		})
	}
}

// TestKnowledgeNoRedirect: a redirect is refused, never followed.
func TestKnowledgeNoRedirect(t *testing.T) {
	f, kc := knowledgeFake(t, rankedDoc)
	f.handle("GET /v1/knowledge/query", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, f.origin+"/elsewhere", http.StatusFound)
	})
	_, err := kc.Query(ctxT(t), nil)
	if !errors.Is(err, ErrRedirect) || f.count("/elsewhere") != 0 {
		t.Fatalf("redirect: %v", err)
	}
}

// TestKnowledgeTraversalScope: a page whose scope differs from the first
// page's is refused.
func TestKnowledgeTraversalScope(t *testing.T) {
	alice := testSigner("alice")
	a := knowledgeEvent(t, alice, 1, "observation", "one", nil)
	b := knowledgeEvent(t, alice, 2, "observation", "two", nil)
	f, kc := knowledgeFake(t, rankedDoc)
	f.handle("GET /v1/knowledge/query", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			writeJSON(w, 200, map[string]any{"result": []any{recordValue(t, a, 1)}, "service": f.origin, "checkpoint": 2, "as_of": fixtureT0,
				"next_cursor": "2.1.1.x"})
			return
		}
		writeJSON(w, 200, map[string]any{"result": []any{recordValue(t, b, 2)}, "service": f.origin, "checkpoint": 3, "as_of": fixtureT0})
	})
	tr, err := kc.Traverse(&knowledge.Query{Limit: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(ctxT(t)); identity.ErrorCode(err) != knowledge.CodeInvalidResponse {
		t.Fatalf("second page with another checkpoint: %v", err)
	}
	if _, err := kc.Traverse(&knowledge.Query{Cursor: "1.1.1.x"}); identity.ErrorCode(err) != knowledge.CodeInvalidRequest {
		t.Fatalf("traversal starting with a cursor: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
