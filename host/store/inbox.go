package store

import (
	"context"
	"strconv"
	"strings"
)

// Inbox item states.
const (
	InboxPending   = "pending"
	InboxClaimed   = "claimed"
	InboxDeferred  = "deferred"
	InboxHandled   = "handled"
	InboxDismissed = "dismissed"
)

// pendingKey is the meta counter of pending items over all rooms.
const pendingKey = "inbox_pending"

// InboxRow is a stored inbox item: a room's (RoomKey, Host, RoomID set) or
// one of no room (Source set, such as mail:<mailbox_id>).
type InboxRow struct {
	ID        string
	RoomKey   int64
	Host      string
	RoomID    string
	Source    string
	Kind      string
	Seq       int64
	EventID   string
	State     string
	Until     int64
	Session   string
	CreatedAt int64
	Item      []byte
}

const inboxColumns = `i.id, COALESCE(i.room, 0), COALESCE(r.host, ''), COALESCE(r.room_id, ''), i.source, i.kind, i.seq, i.event_id, i.state, i.until, i.session, i.created_at, i.item`

func scanInbox(s scanner) (*InboxRow, error) {
	var r InboxRow
	err := s.Scan(&r.ID, &r.RoomKey, &r.Host, &r.RoomID, &r.Source, &r.Kind, &r.Seq, &r.EventID, &r.State, &r.Until, &r.Session, &r.CreatedAt, &r.Item)
	if err != nil {
		return nil, notFound(err)
	}
	return &r, nil
}

// addPending adjusts the pending counters of a room (key 0: an item of no
// room) and of the whole inbox.
func (t *Tx) addPending(ctx context.Context, key, delta int64) error {
	if delta == 0 {
		return nil
	}
	if key != 0 {
		if _, err := t.exec(ctx, `UPDATE rooms SET pending_inbox = pending_inbox + ? WHERE id = ?`, delta, key); err != nil {
			return err
		}
	}
	_, err := t.addCounter(ctx, pendingKey, delta)
	return err
}

// InsertInbox inserts items of one room outside a record batch (items the
// connector creates itself, such as room.join.requested). Items already
// present (by id) are left as they are. It returns the ids inserted.
func (t *Tx) InsertInbox(ctx context.Context, key int64, items []InboxEntry) ([]string, error) {
	var ids []string
	for _, it := range items {
		n, err := t.execN(ctx, `INSERT INTO inbox (id, room, kind, seq, event_id, prio, state, created_at, item)
			VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (id) DO NOTHING`,
			it.ID, key, it.Kind, it.Seq, it.EventID, it.Priority, it.CreatedAt, it.Item)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			ids = append(ids, it.ID)
		}
	}
	return ids, t.addPending(ctx, key, int64(len(ids)))
}

// InsertSourceInbox inserts items of no room, raised by source (such as
// mail:<mailbox_id>). Items already present (by id) are left as they are.
// It returns the ids inserted.
func (t *Tx) InsertSourceInbox(ctx context.Context, source string, items []InboxEntry) ([]string, error) {
	var ids []string
	for _, it := range items {
		n, err := t.execN(ctx, `INSERT INTO inbox (id, room, source, kind, seq, event_id, prio, state, created_at, item)
			VALUES (?, NULL, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (id) DO NOTHING`,
			it.ID, source, it.Kind, it.Seq, it.EventID, it.Priority, it.CreatedAt, it.Item)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			ids = append(ids, it.ID)
		}
	}
	return ids, t.addPending(ctx, 0, int64(len(ids)))
}

// ReleaseExpired returns claimed items whose lease ended and deferred items
// whose deferral ended to the pending state. It returns how many it
// released.
func (t *Tx) ReleaseExpired(ctx context.Context, now int64) (int64, error) {
	rows, err := t.query(ctx, `UPDATE inbox SET state = 'pending', session = '', until = 0
		WHERE state IN ('claimed', 'deferred') AND until <= ? RETURNING COALESCE(room, 0)`, now)
	if err != nil {
		return 0, err
	}
	perRoom := map[int64]int64{}
	var n int64
	for rows.Next() {
		var room int64
		if err := rows.Scan(&room); err != nil {
			rows.Close()
			return 0, err
		}
		perRoom[room]++
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for room, d := range perRoom {
		if err := t.addPending(ctx, room, d); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// NextExpiry returns the earliest end of a claim or deferral, 0 when none.
func (q Q) NextExpiry(ctx context.Context) (int64, error) {
	var until int64
	err := q.queryRow(ctx, `SELECT COALESCE(MIN(until), 0) FROM inbox WHERE state IN ('claimed', 'deferred')`).Scan(&until)
	return until, err
}

// InboxQuery selects pending items.
type InboxQuery struct {
	RoomKey int64    // only this room when > 0
	Kinds   []string // only these kinds when not empty
	Limit   int      // at most this many (capped at 200)
}

// PendingInbox returns pending items, highest priority first, then oldest
// first.
func (q Q) PendingInbox(ctx context.Context, iq InboxQuery) ([]*InboxRow, error) {
	limit := iq.Limit
	if limit <= 0 || limit > 200 {
		limit = 200
	}
	where := []string{`i.state = 'pending'`}
	var args []any
	if iq.RoomKey > 0 {
		where = append(where, `i.room = ?`)
		args = append(args, iq.RoomKey)
	}
	if len(iq.Kinds) > 0 {
		where = append(where, `i.kind IN (`+placeholders(len(iq.Kinds))+`)`)
		for _, k := range iq.Kinds {
			args = append(args, k)
		}
	}
	query := `SELECT ` + inboxColumns + ` FROM inbox i LEFT JOIN rooms r ON r.id = i.room WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY i.prio, i.rid LIMIT ` + strconv.Itoa(limit)
	rows, err := q.query(ctx, query, args...)
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

// PendingTotal returns the number of pending items over all rooms.
func (q Q) PendingTotal(ctx context.Context) (int64, error) {
	return q.counter(ctx, pendingKey)
}

// InboxItem returns one item by id.
func (q Q) InboxItem(ctx context.Context, id string) (*InboxRow, error) {
	return scanInbox(q.queryRow(ctx, `SELECT `+inboxColumns+` FROM inbox i LEFT JOIN rooms r ON r.id = i.room WHERE i.id = ?`, id))
}

// setState moves one item to state with until and session, adjusting the
// pending counters; it reports whether the item exists and was changed.
func (t *Tx) setState(ctx context.Context, id, state string, until int64, session string, from ...string) (bool, error) {
	var room int64
	var old string
	if err := t.queryRow(ctx, `SELECT COALESCE(room, 0), state FROM inbox WHERE id = ?`, id).Scan(&room, &old); err != nil {
		if notFound(err) == ErrNotFound {
			return false, nil
		}
		return false, err
	}
	if len(from) > 0 && !contains(from, old) {
		return false, nil
	}
	if _, err := t.exec(ctx, `UPDATE inbox SET state = ?, until = ?, session = ? WHERE id = ?`, state, until, session, id); err != nil {
		return false, err
	}
	var delta int64
	if old == InboxPending && state != InboxPending {
		delta = -1
	} else if old != InboxPending && state == InboxPending {
		delta = 1
	}
	return true, t.addPending(ctx, room, delta)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Claim marks pending items as claimed by session until the lease ends.
// It returns the ids actually claimed (items no longer pending are left).
func (t *Tx) Claim(ctx context.Context, ids []string, session string, until int64) ([]string, error) {
	var out []string
	for _, id := range ids {
		ok, err := t.setState(ctx, id, InboxClaimed, until, session, InboxPending)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// Ack acknowledges items: state handled or dismissed (terminal), or
// deferred until a time (pending at once when until <= now). Unknown ids
// are skipped; items already handled or dismissed stay as they are but are
// reported as acknowledged. It returns the ids found.
func (t *Tx) Ack(ctx context.Context, ids []string, state string, until, now int64) ([]string, error) {
	var out []string
	for _, id := range ids {
		target, u := state, int64(0)
		if state == InboxDeferred {
			if until <= now {
				target = InboxPending
			} else {
				u = until
			}
		}
		var ok bool
		var err error
		if state == InboxDeferred {
			ok, err = t.setState(ctx, id, target, u, "", InboxPending, InboxClaimed, InboxDeferred)
		} else {
			ok, err = t.setState(ctx, id, target, 0, "", InboxPending, InboxClaimed, InboxDeferred)
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			// Already acknowledged items are acknowledged; unknown ones are not.
			var st string
			if err := t.queryRow(ctx, `SELECT state FROM inbox WHERE id = ?`, id).Scan(&st); err != nil {
				if notFound(err) == ErrNotFound {
					continue
				}
				return nil, err
			}
		}
		out = append(out, id)
	}
	return out, nil
}

// ResolveRead marks the room.message.new items of a room at or below
// throughSeq handled: the agent read those records.
func (t *Tx) ResolveRead(ctx context.Context, key, throughSeq int64) error {
	const cond = `room = ? AND seq > 0 AND seq <= ? AND kind = 'room.message.new'`
	return t.resolve(ctx, key, cond, key, throughSeq)
}

// ResolveEvent marks the open items of a room with a kind and event ID
// handled (for example room.join.requested once the request is reviewed).
func (t *Tx) ResolveEvent(ctx context.Context, key int64, kind, eventID string) error {
	const cond = `room = ? AND kind = ? AND event_id = ?`
	return t.resolve(ctx, key, cond, key, kind, eventID)
}

// resolve marks the open items matching cond handled and fixes the room's
// pending counter.
func (t *Tx) resolve(ctx context.Context, key int64, cond string, args ...any) error {
	var pending int64
	if err := t.queryRow(ctx, `SELECT COUNT(*) FROM inbox WHERE `+cond+` AND state = 'pending'`, args...).Scan(&pending); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `UPDATE inbox SET state = 'handled', until = 0, session = '' WHERE `+cond+
		` AND state IN ('pending', 'claimed', 'deferred')`, args...); err != nil {
		return err
	}
	return t.addPending(ctx, key, -pending)
}
