package store

import "context"

// Profile is a verified profile: the document materialized from the latest
// profile.update envelope the connector verified, pinned to its nonce.
type Profile struct {
	AgentID   string
	Service   string // origin of the profile service it came from
	Nonce     int64  // the envelope's nonce: nothing older is accepted again
	EventID   string // the envelope's hash
	Document  []byte // the materialized profile JSON
	Envelope  []byte // the signed profile.update envelope
	FetchedAt int64
}

// PutProfile stores a verified profile unless it is older than the pinned
// one: a smaller nonce is ErrRollback (the pinned profile stays); the same
// nonce only refreshes fetched_at.
func (t *Tx) PutProfile(ctx context.Context, p *Profile) error {
	cur, err := t.Profile(ctx, p.AgentID)
	switch {
	case err == ErrNotFound:
	case err != nil:
		return err
	case p.Nonce < cur.Nonce:
		return ErrRollback
	case p.Nonce == cur.Nonce && p.EventID == cur.EventID:
		_, err := t.exec(ctx, `UPDATE profiles SET fetched_at = ? WHERE agent_id = ?`, p.FetchedAt, p.AgentID)
		return err
	case p.Nonce == cur.Nonce:
		// Two different envelopes with one nonce: keep the pinned one.
		return ErrRollback
	}
	_, err = t.exec(ctx, `INSERT INTO profiles (agent_id, service, nonce, event_id, document, envelope, fetched_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET service = excluded.service, nonce = excluded.nonce, event_id = excluded.event_id,
		document = excluded.document, envelope = excluded.envelope, fetched_at = excluded.fetched_at`,
		p.AgentID, p.Service, p.Nonce, p.EventID, p.Document, p.Envelope, p.FetchedAt)
	return err
}

// Profile returns the pinned profile of an Agent ID, or ErrNotFound.
func (q Q) Profile(ctx context.Context, agentID string) (*Profile, error) {
	p := Profile{AgentID: agentID}
	err := q.queryRow(ctx, `SELECT service, nonce, event_id, document, envelope, fetched_at FROM profiles WHERE agent_id = ?`, agentID).
		Scan(&p.Service, &p.Nonce, &p.EventID, &p.Document, &p.Envelope, &p.FetchedAt)
	if err != nil {
		return nil, notFound(err)
	}
	return &p, nil
}
