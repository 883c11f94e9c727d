package knowledge

import (
	"fmt"

	"apconnect/host/identity"
)

// Scope is what every read answers with: the service origin, the
// checkpoint (the last seq the answer reflects) and the service clock.
type Scope struct {
	Service    string `json:"service"`
	Checkpoint int64  `json:"checkpoint"`
	AsOf       int64  `json:"as_of"`
}

func (s Scope) into(m map[string]any) map[string]any {
	m["service"], m["checkpoint"], m["as_of"] = s.Service, s.Checkpoint, s.AsOf
	return m
}

func recordValues(rs []*Record) []any {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r.Value()
	}
	return out
}

// QueryPage is one page of a query.
type QueryPage struct {
	Scope
	Result     []*Record
	NextCursor string // "" on the last page
}

// Value returns the page as the JSON object a service sends.
func (p *QueryPage) Value() map[string]any {
	m := p.Scope.into(map[string]any{"result": recordValues(p.Result)})
	if p.NextCursor != "" {
		m["next_cursor"] = p.NextCursor
	}
	return m
}

// BatchPage answers a batch: the records held, and the requested ids not
// held (both in request order).
type BatchPage struct {
	Scope
	Result  []*Record
	Missing []string
}

// Value returns the page as the JSON object a service sends.
func (p *BatchPage) Value() map[string]any {
	missing := make([]any, len(p.Missing))
	for i, s := range p.Missing {
		missing[i] = s
	}
	return p.Scope.into(map[string]any{"result": recordValues(p.Result), "missing": missing})
}

// SearchHit is one ranked hit.
type SearchHit struct {
	Record      *Record
	Explanation string // "" when absent
}

// SearchPage answers a search. There is no next page.
type SearchPage struct {
	Scope
	Result   []SearchHit
	Ranking  Ranking
	Coverage Coverage
}

// Value returns the page as the JSON object a service sends.
func (p *SearchPage) Value() map[string]any {
	hits := make([]any, len(p.Result))
	for i, h := range p.Result {
		hit := map[string]any{"record": h.Record.Value()}
		if h.Explanation != "" {
			hit["explanation"] = h.Explanation
		}
		hits[i] = hit
	}
	return p.Scope.into(map[string]any{
		"result":   hits,
		"ranking":  map[string]any{"mode": p.Ranking.Mode, "id": p.Ranking.ID},
		"coverage": p.Coverage.value(),
	})
}

// responseRecords applies the checks every read response shares (the SDK's
// response_records): the definition's schema, a canonical service origin
// equal to the receiving origin, distinct event ids, no seq beyond the
// checkpoint, and valid records. Every failure is invalid_response.
func responseRecords(resp any, definition, origin string) (Scope, []*Record, error) {
	if err := checkStrict(resp, "", 0); err != nil {
		return Scope{}, nil, recode(err, CodeInvalidResponse)
	}
	if err := ValidateSchema(resp, definition); err != nil {
		return Scope{}, nil, recode(err, CodeInvalidResponse)
	}
	m := obj(resp)
	s := Scope{Service: str(m["service"])}
	s.Checkpoint, _ = intOf(m["checkpoint"])
	s.AsOf, _ = intOf(m["as_of"])
	if !identity.ValidOrigin(s.Service) {
		return Scope{}, nil, errorf(CodeInvalidResponse, "/service", "the response service is not a serialized HTTPS origin")
	}
	if s.Service != origin {
		return Scope{}, nil, errorf(CodeInvalidResponse, "/service", "the response service %s differs from the receiving origin %s", s.Service, origin)
	}
	items := arr(m["result"])
	seen := make(map[string]bool, len(items))
	raw := make([]any, len(items))
	for i, it := range items {
		rec := it
		at := fmt.Sprintf("/result/%d", i)
		if definition == "searchResponse" {
			rec, at = obj(it)["record"], at+"/record"
		}
		raw[i] = rec
		rm := obj(rec)
		id := str(obj(rm["envelope"])["hash"])
		seq, _ := intOf(rm["seq"])
		if seen[id] || seq > s.Checkpoint {
			return Scope{}, nil, errorf(CodeInvalidResponse, at, "duplicate event or record beyond the checkpoint")
		}
		seen[id] = true
	}
	records := make([]*Record, len(raw))
	for i, rec := range raw {
		r, err := ValidateRecord(rec, "")
		if err != nil {
			return Scope{}, nil, under(err, fmt.Sprintf("/result/%d", i))
		}
		records[i] = r
	}
	return s, records, nil
}

// ValidateQueryResponse is the client's check of one query page for q (the
// SDK's validate_knowledge_query_response): the shared checks, at most the
// query's limit of records, seq strictly increasing above after_seq, and
// every record matching the filters. Failures are invalid_response.
func ValidateQueryResponse(resp any, q *Query, origin string) (*QueryPage, error) {
	s, records, err := responseRecords(resp, "queryResponse", origin)
	if err != nil {
		return nil, err
	}
	if len(records) > q.EffectiveLimit() {
		return nil, errorf(CodeInvalidResponse, "/result", "the page holds %d records; the limit is %d", len(records), q.EffectiveLimit())
	}
	last := q.EffectiveAfterSeq()
	for i, r := range records {
		if r.Seq <= last || !q.Filters.Matches(&r.Envelope.Event) {
			return nil, errorf(CodeInvalidResponse, fmt.Sprintf("/result/%d", i), "the page breaks seq order or the exact filters")
		}
		last = r.Seq
	}
	return &QueryPage{Scope: s, Result: records, NextCursor: str(obj(resp)["next_cursor"])}, nil
}

// ValidateBatchResponse is the client's check of a batch answer (the SDK's
// validate_knowledge_batch_response): the shared checks, and result and
// missing an ordered, disjoint partition of the requested ids. Failures
// are invalid_response.
func ValidateBatchResponse(resp any, requested []string, origin string) (*BatchPage, error) {
	s, records, err := responseRecords(resp, "batchResponse", origin)
	if err != nil {
		return nil, err
	}
	missing := make([]string, 0)
	for _, v := range arr(obj(resp)["missing"]) {
		missing = append(missing, str(v))
	}
	inResult := map[string]bool{}
	for _, r := range records {
		inResult[r.ID()] = true
	}
	inMissing := map[string]bool{}
	for _, id := range missing {
		inMissing[id] = true
	}
	var wantResult, wantMissing []string
	requestedSet := map[string]bool{}
	for _, id := range requested {
		requestedSet[id] = true
		if inResult[id] {
			wantResult = append(wantResult, id)
		}
		if inMissing[id] {
			wantMissing = append(wantMissing, id)
		}
	}
	ok := len(wantResult) == len(records) && len(wantMissing) == len(missing)
	for i := 0; ok && i < len(records); i++ {
		ok = records[i].ID() == wantResult[i] && !inMissing[records[i].ID()]
	}
	for i := 0; ok && i < len(missing); i++ {
		ok = missing[i] == wantMissing[i]
	}
	for id := range requestedSet {
		ok = ok && (inResult[id] || inMissing[id])
	}
	if !ok {
		return nil, errorf(CodeInvalidResponse, "", "result and missing are not an ordered partition of the requested ids")
	}
	return &BatchPage{Scope: s, Result: records, Missing: missing}, nil
}

// ValidateSearchResponse is the client's check of a search answer (the
// SDK's validate_knowledge_search_response): the shared checks, at most the
// request's limit of hits, the requested ranking mode, and every hit
// matching the exact filters and, for a lexical search, the text. Failures
// are invalid_response.
func ValidateSearchResponse(resp any, r *SearchRequest, origin string) (*SearchPage, error) {
	s, records, err := responseRecords(resp, "searchResponse", origin)
	if err != nil {
		return nil, err
	}
	m := obj(resp)
	rank := obj(m["ranking"])
	if len(records) > r.EffectiveLimit() {
		return nil, errorf(CodeInvalidResponse, "/result", "the page holds %d hits; the limit is %d", len(records), r.EffectiveLimit())
	}
	if str(rank["mode"]) != r.Mode {
		return nil, errorf(CodeInvalidResponse, "/ranking/mode", "the service substituted mode %q for %q", describe(rank["mode"]), r.Mode)
	}
	page := &SearchPage{Scope: s, Ranking: Ranking{Mode: str(rank["mode"]), ID: str(rank["id"])}}
	cov := obj(m["coverage"])
	page.Coverage.Exhaustive, _ = cov["exhaustive"].(bool)
	for _, x := range arr(cov["reasons"]) {
		page.Coverage.Reasons = append(page.Coverage.Reasons, str(x))
	}
	hits := arr(m["result"])
	for i, rec := range records {
		if !r.Eligible(&rec.Envelope.Event) {
			return nil, errorf(CodeInvalidResponse, fmt.Sprintf("/result/%d", i), "the hit breaks the exact filters or the lexical text")
		}
		page.Result = append(page.Result, SearchHit{Record: rec, Explanation: str(obj(hits[i])["explanation"])})
	}
	return page, nil
}

// PageTracker checks that a sequence of query pages is one complete,
// consistent enumeration (the SDK's KnowledgePageTracker): the first page
// has no cursor; each later request carries the previous page's
// next_cursor and otherwise the same query; every page has the first
// page's scope; no event repeats and seq never moves back. It is not safe
// for concurrent use.
type PageTracker struct {
	origin  string
	started bool
	binding string // the digest of the bound query
	scope   Scope
	seen    map[string]bool
	last    int64
	next    string
}

// NewPageTracker starts a traversal of the service at origin, a serialized
// HTTPS origin.
func NewPageTracker(origin string) (*PageTracker, error) {
	if !identity.ValidOrigin(origin) {
		return nil, errorf(CodeInvalidRequest, "", "%q is not a serialized HTTPS origin", describe(origin))
	}
	return &PageTracker{origin: origin, seen: map[string]bool{}}, nil
}

// Accept checks one page, answered for q, and records it.
func (t *PageTracker) Accept(q *Query, resp any) (*QueryPage, error) {
	page, err := ValidateQueryResponse(resp, q, t.origin)
	if err != nil {
		return nil, err
	}
	last := t.last
	if !t.started {
		if q.Cursor != "" {
			return nil, errorf(CodeInvalidResponse, "/cursor", "a traversal must start without a cursor")
		}
		last = q.EffectiveAfterSeq()
	} else if t.next == "" || q.Cursor != t.next || q.Digest() != t.binding || page.Scope != t.scope {
		return nil, errorf(CodeInvalidResponse, "", "the pagination request or checkpoint scope changed")
	}
	if len(page.Result) > 0 && page.Result[0].Seq <= last {
		return nil, errorf(CodeInvalidResponse, "/result/0", "the pagination moved backwards")
	}
	for i, r := range page.Result {
		if t.seen[r.ID()] {
			return nil, errorf(CodeInvalidResponse, fmt.Sprintf("/result/%d", i), "the pagination repeated an event")
		}
	}
	for _, r := range page.Result {
		t.seen[r.ID()] = true
	}
	if n := len(page.Result); n > 0 {
		last = page.Result[n-1].Seq
	}
	t.started, t.last, t.binding, t.scope, t.next = true, last, q.Digest(), page.Scope, page.NextCursor
	return page, nil
}

// Complete reports whether the traversal has read its last page.
func (t *PageTracker) Complete() bool { return t.started && t.next == "" }

// NextCursor returns the cursor the next request must carry ("" when the
// traversal is complete or not started).
func (t *PageTracker) NextCursor() string { return t.next }

// Checkpoint returns the after_seq of the next poll, once every page was
// read.
func (t *PageTracker) Checkpoint() (int64, bool) {
	if !t.Complete() {
		return 0, false
	}
	return t.scope.Checkpoint, true
}
