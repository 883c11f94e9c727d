package store

import (
	"context"
	"strconv"
)

// Reads for the operator's view (host/opview): lists across rooms and
// states that no tool needs, and a cheap fingerprint of everything the view
// shows, so it can tell its pages that something changed without reading
// it all. Each is a read of the read-only pool; none changes anything.

// InboxByState lists the inbox items in a state (at most limit, capped at
// 200): claimed and deferred ones by the end of their lease or deferral,
// soonest first; pending ones highest priority first, then oldest;
// handled and dismissed ones newest first (the most recently raised
// items; the inbox keeps no acknowledgement time).
func (q Q) InboxByState(ctx context.Context, state string, limit int) ([]*InboxRow, error) {
	if limit <= 0 || limit > 200 {
		limit = 200
	}
	order := `i.rid DESC`
	switch state {
	case InboxClaimed, InboxDeferred:
		order = `i.until, i.rid`
	case InboxPending:
		order = `i.prio, i.rid`
	}
	rows, err := q.query(ctx, `SELECT `+inboxColumns+` FROM inbox i LEFT JOIN rooms r ON r.id = i.room
		WHERE i.state = ? ORDER BY `+order+` LIMIT `+strconv.Itoa(limit), state)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*InboxRow
	for rows.Next() {
		r, err := scanInbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// InboxCounts returns the number of inbox items in each state.
func (q Q) InboxCounts(ctx context.Context) (map[string]int64, error) {
	return q.countBy(ctx, `SELECT state, COUNT(*) FROM inbox GROUP BY state`)
}

// OutboxCounts returns the number of outbox entries in each state.
func (q Q) OutboxCounts(ctx context.Context) (map[string]int64, error) {
	return q.countBy(ctx, `SELECT state, COUNT(*) FROM outbox GROUP BY state`)
}

func (q Q) countBy(ctx context.Context, query string) (map[string]int64, error) {
	rows, err := q.query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}

// RecentOutbox lists the outbox entries in a state, the most recently
// changed first (at most limit, capped at 200).
func (q Q) RecentOutbox(ctx context.Context, state string, limit int) ([]*OutboxEntry, error) {
	if limit <= 0 || limit > 200 {
		limit = 200
	}
	rows, err := q.query(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE state = ? ORDER BY updated_at DESC, id DESC LIMIT `+
		strconv.Itoa(limit), state)
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

// Fingerprint is a cheap digest of the state the operator's view shows, by
// part: each string changes when the rows behind that part change.
type Fingerprint struct {
	Rooms, Inbox, Outbox, Drafts, Processes string
	// Wake is the wake log and leases; Mail the own cards, pending
	// publications and letters; Knowledge the submissions recorded;
	// Delegation the credentials recorded.
	Wake, Mail, Knowledge, Delegation string
}

// ViewFingerprint reads the digest with one aggregate query per part (no
// blob is read).
func (q Q) ViewFingerprint(ctx context.Context) (*Fingerprint, error) {
	var f Fingerprint
	parts := []struct {
		dst   *string
		query string
	}{
		{&f.Rooms, `SELECT COUNT(*) || ':' || COALESCE(MAX(updated_at), 0) || ':' || TOTAL(synced_seq) || ':' || TOTAL(remote_seq) || ':' ||
			TOTAL(read_seq) || ':' || TOTAL(subscribed) || ':' || TOTAL(fail_seq) || ':' || TOTAL(statuses_at) FROM rooms`},
		{&f.Inbox, `SELECT COUNT(*) || ':' || COALESCE(MAX(rid), 0) || ':' || TOTAL(until) || ':' ||
			TOTAL(rid * CASE state WHEN 'pending' THEN 1 WHEN 'claimed' THEN 2 WHEN 'deferred' THEN 3 WHEN 'handled' THEN 5 ELSE 7 END) FROM inbox`},
		{&f.Outbox, `SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || TOTAL(updated_at) || ':' || TOTAL(attempts) FROM outbox`},
		{&f.Drafts, `SELECT COUNT(*) || ':' || COALESCE(MAX(rid), 0) FROM drafts`},
		{&f.Processes, `SELECT COUNT(*) || ':' || COALESCE(MAX(beat_at), 0) || ':' || TOTAL(stopped_at) || ':' || TOTAL(calls) FROM heartbeats`},
		{&f.Wake, `SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || TOTAL(started_at) || ':' || TOTAL(ended_at) || ':' ||
			TOTAL(claimed_at) || ':' || TOTAL(acked_at) || ':' || TOTAL(LENGTH(state)) FROM wake_log) || '/' ||
			(SELECT COUNT(*) || ':' || TOTAL(since) || ':' || TOTAL(until) FROM wake_leases)`},
		{&f.Mail, `SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || TOTAL(read) || ':' || TOTAL(accepted_at) || ':' ||
			TOTAL(LENGTH(delivery)) || ':' || TOTAL(LENGTH(last_error)) FROM mail_letters) || '/' ||
			(SELECT COUNT(*) || ':' || TOTAL(nonce) || ':' || TOTAL(receive_until) FROM mail_cards) || '/' ||
			(SELECT COUNT(*) || ':' || TOTAL(LENGTH(routes)) FROM mail_pending)`},
		{&f.Knowledge, `SELECT COUNT(*) || ':' || TOTAL(updated_at) || ':' || TOTAL(LENGTH(results)) FROM knowledge_submitted`},
		{&f.Delegation, `SELECT COUNT(*) || ':' || TOTAL(seen_at) || ':' || TOTAL(checked_at) || ':' || TOTAL(signed) FROM delegation_credentials`},
	}
	for _, p := range parts {
		if err := q.queryRow(ctx, p.query).Scan(p.dst); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

// LetterRef is a stored letter's id and key, without its content.
type LetterRef struct {
	ID                           int64
	Direction, Sender, MessageID string
}

// LetterRefs lists the id and key of every stored letter, in the order
// they were stored (no blob is read).
func (q Q) LetterRefs(ctx context.Context) ([]LetterRef, error) {
	rows, err := q.query(ctx, `SELECT id, direction, sender, message_id FROM mail_letters ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LetterRef
	for rows.Next() {
		var r LetterRef
		if err := rows.Scan(&r.ID, &r.Direction, &r.Sender, &r.MessageID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
