package knowledge_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"apconnect/host/hub"
	"apconnect/host/hub/internal/knowledge"
	rules "apconnect/host/proto/knowledge"
)

// searchCorpus publishes a fixed corpus and returns its records by name.
func searchCorpus(f *fixture) map[string]*rules.Record {
	recs := map[string]*rules.Record{}
	pub := func(name, title, statement string, extra obj) {
		recs[name] = f.publish(f.alice, "observation", title, statement, extra)
	}
	pub("cache", "Cache keys need the language", "A cache keyed by user id alone returns the first language. Cache the language too.", nil)
	pub("cache-once", "Rendering is slow", "The renderer spends most time in templates; a cache helps a little.", nil)
	pub("lock", "Lock contention", "The room lock is held across the commit.", obj{"context": obj{"scope": "SQLite WAL writer", "conditions": list{"cache disabled"}, "limitations": list{}}})
	pub("zh", "语言缓存", "缓存键必须包含语言。", nil)
	pub("upper", "UPPER CASE TITLE", "SHOUTING ABOUT CACHES", nil)
	pub("go", "Go is fast", "go go go", nil)
	pub("nul", "Zero bytes", "before\u0000after", nil)
	recs["assess"] = f.submit(f.sign(f.bob, rules.TypeAssess, obj{"license": license, "target": recs["cache"].ID(), "verdict": "supports",
		"summary": "The cache language bug reproduces.", "context": context3(), "basis": "Ran it."}, 0))
	recs["retract"] = f.submit(f.sign(f.alice, rules.TypeRetract, obj{"target": recs["cache-once"].ID(), "reason": "The cache measurement was wrong."}, 0))
	return recs
}

// TestSearch: a fixed corpus, the expected hits in rank order written
// down, every hit checked with the SDK's match rule by the client, and
// coverage exhaustive when the page holds every match.
func TestSearch(t *testing.T) {
	f := newFixture(t)
	recs := searchCorpus(f)
	for _, c := range []struct {
		name       string
		request    obj
		want       []string // names, in rank order
		exhaustive bool
		ranking    string
	}{
		// BM25: the short retraction reason first, then the text saying
		// "cache" three times, then the assessment's summary.
		{"one term", obj{"text": "cache", "mode": "lexical"}, []string{"retract", "cache", "assess", "upper", "lock", "cache-once"}, true, knowledge.RankingID},
		{"two terms in different fields", obj{"text": "CACHE language", "mode": "lexical"}, []string{"cache", "assess"}, true, knowledge.RankingID},
		{"a context string", obj{"text": "disabled", "mode": "lexical"}, []string{"lock"}, true, knowledge.RankingID},
		{"ASCII folding only", obj{"text": "shouting", "mode": "lexical"}, []string{"upper"}, true, knowledge.RankingID},
		{"non-ASCII substring", obj{"text": "缓存", "mode": "lexical"}, []string{"zh"}, true, knowledge.RankingID},
		{"three non-ASCII characters", obj{"text": "包含语", "mode": "lexical"}, []string{"zh"}, true, knowledge.RankingID},
		// "go" is also in the scope "Go services on Linux" of every
		// payload but the lock observation's and the retraction: "go go go"
		// first, then the shortest texts.
		{"short terms only", obj{"text": "go", "mode": "lexical"}, []string{"go", "assess", "zh", "nul", "upper", "cache-once", "cache"}, true, knowledge.RankingID},
		{"a short and a long term", obj{"text": "is slow", "mode": "lexical"}, []string{"cache-once"}, true, knowledge.RankingID},
		{"limit below the matches", obj{"text": "cache", "mode": "lexical", "limit": 2}, []string{"retract", "cache"}, false, knowledge.RankingID},
		{"filters: type", obj{"text": "cache", "mode": "lexical", "filters": obj{"type": rules.TypeAssess}}, []string{"assess"}, true, knowledge.RankingID},
		{"filters: actor", obj{"text": "cache", "mode": "lexical", "filters": obj{"actor": f.bob.ID}}, []string{"assess"}, true, knowledge.RankingID},
		{"a term never spans two fields", obj{"text": "languagea", "mode": "lexical"}, nil, true, knowledge.RankingID},
		{"no match", obj{"text": "zebra", "mode": "lexical"}, nil, true, knowledge.RankingID},
		// The index's query syntax is never interpreted: terms are literal.
		{"quotes and operators are literal", obj{"text": `cache" NOT* "x AND`, "mode": "lexical"}, nil, true, knowledge.RankingID},
		{"a quote in a short term", obj{"text": `"`, "mode": "lexical"}, nil, true, knowledge.RankingID},
		{"NUL in a term", obj{"text": "cac\u0000he", "mode": "lexical"}, nil, true, knowledge.RankingID},
		{"NUL in a field and a term", obj{"text": "e\u0000a", "mode": "lexical"}, []string{"nul"}, true, knowledge.RankingID},
		{"a term beside a NUL", obj{"text": "after", "mode": "lexical"}, []string{"nul"}, true, knowledge.RankingID},
	} {
		page, err := f.kc.Search(context.Background(), c.request)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, h := range page.Result {
			for name, r := range recs {
				if r.ID() == h.Record.ID() {
					got = append(got, name)
				}
			}
		}
		wantReasons := []string{}
		if !c.exhaustive {
			wantReasons = []string{"candidate_limit"}
		}
		if !slices.Equal(got, c.want) || page.Coverage.Exhaustive != c.exhaustive || !slices.Equal(page.Coverage.Reasons, wantReasons) ||
			page.Ranking != (rules.Ranking{Mode: rules.ModeLexical, ID: c.ranking}) || page.Checkpoint != 9 {
			t.Errorf("%s: %v %+v %+v, want %v exhaustive=%v %s", c.name, got, page.Coverage, page.Ranking, c.want, c.exhaustive, c.ranking)
		}
	}
}

// TestSearchRefusals: modes that are not advertised are
// unsupported_search_mode (never substituted); malformed requests are
// invalid_request.
func TestSearchRefusals(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name string
		body string
		want string
	}{
		{"semantic", `{"text":"cache","mode":"semantic"}`, rules.CodeUnsupportedSearchMode},
		{"hybrid", `{"text":"cache","mode":"hybrid"}`, rules.CodeUnsupportedSearchMode},
		{"unknown mode", `{"text":"cache","mode":"fuzzy"}`, rules.CodeUnsupportedSearchMode},
		{"no mode", `{"text":"cache"}`, rules.CodeInvalidRequest},
		{"white space only", `{"text":" \t","mode":"lexical"}`, rules.CodeInvalidRequest},
		{"17 terms", `{"text":"a b c d e f g h i j k l m n o p q","mode":"lexical"}`, rules.CodeInvalidRequest},
		{"limit 101", `{"text":"cache","mode":"lexical","limit":101}`, rules.CodeInvalidRequest},
		{"unknown member", `{"text":"cache","mode":"lexical","q":"x"}`, rules.CodeInvalidRequest},
		{"after_seq filter", `{"text":"cache","mode":"lexical","filters":{"after_seq":1}}`, rules.CodeInvalidRequest},
		{"bad actor filter", `{"text":"cache","mode":"lexical","filters":{"actor":"did:agent:x"}}`, rules.CodeInvalidRequest},
	} {
		r := f.h.Do(http.MethodPost, "/v1/knowledge/search", c.body, nil)
		if r.ErrorCode() != c.want || r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want %s", c.name, r.Status, r.Body, c.want)
		}
	}
	_, err := f.kc.Search(context.Background(), obj{"text": "cache", "mode": "semantic"})
	if code(err) != rules.CodeUnsupportedSearchMode {
		t.Errorf("client, semantic: %v", err)
	}
}

// TestSearchCandidateLimit: with more candidates than the bound, the page
// is the best of those read and says candidate_limit; every hit still
// matches the rule.
func TestSearchCandidateLimit(t *testing.T) {
	f := newFixture(t, func(o *hub.Options) { o.Limits.Knowledge.SearchCandidates = 3 })
	recs := searchCorpus(f)
	page, err := f.kc.Search(context.Background(), obj{"text": "cache", "mode": "lexical", "limit": 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Result) != 3 || page.Coverage.Exhaustive || !slices.Equal(page.Coverage.Reasons, []string{"candidate_limit"}) {
		t.Fatalf("%d hits, coverage %+v", len(page.Result), page.Coverage)
	}
	if page.Result[0].Record.ID() != recs["retract"].ID() {
		t.Fatalf("first hit %s", page.Result[0].Record.ID())
	}
	for _, h := range page.Result {
		if ok, err := rules.TextMatches(&h.Record.Envelope.Event, "cache"); !ok || err != nil {
			t.Fatalf("hit %s does not match", h.Record.ID())
		}
	}
}
