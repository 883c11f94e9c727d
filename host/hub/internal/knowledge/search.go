package knowledge

import (
	"context"
	"database/sql"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// RankingID names the ranking configuration (Agent Knowledge 9.5: a
// service-scoped id that changes when the configuration changes
// incompatibly): BM25 over substring occurrences (rank.go).
const RankingID = "apconnect-bm25-substring/1"

// minTrigramTerm is the shortest term the trigram index can look up.
const minTrigramTerm = 3

// candidate is one record the index proposed, with its index text and
// its score.
type candidate struct {
	seq   int64
	text  string
	score float64
}

// search serves POST /v1/knowledge/search (Agent Knowledge 9.5) in the
// lexical mode: candidates from the index, ranked, every one checked with
// the match rule, one page.
func (s *Service) search(w http.ResponseWriter, r *http.Request) {
	v, err := s.readBody(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req, err := rules.ParseSearchRequest(v, Modes())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	now := s.nowMS()
	var out []byte
	err = s.readTx(r.Context(), func(tx *sql.Tx) error {
		checkpoint, err := highWater(r.Context(), tx)
		if err != nil {
			return err
		}
		out, err = s.searchPage(r.Context(), tx, req, rules.Scope{Service: s.origin, Checkpoint: checkpoint, AsOf: now})
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, out)
}

// searchPage selects, checks and writes the page of req. Candidates are
// taken in rank order and checked with the rule one by one, their records
// loaded as they are checked, until the page is full and one more match
// shows it is not exhaustive.
func (s *Service) searchPage(ctx context.Context, q querier, req *rules.SearchRequest, scope rules.Scope) ([]byte, error) {
	terms, err := rules.TextTerms(req.Text, true)
	if err != nil {
		return nil, err
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	cands, complete, err := s.candidates(ctx, q, terms, &req.Filters)
	if err != nil {
		return nil, err
	}
	rank(cands, terms, scope.Checkpoint, &s.sample)
	limit := req.EffectiveLimit()
	eligible := map[string]bool{}
	var ids []string
	var hits [][]byte
	for _, c := range cands {
		var hash string
		var rec []byte
		if err := q.QueryRowContext(ctx, `SELECT hash, record FROM knowledge_events WHERE seq = ?`, c.seq).Scan(&hash, &rec); err != nil {
			return nil, err
		}
		ev, err := row{seq: c.seq, record: rec}.event()
		if err != nil {
			return nil, err
		}
		if !req.Eligible(ev) {
			continue // an index candidate the rule refuses
		}
		eligible[hash] = true
		if len(hits) == limit {
			complete = false // a match beyond the page: not exhaustive
			break
		}
		ids = append(ids, hash)
		hits = append(hits, rec)
	}
	coverage := rules.Coverage{Exhaustive: complete, Reasons: []string{}}
	if !coverage.Exhaustive {
		coverage.Reasons = []string{"candidate_limit"}
	}
	ranking := rules.Ranking{Mode: rules.ModeLexical, ID: RankingID}
	if err := rules.CheckSelection(req, eligible, ids, ranking, coverage); err != nil {
		return nil, err
	}
	return writeSearchPage(hits, ranking, coverage, scope)
}

// candidates reads the index's candidates for terms within the exact
// filters, newest first, at most Limits.SearchCandidates of them, with
// their index text; complete says the index had no more. Terms of three or
// more characters are looked up in the trigram index (exact substrings of
// the lowercased text), shorter ones with instr on the same text, a term
// holding NUL by the rule alone.
func (s *Service) candidates(ctx context.Context, q querier, terms []string, f *rules.Filters) ([]candidate, bool, error) {
	var match []string
	var short []any
	for _, t := range terms {
		switch {
		case strings.Contains(t, "\x00"):
			// Left to the rule alone: the index text has no NUL.
		case utf8.RuneCountInString(t) >= minTrigramTerm:
			match = append(match, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		default:
			short = append(short, t)
		}
	}
	var b strings.Builder
	var args []any
	where, fargs := filterSQL(f)
	b.WriteString(`SELECT knowledge_text.rowid, knowledge_text.body FROM knowledge_text`)
	if where != "" {
		b.WriteString(` JOIN knowledge_events e ON e.seq = knowledge_text.rowid`)
	}
	b.WriteString(` WHERE 1`)
	if len(match) > 0 {
		b.WriteString(` AND knowledge_text MATCH ?`)
		args = append(args, strings.Join(match, " "))
	}
	b.WriteString(strings.Repeat(` AND instr(knowledge_text.body, ?) > 0`, len(short)))
	args = append(args, short...)
	b.WriteString(where)
	args = append(args, fargs...)
	bound := s.limits.SearchCandidates
	b.WriteString(` ORDER BY knowledge_text.rowid DESC LIMIT ?`)
	args = append(args, bound+1)
	rows, err := q.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.seq, &c.text); err != nil {
			return nil, false, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(out) > bound {
		return out[:bound], false, nil
	}
	return out, true, nil
}

// writeSearchPage writes a search response: hits {record} in rank order,
// ranking, coverage and the scope.
func writeSearchPage(hits [][]byte, ranking rules.Ranking, coverage rules.Coverage, scope rules.Scope) ([]byte, error) {
	reasons := make([]any, len(coverage.Reasons))
	for i, r := range coverage.Reasons {
		reasons[i] = r
	}
	head, err := identity.Canonicalize(map[string]any{
		"service": scope.Service, "checkpoint": scope.Checkpoint, "as_of": scope.AsOf,
		"ranking":  map[string]any{"mode": ranking.Mode, "id": ranking.ID},
		"coverage": map[string]any{"exhaustive": coverage.Exhaustive, "reasons": reasons},
	})
	if err != nil {
		return nil, err
	}
	b := append([]byte{}, head[:len(head)-1]...)
	b = append(b, `,"result":[`...)
	for i, h := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"record":`...)
		b = append(b, h...)
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}
