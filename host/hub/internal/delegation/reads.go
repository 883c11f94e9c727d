package delegation

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	rules "apconnect/host/proto/delegation"
)

// pathID reads and checks the {id} path value.
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !rules.ValidID(id) {
		return "", hubhttp.Errorf(identity.CodeInvalidRequest, "delegation id must match [A-Za-z0-9._~-]{1,128} and not be a dot segment").
			WithData("parameter", "id")
	}
	return id, nil
}

func notFound(id string) *hubhttp.Error {
	return hubhttp.Errorf(identity.CodeNotFound, "no delegation %s", id)
}

// storedCredential returns the stored credential of a delegation id, or nil.
func storedCredential(ctx context.Context, q hubhttp.Querier, id string) (*rules.Credential, error) {
	var raw []byte
	err := q.QueryRowContext(ctx, credentialSQL, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rules.ParseCredential(raw)
}

// credential serves GET /v1/delegations/{id}: the credential as a read now
// presents it (rules.Credential.At): a fresh checked_at, the status at read
// time.
func (s *Service) credential(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = hubhttp.CheckQuery(r.URL.Query())
	}
	var cred *rules.Credential
	if err == nil {
		cred, err = storedCredential(r.Context(), s.reader, id)
	}
	if err == nil && cred == nil {
		err = notFound(id)
	}
	var body []byte
	if err == nil {
		body, err = cred.At(s.clock().UnixMilli()).MarshalJSON()
	}
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, body)
}

// recordJSON is an accepted record on the wire, {envelope, accepted_at}:
// the envelope as submitted (compact JSON the pipeline stored).
func recordJSON(env []byte, acceptedAt int64) json.RawMessage {
	b := make([]byte, 0, len(env)+40)
	b = append(b, `{"envelope":`...)
	b = append(b, env...)
	b = append(b, `,"accepted_at":`...)
	b = strconv.AppendInt(b, acceptedAt, 10)
	return append(b, '}')
}

// events serves GET /v1/delegations/{id}/events: the credential's accepted
// records in acceptance order, EventsPage per page (limit may ask for up to
// EventsPageMax), with an opaque cursor.
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	page, next, err := s.eventsPage(r)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteList(w, page, next)
}

func (s *Service) eventsPage(r *http.Request) ([]json.RawMessage, string, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, "", err
	}
	q := r.URL.Query()
	if err := hubhttp.CheckQuery(q, "limit", "cursor"); err != nil {
		return nil, "", err
	}
	limit, err := hubhttp.ParseLimit(q, s.limits.EventsPage, s.limits.EventsPageMax)
	if err != nil {
		return nil, "", err
	}
	var after int64
	if q.Has("cursor") {
		if err := hubhttp.DecodeCursor(q.Get("cursor"), "delegation-events|"+id, &after); err != nil {
			return nil, "", err
		}
	}
	page, next, err := records(r.Context(), s.reader, id, after, limit)
	if err == nil && len(page) == 0 {
		// An empty page: a credential past its last record, or none.
		var cred *rules.Credential
		if cred, err = storedCredential(r.Context(), s.reader, id); err == nil && cred == nil {
			err = notFound(id)
		}
	}
	return page, next, err
}

// records returns up to limit accepted records of credential id after seq
// after, in acceptance order, and the cursor of the next page.
func records(ctx context.Context, db hubhttp.Querier, id string, after int64, limit int) ([]json.RawMessage, string, error) {
	rows, err := db.QueryContext(ctx, eventsSQL, id, after, limit+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []json.RawMessage
	var last int64
	for rows.Next() {
		var seq, at int64
		var env []byte
		if err := rows.Scan(&seq, &at, &env); err != nil {
			return nil, "", err
		}
		if len(out) == limit {
			return out, hubhttp.EncodeCursor("delegation-events|"+id, last), nil
		}
		out, last = append(out, recordJSON(env, at)), seq
	}
	return out, "", rows.Err()
}

// query serves POST /v1/delegations/query (Agent Delegation 9.5): the
// query is authorized by rules.AuthorizeQuery with the request JWT's Agent
// ID; credentials match its filters (status at read time) and what its
// access permits, by delegation id, a page of rules' effective limit.
func (s *Service) query(w http.ResponseWriter, r *http.Request) {
	items, next, err := s.queryPage(w, r)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	hubhttp.WriteList(w, items, next)
}

func (s *Service) queryPage(w http.ResponseWriter, r *http.Request) ([]json.RawMessage, string, error) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		return nil, "", err
	}
	v, err := hubhttp.ReadStrictJSON(w, r, s.limits.QueryBodyBytes)
	if err != nil {
		return nil, "", err
	}
	q, err := rules.QueryRequestFromValue(v)
	if err != nil {
		return nil, "", err
	}
	ctx, db, now := r.Context(), s.reader, s.clock().UnixMilli()
	caller := hubhttp.AgentID(ctx)
	var principal *rules.PrincipalDocument
	if caller != "" && q.Subject == "" && q.PrincipalID != "" {
		// A controller's enumeration: the principal's document, read now.
		if principal, _, err = resolve(ctx, db, s.origin, q.PrincipalID); err != nil {
			return nil, "", err
		}
	}
	access, err := rules.AuthorizeQuery(q, caller, principal, now)
	if err != nil {
		return nil, "", err
	}
	scope := "delegation-query|" + q.Subject + "|" + q.PrincipalID + "|" + q.ID + "|" + string(q.Status)
	var after string
	if q.Cursor != "" {
		if err := hubhttp.DecodeCursor(q.Cursor, scope, &after); err != nil {
			return nil, "", err
		}
	}
	return matching(ctx, db, q, access, after, scope, now)
}

// matching scans the credentials after the cursor's id, by id, for a page
// of those the query matches and the access permits.
func matching(ctx context.Context, db hubhttp.Querier, q *rules.QueryRequest, access *rules.QueryAccess, after, scope string, now int64) ([]json.RawMessage, string, error) {
	rows, err := db.QueryContext(ctx, matchingSQL(q.Subject, q.PrincipalID, q.ID), q.Subject, q.PrincipalID, q.ID, after)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	limit := q.EffectiveLimit()
	out := []json.RawMessage{}
	var last string
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, "", err
		}
		cred, err := rules.ParseCredential(raw)
		if err != nil {
			return nil, "", err
		}
		if !q.Matches(cred, now) || !access.Permits(cred) {
			continue
		}
		if len(out) == limit {
			return out, hubhttp.EncodeCursor(scope, last), nil
		}
		b, err := cred.At(now).MarshalJSON()
		if err != nil {
			return nil, "", err
		}
		out, last = append(out, b), id
	}
	return out, "", rows.Err()
}
