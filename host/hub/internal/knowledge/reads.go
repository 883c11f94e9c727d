package knowledge

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"strings"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// readTx runs fn in one read-only transaction: the checkpoint and the
// records it reads come from one snapshot.
func (s *Service) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.Reader().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// event serves GET /v1/knowledge/events/{event_id}: one acceptance record.
// A malformed id is invalid_request; an unknown one not_found.
func (s *Service) event(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("event_id")
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		s.fail(w, r, err)
		return
	}
	if !rules.ValidID(id) {
		s.fail(w, r, identity.NewError(rules.CodeInvalidRequest, "", "the event id must canonically encode 32 bytes in unpadded base64url"))
		return
	}
	rec, err := recordByHash(r.Context(), s.db.Reader(), id)
	if err == nil && rec == nil {
		err = identity.NewError(rules.CodeNotFound, "", "event unavailable")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, rec)
}

// batch serves POST /v1/knowledge/batch (Agent Knowledge 9.4): the held
// records and the missing ids, both in request order.
func (s *Service) batch(w http.ResponseWriter, r *http.Request) {
	ids, err := s.batchRequest(w, r)
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
		found, err := recordsByHash(r.Context(), tx, ids)
		if err != nil {
			return err
		}
		var result [][]byte
		missing := []any{}
		for _, id := range ids {
			if rec, ok := found[id]; ok {
				result = append(result, rec)
			} else {
				missing = append(missing, id)
			}
		}
		out, err = writePage(result, map[string]any{"missing": missing}, rules.Scope{Service: s.origin, Checkpoint: checkpoint, AsOf: now})
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, out)
}

func (s *Service) batchRequest(w http.ResponseWriter, r *http.Request) ([]string, error) {
	v, err := s.readBody(w, r)
	if err != nil {
		return nil, err
	}
	return rules.ParseBatchRequest(v)
}

// readBody reads and strictly parses a read request's body (batch,
// search): anything that is not strict I-JSON is invalid_request.
func (s *Service) readBody(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		return nil, err
	}
	body, err := hubhttp.ReadBody(w, r, s.limits.ReadBodyBytes)
	if err != nil {
		return nil, err
	}
	return rules.ParseReadJSON(body)
}

// recordsByHash returns the stored records of the held ids.
func recordsByHash(ctx context.Context, q querier, ids []string) (map[string][]byte, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := q.QueryContext(ctx, `SELECT hash, record FROM knowledge_events WHERE hash IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string][]byte, len(ids))
	for rows.Next() {
		var h string
		var rec []byte
		if err := rows.Scan(&h, &rec); err != nil {
			return nil, err
		}
		out[h] = rec
	}
	return out, rows.Err()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// writePage writes a read response: result (stored records, as they are), the
// extra members and the scope.
func writePage(result [][]byte, extra map[string]any, scope rules.Scope) ([]byte, error) {
	m := map[string]any{"service": scope.Service, "checkpoint": scope.Checkpoint, "as_of": scope.AsOf}
	for k, v := range extra {
		m[k] = v
	}
	head, err := identity.Canonicalize(m)
	if err != nil {
		return nil, err
	}
	n := len(head) + len(`,"result":[]`)
	for _, r := range result {
		n += len(r) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, head[:len(head)-1]...)
	b = append(b, `,"result":[`...)
	for i, r := range result {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, "]}"...), nil
}

// query serves GET /v1/knowledge/query (Agent Knowledge 9.3): one page of
// the exact enumeration, ascending seq, under the checkpoint the first page
// fixed.
func (s *Service) query(w http.ResponseWriter, r *http.Request) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.fail(w, r, identity.NewError(rules.CodeInvalidRequest, "", "the query string is not application/x-www-form-urlencoded"))
		return
	}
	q, err := rules.ParseQueryValues(values)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	now := s.nowMS()
	var out []byte
	err = s.readTx(r.Context(), func(tx *sql.Tx) error {
		current, err := highWater(r.Context(), tx)
		if err != nil {
			return err
		}
		win, err := q.Window(current, now)
		if err != nil {
			return err
		}
		result, next, err := queryPage(r.Context(), tx, win, &q.Filters)
		if err != nil {
			return err
		}
		extra := map[string]any{}
		if next != "" {
			extra["next_cursor"] = next
		}
		out, err = writePage(result, extra, win.Scope(s.origin))
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, out)
}

// queryPage reads the records of one page: at most win.Limit matching
// records with win.After < seq <= win.Checkpoint, ascending, and the next
// cursor when another matching record follows. The SQL filters are exact;
// each record is checked with Matches all the same, reading on in chunks
// until the page is full or the window exhausted.
func queryPage(ctx context.Context, q querier, win rules.Window, f *rules.Filters) ([][]byte, string, error) {
	where, args := filterSQL(f)
	var page [][]byte
	var last int64
	after := win.After
	for {
		chunk := win.Limit + 1 - len(page)
		rows, err := q.QueryContext(ctx, `SELECT seq, record FROM knowledge_events e WHERE seq > ? AND seq <= ?`+where+
			` ORDER BY seq LIMIT ?`, append(append([]any{after, win.Checkpoint}, args...), chunk)...)
		if err != nil {
			return nil, "", err
		}
		got, err := scanRows(rows)
		if err != nil {
			return nil, "", err
		}
		for _, rw := range got {
			ev, err := rw.event()
			if err != nil {
				return nil, "", err
			}
			if !f.Matches(ev) {
				continue
			}
			if len(page) == win.Limit {
				return page, win.NextCursor(last), nil
			}
			page, last = append(page, rw.record), rw.seq
		}
		if len(got) < chunk {
			return page, "", nil
		}
		after = got[len(got)-1].seq
	}
}

// filterSQL turns the exact filters into conditions on knowledge_events e
// (each starting with " AND ") and their arguments. Every condition is
// exactly its filter's rule (rules.Filters.Matches).
func filterSQL(f *rules.Filters) (string, []any) {
	var b strings.Builder
	var args []any
	add := func(cond string, a ...any) {
		b.WriteString(" AND ")
		b.WriteString(cond)
		args = append(args, a...)
	}
	if f.Actor != "" {
		add("e.actor = ?", f.Actor)
	}
	if f.Type != "" {
		add("e.type = ?", f.Type)
	}
	if f.Kind != "" {
		add("e.kind = ?", f.Kind) // set for publications only
	}
	if f.Verdict != "" {
		add("e.verdict = ?", f.Verdict) // set for assessments only
	}
	if f.Language != "" {
		add("e.type = ? AND e.language = ?", rules.TypePublish, asciiLower(f.Language))
	}
	if f.CreatedFrom != nil {
		add("e.created_at >= ?", *f.CreatedFrom)
	}
	if f.CreatedBefore != nil {
		add("e.created_at < ?", *f.CreatedBefore)
	}
	if f.Tag != "" {
		add("e.seq IN (SELECT seq FROM knowledge_tags WHERE tag = ?)", f.Tag)
	}
	if f.Profile != "" {
		add("e.seq IN (SELECT seq FROM knowledge_profiles WHERE digest = ?)", f.Profile)
	}
	switch {
	case f.Relation != "" && f.Target != "":
		add("e.seq IN (SELECT seq FROM knowledge_links WHERE target = ? AND relation = ?)", f.Target, f.Relation)
	case f.Relation != "":
		add("e.seq IN (SELECT seq FROM knowledge_links WHERE relation = ?)", f.Relation)
	case f.Target != "":
		add("e.seq IN (SELECT seq FROM knowledge_links WHERE target = ?)", f.Target)
	}
	return b.String(), args
}
