package store

import "context"

// Outbox entry states.
const (
	OutboxPending = "pending"
	OutboxDone    = "done"
	OutboxFailed  = "failed"
)

// OutboxEntry is a signed envelope on its way to a service. It is stored,
// with its nonce, before the envelope is sent.
type OutboxEntry struct {
	ID      int64
	Kind    string
	Service string // the origin the envelope is submitted to
	// Ref is the writing module's reference (a room id; "" for none),
	// stored in the room_id column.
	Ref        string
	EventID    string
	Nonce      int64
	BaseSeq    int64
	Envelope   []byte
	State      string
	Attempts   int64
	LeaseUntil int64
	CreatedAt  int64
	UpdatedAt  int64
	Error      string
	Result     []byte
}

const outboxColumns = `id, kind, service, room_id, event_id, nonce, base_seq, envelope, state, attempts, lease_until, created_at, updated_at, error, result`

func scanOutbox(s scanner) (*OutboxEntry, error) {
	var e OutboxEntry
	if err := s.Scan(&e.ID, &e.Kind, &e.Service, &e.Ref, &e.EventID, &e.Nonce, &e.BaseSeq, &e.Envelope, &e.State,
		&e.Attempts, &e.LeaseUntil, &e.CreatedAt, &e.UpdatedAt, &e.Error, &e.Result); err != nil {
		return nil, notFound(err)
	}
	return &e, nil
}

// AddOutbox stores a pending entry, leased to the caller until leaseUntil,
// and returns its id.
func (t *Tx) AddOutbox(ctx context.Context, e *OutboxEntry) (int64, error) {
	var id int64
	err := t.queryRow(ctx, `INSERT INTO outbox (kind, service, room_id, event_id, nonce, base_seq, envelope, state, attempts, lease_until, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?) RETURNING id`,
		e.Kind, e.Service, e.Ref, e.EventID, e.Nonce, e.BaseSeq, e.Envelope, e.LeaseUntil, e.CreatedAt, e.CreatedAt).Scan(&id)
	return id, err
}

// Outbox returns an entry by id.
func (q Q) Outbox(ctx context.Context, id int64) (*OutboxEntry, error) {
	return scanOutbox(q.queryRow(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE id = ?`, id))
}

// LeaseOutbox takes the pending entries whose lease ended (at most limit),
// leases them to the caller until leaseUntil and counts an attempt.
func (t *Tx) LeaseOutbox(ctx context.Context, now, leaseUntil int64, limit int) ([]*OutboxEntry, error) {
	rows, err := t.query(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE state = 'pending' AND lease_until <= ? ORDER BY id LIMIT ?`, now, limit)
	if err != nil {
		return nil, err
	}
	var out []*OutboxEntry
	for rows.Next() {
		e, err := scanOutbox(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, e := range out {
		if _, err := t.exec(ctx, `UPDATE outbox SET lease_until = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?`, leaseUntil, now, e.ID); err != nil {
			return nil, err
		}
		e.LeaseUntil = leaseUntil
		e.Attempts++
	}
	return out, nil
}

// TouchOutbox counts a send attempt of an entry the caller holds and
// renews its lease.
func (t *Tx) TouchOutbox(ctx context.Context, id, now, leaseUntil int64, errText string) error {
	_, err := t.exec(ctx, `UPDATE outbox SET attempts = attempts + 1, lease_until = ?, updated_at = ?, error = ? WHERE id = ? AND state = 'pending'`,
		leaseUntil, now, errText, id)
	return err
}

// HoldOutbox keeps a pending entry the caller holds without counting an
// attempt: leased until leaseUntil, with errText saying why it was not sent.
func (t *Tx) HoldOutbox(ctx context.Context, id, now, leaseUntil int64, errText string) error {
	_, err := t.exec(ctx, `UPDATE outbox SET lease_until = ?, updated_at = ?, error = ? WHERE id = ? AND state = 'pending'`,
		leaseUntil, now, errText, id)
	return err
}

// ReleaseOutbox ends the caller's lease on a pending entry so that the
// background resubmission takes it.
func (t *Tx) ReleaseOutbox(ctx context.Context, id, now int64, errText string) error {
	_, err := t.exec(ctx, `UPDATE outbox SET lease_until = 0, updated_at = ?, error = ? WHERE id = ? AND state = 'pending'`, now, errText, id)
	return err
}

// CloseOutbox closes an entry as done (with the service's result) or
// failed (with the reason). Closing a closed entry changes nothing.
func (t *Tx) CloseOutbox(ctx context.Context, id int64, state string, result []byte, errText string, now int64) error {
	_, err := t.exec(ctx, `UPDATE outbox SET state = ?, result = ?, error = ?, updated_at = ?, lease_until = 0 WHERE id = ? AND state = 'pending'`,
		state, result, errText, now, id)
	return err
}

// PendingOutbox returns the number of pending entries.
func (q Q) PendingOutbox(ctx context.Context) (int64, error) {
	var n int64
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM outbox WHERE state = 'pending'`).Scan(&n)
	return n, err
}

// PruneOutbox deletes closed entries last changed before the cutoff.
func (t *Tx) PruneOutbox(ctx context.Context, before int64) error {
	_, err := t.exec(ctx, `DELETE FROM outbox WHERE state != 'pending' AND updated_at < ?`, before)
	return err
}

// OutboxEntries lists the entries in a state, oldest first (at most 1000).
func (q Q) OutboxEntries(ctx context.Context, state string) ([]*OutboxEntry, error) {
	rows, err := q.query(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE state = ? ORDER BY id LIMIT 1000`, state)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*OutboxEntry
	for rows.Next() {
		e, err := scanOutbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
