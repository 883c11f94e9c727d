package catalogcheck

import (
	"slices"
	"time"
)

// runKnowledge covers the five Knowledge tools against the hub's knowledge
// service: Alice publishes a question and a hypothesis addressing it, Bob
// assesses the hypothesis and finds it by search, Alice retracts the
// question; queries with every filter, batch reads, search and status.
func runKnowledge(r *runner, env Env) {
	t := r.t
	A, B := env.Alice, env.Bob
	H := env.Host
	now := time.Now().UnixMilli()
	license := "https://creativecommons.org/licenses/by/4.0/"
	ctx := obj{"scope": "Go services on Linux", "conditions": []any{"GOMAXPROCS=2"}, "limitations": []any{}}
	pub := func(kind, title, statement string, extra obj) obj {
		p := obj{"license": license, "kind": kind, "title": title, "statement": statement, "language": "en", "context": ctx, "basis": "Measured."}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}

	for _, tool := range []string{"knowledge_submit", "knowledge_query", "knowledge_get", "knowledge_search", "knowledge_status"} {
		r.empty(A, tool)
	}
	q := r.required(A, "knowledge_submit", obj{"services": []any{H}, "type": "knowledge.publish",
		"payload": pub("question", "Which cache key?", "Which cache key keeps languages apart?", obj{"tags": []any{"caching"}})})
	Q := str(q, "id")
	if str(q, "results", "0", "service") != H || str(q, "results", "0", "item", "id") != Q || str(q, "envelope", "hash") != Q {
		t.Errorf("knowledge_submit: %v", q)
	}
	h := r.call(A, "knowledge_submit", obj{"services": []any{H}, "type": "knowledge.publish",
		"payload": pub("hypothesis", "Key by language", "The cache key needs the language.", obj{"tags": []any{"caching", "i18n"},
			"relations": []any{obj{"relation": "addresses", "target": Q}},
			"profiles":  []any{obj{"profile": obj{"url": "https://profiles.example/p", "digest": Q}, "data": obj{}}}})})
	Hy := str(h, "id")
	as := r.call(B, "knowledge_submit", obj{"services": []any{H}, "type": "knowledge.assess",
		"payload": obj{"license": license, "target": Hy, "verdict": "supports", "summary": "The language cache bug reproduces.", "context": ctx, "basis": "Ran it."}})
	As := str(as, "id")
	re := r.call(A, "knowledge_submit", obj{"services": []any{H}, "type": "knowledge.retract", "payload": obj{"target": Q, "reason": "Answered."}})
	// The payload is checked for its type before signing, with paths
	// relative to the payload.
	e := r.fail(A, "knowledge_submit", obj{"services": []any{H}, "type": "knowledge.publish", "payload": obj{"license": "http://x", "kind": "question"}}, "invalid_event")
	var paths []string
	for _, it := range list(e.Data, "errors") {
		paths = append(paths, str(it, "path"))
	}
	if !slices.Equal(paths, []string{"", "/license"}) {
		t.Errorf("knowledge_submit invalid payload: paths %q, want the payload itself (missing members) and /license: %v", paths, e)
	}
	// An ID no service holds: Q with another last character (one of the 16
	// a 32-byte hash can end with).
	absent := Q[:42] + "A"
	if absent == Q {
		absent = Q[:42] + "E"
	}
	r.fail(A, "knowledge_submit", obj{"services": []any{H}, "type": "knowledge.assess", "payload": obj{"license": license, "target": absent,
		"verdict": "supports", "summary": "s", "context": ctx, "basis": "b"}}, "missing_dependency")

	// Queries: every filter in some call; a cursor followed with the same
	// filters.
	r.required(A, "knowledge_query", obj{"service": H})
	first := r.call(B, "knowledge_query", obj{"service": H, "actor": A.ID, "type": "knowledge.publish", "kind": "question", "tag": "caching",
		"language": "EN", "limit": 1})
	if len(list(first, "items")) != 1 || str(first, "items", "0", "id") != Q || str(first, "next_cursor") != "" {
		t.Errorf("knowledge_query by kind: %v", first)
	}
	pg := r.call(B, "knowledge_query", obj{"service": H, "actor": A.ID, "limit": 1})
	pg2 := r.call(B, "knowledge_query", obj{"service": H, "actor": A.ID, "limit": 1, "cursor": str(pg, "next_cursor")})
	if str(pg2, "items", "0", "id") != Hy || num(pg2, "checkpoint") != num(pg, "checkpoint") || num(pg2, "as_of") != num(pg, "as_of") {
		t.Errorf("knowledge_query pages: %v then %v", pg, pg2)
	}
	links := r.call(B, "knowledge_query", obj{"service": H, "target": Q})
	if len(list(links, "items")) != 2 {
		t.Errorf("knowledge_query target: %v", links)
	}
	if e := r.call(B, "knowledge_query", obj{"service": H, "target": Q, "relation": "addresses", "profile": Q}); str(e, "items", "0", "id") != Hy {
		t.Errorf("knowledge_query relation and profile: %v", e)
	}
	v := r.call(A, "knowledge_query", obj{"service": H, "verdict": "supports", "created_from": now - 60_000, "created_before": now + 600_000, "after_seq": 0})
	if len(list(v, "items")) != 1 || str(v, "items", "0", "id") != As {
		t.Errorf("knowledge_query verdict: %v", v)
	}
	r.fail(A, "knowledge_query", obj{"service": H, "actor": A.ID, "limit": 2, "cursor": str(pg, "next_cursor")}, "invalid_cursor")

	// Batch reads.
	g := r.required(B, "knowledge_get", obj{"service": H, "ids": []any{str(re, "id"), absent, Q}})
	if len(list(g, "items")) != 2 || str(g, "items", "1", "id") != Q || len(list(g, "missing")) != 1 {
		t.Errorf("knowledge_get: %v", g)
	}

	// Search: Bob finds the hypothesis; every hit carries its scope.
	s := r.required(B, "knowledge_search", obj{"service": H, "text": "cache LANGUAGE", "mode": "lexical"})
	var found []string
	for _, hit := range list(s, "hits") {
		found = append(found, str(hit, "item", "id"))
	}
	if !slices.Contains(found, Hy) || !slices.Contains(found, As) || get(s, "coverage", "exhaustive") != true || str(s, "ranking", "mode") != "lexical" {
		t.Errorf("knowledge_search: %v", s)
	}
	if f := r.call(B, "knowledge_search", obj{"service": H, "text": "cache", "mode": "lexical", "filters": obj{"kind": "hypothesis", "actor": A.ID}, "limit": 5}); len(list(f, "hits")) != 1 {
		t.Errorf("knowledge_search filtered: %v", f)
	}
	r.fail(B, "knowledge_search", obj{"service": H, "text": "cache", "mode": "semantic"}, "unsupported_search_mode")

	// Status: the question is retracted, the hypothesis active and assessed.
	st := r.required(B, "knowledge_status", obj{"service": H, "id": Q})
	if get(st, "complete") != true || str(st, "status") != "retracted" || str(st, "retractions", "0") != str(re, "id") {
		t.Errorf("knowledge_status of the question: %v", st)
	}
	if st := r.call(B, "knowledge_status", obj{"service": H, "id": Hy}); str(st, "status") != "active" || str(st, "assessments", "0") != As {
		t.Errorf("knowledge_status of the hypothesis: %v", st)
	}

	if sg := r.call(A, "schema_get", obj{"protocol": "agent-knowledge/1.0"}); len(list(sg, "schemas")) != 3 || get(sg, "schemas", "0", "schema", "$defs", "context") == nil {
		t.Errorf("schema_get knowledge: %v", sg)
	}
	if sg := r.call(A, "schema_get", obj{"protocol": "agent-knowledge/1.0", "type": "knowledge.retract"}); len(list(sg, "schemas")) != 1 {
		t.Errorf("schema_get knowledge.retract: %v", sg)
	}
}
