package profile

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"apconnect/host/hub/internal/hubhttp"
	rules "apconnect/host/proto/profile"
)

// document returns the stored document JSON of an Agent ID, or nil.
func document(ctx context.Context, q hubhttp.Querier, id string) (json.RawMessage, error) {
	var doc []byte
	err := q.QueryRowContext(ctx, `SELECT document FROM profiles WHERE agent_id = ?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return doc, err
}

// documents returns the documents of the ids that have one, in the order of
// ids, each Agent ID at most once.
func documents(ctx context.Context, q hubhttp.Querier, ids []string) ([]json.RawMessage, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := q.QueryContext(ctx, `SELECT agent_id, document FROM profiles WHERE agent_id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[string]json.RawMessage, len(ids))
	for rows.Next() {
		var id string
		var doc []byte
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, err
		}
		found[id] = doc
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(found))
	for _, id := range ids {
		if doc, ok := found[id]; ok {
			out = append(out, doc)
			delete(found, id)
		}
	}
	return out, nil
}

// historySQL reads an actor's profile.update envelopes through the
// profile_history index (migration 2), whose predicate it repeats as
// literals.
const historySQL = `SELECT nonce, envelope FROM accepted_envelopes
	WHERE protocol = '` + Protocol + `' AND type = '` + rules.TypeUpdate + `' AND actor = ? AND nonce < ?
	ORDER BY nonce DESC LIMIT ?`

// history returns up to limit accepted profile.update envelopes of id with a
// nonce below before, greatest nonce first, and the nonce to continue below
// when more follow (0 otherwise).
func history(ctx context.Context, q hubhttp.Querier, id string, before int64, limit int) ([]json.RawMessage, int64, error) {
	rows, err := q.QueryContext(ctx, historySQL, id, before, limit+1)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []json.RawMessage
	var nonces []int64
	for rows.Next() {
		var n int64
		var env []byte
		if err := rows.Scan(&n, &env); err != nil {
			return nil, 0, err
		}
		out = append(out, env)
		nonces = append(nonces, n)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(out) > limit {
		return out[:limit], nonces[limit-1], nil
	}
	return out, 0, nil
}
