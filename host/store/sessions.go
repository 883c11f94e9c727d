package store

import (
	"context"
)

// Session limits: sessions unused for SessionMaxAge, or beyond the newest
// SessionMaxCount, are forgotten with their presented heads. Held drafts and
// inbox claims belong to the Agent ID and survive them.
const (
	SessionMaxAgeMS = 30 * 24 * 60 * 60 * 1000
	SessionMaxCount = 256
)

// sessionTouchMS is how stale last_used_at may be before a read refreshes
// it, so that reads do not write on every call.
const sessionTouchMS = 60 * 1000

// TouchSession records that an MCP session was used at now, creating it
// when new; a new session triggers forgetting old ones (ForgetSessions).
func (t *Tx) TouchSession(ctx context.Context, id string, now int64) error {
	n, err := t.execN(ctx, `INSERT INTO sessions (id, created_at, last_used_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`, id, now, now)
	if err != nil {
		return err
	}
	if n > 0 {
		_, err := t.ForgetSessions(ctx, now)
		return err
	}
	_, err = t.exec(ctx, `UPDATE sessions SET last_used_at = ? WHERE id = ? AND last_used_at < ?`, now, id, now-sessionTouchMS)
	return err
}

// SessionFresh reports whether a session exists and was used within the
// touch interval (so a reader need not write to keep it fresh).
func (q Q) SessionFresh(ctx context.Context, id string, now int64) (bool, error) {
	var used int64
	err := q.queryRow(ctx, `SELECT last_used_at FROM sessions WHERE id = ?`, id).Scan(&used)
	if notFound(err) == ErrNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return used >= now-sessionTouchMS, nil
}

// ForgetSessions deletes sessions unused for SessionMaxAgeMS and those beyond
// the newest SessionMaxCount (by last use), with their presented heads. It
// returns how many it deleted.
func (t *Tx) ForgetSessions(ctx context.Context, now int64) (int64, error) {
	a, err := t.execN(ctx, `DELETE FROM sessions WHERE last_used_at < ?`, now-SessionMaxAgeMS)
	if err != nil {
		return 0, err
	}
	b, err := t.execN(ctx, `DELETE FROM sessions WHERE id IN (
		SELECT id FROM sessions ORDER BY last_used_at DESC, id LIMIT -1 OFFSET ?)`, SessionMaxCount)
	return a + b, err
}

// Presented returns the head most recently presented to a session for a
// room; ok is false when none was.
func (q Q) Presented(ctx context.Context, session string, key int64) (seq int64, hash string, ok bool, err error) {
	err = q.queryRow(ctx, `SELECT seq, hash FROM presented WHERE session = ? AND room = ?`, session, key).Scan(&seq, &hash)
	if notFound(err) == ErrNotFound {
		return 0, "", false, nil
	}
	return seq, hash, err == nil, err
}

// SetPresented records the head presented to a session for a room (the
// session must exist: call TouchSession first in the same transaction).
func (t *Tx) SetPresented(ctx context.Context, session string, key, seq int64, hash string) error {
	_, err := t.exec(ctx, `INSERT INTO presented (session, room, seq, hash) VALUES (?, ?, ?, ?)
		ON CONFLICT (session, room) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`, session, key, seq, hash)
	return err
}

// SessionCount returns the number of known sessions.
func (q Q) SessionCount(ctx context.Context) (int64, error) {
	var n int64
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&n)
	return n, err
}
