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

// The ranking configurations (Agent Knowledge 9.5: a service-scoped id that
// changes when the configuration changes incompatibly).
const (
	// RankingBM25 ranks the index's candidates by FTS5's BM25 over
	// trigrams, then newest first; it serves text with a term of three or
	// more characters.
	RankingBM25 = "apconnect-fts5-trigram-bm25/1"
	// RankingRecency ranks newest first; it serves text whose terms are all
	// shorter than three characters, which a trigram index cannot look up.
	RankingRecency = "apconnect-substring-recency/1"
)

// minTrigramTerm is the shortest term the trigram index can look up.
const minTrigramTerm = 3

// candidate is one record the index proposed.
type candidate struct {
	seq  int64
	hash string
}

// search serves POST /v1/knowledge/search (Agent Knowledge 9.5) in the
// lexical mode: candidates from the index, every one checked with the
// match rule, ranked, one page.
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
// read in rank order and checked with the rule one by one, their records
// loaded as they are checked, until the page is full and one more match
// shows it is not exhaustive.
func (s *Service) searchPage(ctx context.Context, q querier, req *rules.SearchRequest, scope rules.Scope) ([]byte, error) {
	cands, complete, rankingID, err := s.candidates(ctx, q, req, scope.Checkpoint)
	if err != nil {
		return nil, err
	}
	limit := req.EffectiveLimit()
	eligible := map[string]bool{}
	var ids []string
	var hits [][]byte
	for _, c := range cands {
		var rec []byte
		if err := q.QueryRowContext(ctx, `SELECT record FROM knowledge_events WHERE seq = ?`, c.seq).Scan(&rec); err != nil {
			return nil, err
		}
		ev, err := row{seq: c.seq, record: rec}.event()
		if err != nil {
			return nil, err
		}
		if !req.Eligible(ev) {
			continue // an index candidate the rule refuses
		}
		eligible[c.hash] = true
		if len(hits) == limit {
			complete = false // a match beyond the page: not exhaustive
			break
		}
		ids = append(ids, c.hash)
		hits = append(hits, rec)
	}
	coverage := rules.Coverage{Exhaustive: complete, Reasons: []string{}}
	if !coverage.Exhaustive {
		coverage.Reasons = []string{"candidate_limit"}
	}
	ranking := rules.Ranking{Mode: rules.ModeLexical, ID: rankingID}
	if err := rules.CheckSelection(req, eligible, ids, ranking, coverage); err != nil {
		return nil, err
	}
	return writeSearchPage(hits, ranking, coverage, scope)
}

// candidates reads the index's candidates for req, best first, at most
// Limits.SearchCandidates of them (their seq and id only); complete says the
// index had no more.
// Terms of three or more characters are looked up in the trigram index
// (exact substrings of the lowercased text); shorter ones are checked with
// instr on the same text; a term holding NUL only by the rule. The exact filters are applied in SQL as well.
func (s *Service) candidates(ctx context.Context, q querier, req *rules.SearchRequest, checkpoint int64) ([]candidate, bool, string, error) {
	terms, err := rules.TextTerms(req.Text, true)
	if err != nil {
		return nil, false, "", err
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
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
	where, args := filterSQL(&req.Filters)
	instr := strings.Repeat(" AND instr(knowledge_text.body, ?) > 0", len(short))
	bound := s.limits.SearchCandidates
	var query string
	var qargs []any
	rankingID := RankingBM25
	if len(match) > 0 {
		query = `SELECT e.seq, e.hash FROM knowledge_text JOIN knowledge_events e ON e.seq = knowledge_text.rowid
			WHERE knowledge_text MATCH ? AND e.seq <= ?` + instr + where + ` ORDER BY bm25(knowledge_text), e.seq DESC LIMIT ?`
		qargs = append(append(append([]any{strings.Join(match, " "), checkpoint}, short...), args...), bound+1)
	} else {
		rankingID = RankingRecency
		query = `SELECT e.seq, e.hash FROM knowledge_events e JOIN knowledge_text ON knowledge_text.rowid = e.seq
			WHERE e.seq <= ?` + instr + where + ` ORDER BY e.seq DESC LIMIT ?`
		qargs = append(append(append([]any{checkpoint}, short...), args...), bound+1)
	}
	rows, err := q.QueryContext(ctx, query, qargs...)
	if err != nil {
		return nil, false, "", err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.seq, &c.hash); err != nil {
			return nil, false, "", err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, false, "", err
	}
	if len(out) > bound {
		return out[:bound], false, rankingID, nil
	}
	return out, true, rankingID, nil
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
