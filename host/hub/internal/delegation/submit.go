package delegation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	rules "apconnect/host/proto/delegation"
)

// --- the write side: hubhttp.WriteHandler ---

// Precheck rejects what can never have been accepted at POST
// /v1/delegations: another protocol, another type, a malformed payload
// (rules.EventFromIdentity).
func (s *Service) Precheck(_ *http.Request, env *identity.Envelope) error {
	_, err := rules.EventFromIdentity(&env.Event, "/event")
	return err
}

// NonceFloor is 0: Agent Delegation keeps no durable nonce comparison
// beyond the live window's nonce cache.
func (s *Service) NonceFloor(context.Context, *sql.Tx, *identity.Envelope) (int64, error) {
	return 0, nil
}

// Accept applies the write quota, resolves the principal afresh (the hub
// is the authority of the principals it hosts), checks the envelope against
// it and the credential stored under its delegation id
// (rules.CheckAcceptance), materializes the credential and stores it with
// the record, in this transaction (acceptance order is seq).
func (s *Service) Accept(ctx context.Context, w *hubhttp.Write) (*hubhttp.Result, error) {
	ev, err := rules.EventFromIdentity(&w.Envelope.Event, "/event")
	if err != nil {
		return nil, err
	}
	if err := w.RateLimit(Protocol+"|write|"+ev.Actor, s.limits.writeRate()); err != nil {
		return nil, err
	}
	doc, resolved, err := resolve(ctx, w.Tx, s.origin, ev.PrincipalID())
	if err != nil {
		return nil, err
	}
	prev, err := storedCredential(ctx, w.Tx, ev.CredentialID())
	if err != nil {
		return nil, err
	}
	// Acceptance order is the order of commits; a clock that went back
	// does not reorder a credential's history.
	acceptedAt := w.AcceptedAt
	if prev != nil {
		acceptedAt = max(acceptedAt, prev.AcceptedAt)
	}
	if err := rules.CheckAcceptance(w.Envelope, doc, resolved, acceptedAt, prev); err != nil {
		return nil, err
	}
	cred, err := rules.Materialize(w.Envelope, rules.StatusActive, acceptedAt, prev)
	if err != nil {
		return nil, err
	}
	body, err := cred.MarshalJSON()
	if err != nil {
		return nil, err
	}
	res, err := w.Tx.ExecContext(ctx, `INSERT INTO delegation_records (id, event_hash, accepted_at, credential) VALUES (?, ?, ?, ?)`,
		cred.ID, w.Envelope.Hash, acceptedAt, body)
	if err != nil {
		return nil, err
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	if _, err := w.Tx.ExecContext(ctx, `INSERT INTO delegation_credentials (id, principal_id, subject, seq, credential) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, credential = excluded.credential`,
		cred.ID, cred.PrincipalID, cred.Subject, seq, body); err != nil {
		return nil, err
	}
	return &hubhttp.Result{Status: http.StatusOK, Body: body}, nil
}

// Replay answers an exact resubmission with the credential as it stood
// after that envelope (its checked_at is that acceptance).
func (s *Service) Replay(ctx context.Context, tx *sql.Tx, acc *hubhttp.Accepted) (*hubhttp.Result, error) {
	var body []byte
	err := tx.QueryRowContext(ctx, `SELECT credential FROM delegation_records WHERE event_hash = ?`, acc.Hash).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("delegation: accepted event %s has no record", acc.Hash)
	}
	if err != nil {
		return nil, err
	}
	return &hubhttp.Result{Status: http.StatusOK, Body: body}, nil
}
