package store

import "context"

// Status is a cached transient agent status.
type Status struct {
	AgentID   string
	ExpiresAt int64
	Status    []byte // the AgentStatus JSON
}

// ReplaceStatuses replaces a room's cached statuses with a full list read
// from the host at now.
func (t *Tx) ReplaceStatuses(ctx context.Context, key int64, list []Status, now int64) error {
	if _, err := t.exec(ctx, `DELETE FROM statuses WHERE room = ?`, key); err != nil {
		return err
	}
	for _, s := range list {
		if err := t.PutStatus(ctx, key, s); err != nil {
			return err
		}
	}
	return t.SetStatusesAt(ctx, key, now)
}

// PutStatus stores one agent's status (replacing the previous one).
func (t *Tx) PutStatus(ctx context.Context, key int64, s Status) error {
	_, err := t.exec(ctx, `INSERT INTO statuses (room, agent_id, expires_at, status) VALUES (?, ?, ?, ?)
		ON CONFLICT (room, agent_id) DO UPDATE SET expires_at = excluded.expires_at, status = excluded.status`,
		key, s.AgentID, s.ExpiresAt, s.Status)
	return err
}

// DeleteStatus drops one agent's cached status.
func (t *Tx) DeleteStatus(ctx context.Context, key int64, agentID string) error {
	_, err := t.exec(ctx, `DELETE FROM statuses WHERE room = ? AND agent_id = ?`, key, agentID)
	return err
}

// Statuses returns a room's cached statuses unexpired at now, by Agent ID.
func (q Q) Statuses(ctx context.Context, key, now int64) ([]Status, error) {
	rows, err := q.query(ctx, `SELECT agent_id, expires_at, status FROM statuses WHERE room = ? AND expires_at > ? ORDER BY agent_id`, key, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Status
	for rows.Next() {
		var s Status
		if err := rows.Scan(&s.AgentID, &s.ExpiresAt, &s.Status); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Status returns one agent's cached status unexpired at now.
func (q Q) Status(ctx context.Context, key int64, agentID string, now int64) (*Status, error) {
	s := Status{AgentID: agentID}
	err := q.queryRow(ctx, `SELECT expires_at, status FROM statuses WHERE room = ? AND agent_id = ? AND expires_at > ?`,
		key, agentID, now).Scan(&s.ExpiresAt, &s.Status)
	if err != nil {
		return nil, notFound(err)
	}
	return &s, nil
}
