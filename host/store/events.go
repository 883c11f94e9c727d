package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
)

// Event is one verified record of a room's window with its timeline item.
type Event struct {
	Seq     int64  // record seq
	Hash    string // record hash
	EventID string // envelope hash (event ID)
	Type    string // event type
	Actor   string // signer, "" for a redacted record
	// HeadSeq and HeadHash are the room head after this record.
	HeadSeq  int64
	HeadHash string
	Record   []byte // the server record, canonical JSON
	Item     []byte // the timeline item JSON
}

// InboxEntry is an inbox item to insert. ID must be derived from
// (host, room_id, Kind, Seq, EventID) so a second insert is a no-op.
type InboxEntry struct {
	ID        string
	Kind      string
	Seq       int64
	EventID   string
	Priority  int   // 0 high, 1 normal, 2 low
	CreatedAt int64 // Unix ms
	Item      []byte
}

// RoomState is the room after a batch: everything ApplyBatch writes to the
// rooms row.
type RoomState struct {
	Snapshot   []byte
	HeadSeq    int64
	HeadHash   string
	SyncedSeq  int64
	SyncedHash string
	ActiveTurn []byte // nil: no active turn
	Listing
}

// Batch is a run of verified records of one room with everything they
// cause, applied in one transaction.
type Batch struct {
	// ExpectSeq and ExpectHash are the synced position the records were
	// verified against (0 and "" for a room's first batch).
	ExpectSeq  int64
	ExpectHash string
	// Resync allows applying to a room marked as failing and clears the
	// mark when Failure is nil.
	Resync bool
	// Events are the verified records, in seq order, continuing the
	// expected position.
	Events []Event
	// Inbox are the items the records cause.
	Inbox []InboxEntry
	// State is the room after the records; nil when no record was applied.
	State *RoomState
	// Failure, when set, marks the room: the record at Failure.Seq failed
	// verification (the records before it are still applied).
	Failure *Failure
	// Now is the transaction time, Unix ms.
	Now int64
	// SkipThrough, when positive, leaves the events at or below it out of
	// the window: a catch-up whose host is more than a window ahead would
	// prune them before it ends (RestoreWindow puts back those still inside
	// the window when it ends early). The room's oldest kept seq becomes
	// at least SkipThrough+1.
	SkipThrough int64
}

// BatchResult tells what ApplyBatch did.
type BatchResult struct {
	// Inserted are the ids of the inbox items that were new.
	Inserted []string
}

// ApplyBatch applies a verified batch in the current transaction: the
// records (window pruned to the configured size), their inbox items
// (deduplicated by id, counters maintained), the room state, and the
// failure mark. It returns ErrConflict when the room is not at
// (ExpectSeq, ExpectHash) — records were applied meanwhile, by this or
// another process; verify again from the new position — and ErrRoomFailed
// when the room is marked as failing and the batch is not a resync.
func (t *Tx) ApplyBatch(ctx context.Context, key int64, b *Batch) (*BatchResult, error) {
	var syncedSeq, failSeq int64
	var syncedHash, failCode string
	err := t.queryRow(ctx, `SELECT synced_seq, synced_hash, fail_seq, fail_code FROM rooms WHERE id = ?`, key).Scan(&syncedSeq, &syncedHash, &failSeq, &failCode)
	if err != nil {
		return nil, notFound(err)
	}
	if syncedSeq != b.ExpectSeq || syncedHash != b.ExpectHash {
		return nil, ErrConflict
	}
	if (failSeq != 0 || failCode != "") && !b.Resync {
		return nil, ErrRoomFailed
	}
	res := &BatchResult{}
	if err := t.indexEnvelopes(ctx, key, b.Events); err != nil {
		return nil, err
	}
	for _, e := range b.Events {
		if e.Seq <= b.SkipThrough {
			continue
		}
		if _, err := t.exec(ctx, `INSERT INTO events (room, seq, hash, event_id, type, actor, head_seq, head_hash, record, item)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			key, e.Seq, e.Hash, e.EventID, e.Type, e.Actor, e.HeadSeq, e.HeadHash, e.Record, e.Item); err != nil {
			return nil, err
		}
	}
	var added int64
	for _, it := range b.Inbox {
		n, err := t.execN(ctx, `INSERT INTO inbox (id, room, kind, seq, event_id, prio, state, created_at, item)
			VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (id) DO NOTHING`,
			it.ID, key, it.Kind, it.Seq, it.EventID, it.Priority, it.CreatedAt, it.Item)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			added++
			res.Inserted = append(res.Inserted, it.ID)
		}
	}
	if added > 0 {
		if err := t.addPending(ctx, key, added); err != nil {
			return nil, err
		}
	}
	if s := b.State; s != nil {
		oldest := int64(0)
		if s.SyncedSeq > 0 {
			oldest = max(1, s.SyncedSeq-t.window+1)
			if len(b.Events) > 0 && b.ExpectSeq == 0 {
				oldest = max(oldest, b.Events[0].Seq)
			}
			if b.SkipThrough > 0 {
				oldest = max(oldest, b.SkipThrough+1)
			}
		}
		if _, err := t.exec(ctx, `UPDATE rooms SET snapshot = ?, head_seq = ?, head_hash = ?, synced_seq = ?, synced_hash = ?,
			remote_seq = MAX(remote_seq, ?), active_turn = ?, closed = ?, start_time = ?, end_time = ?, self_role = ?,
			self_state = ?, is_creator = ?, oldest_seq = CASE WHEN oldest_seq = 0 THEN ? ELSE MAX(oldest_seq, ?) END,
			updated_at = ? WHERE id = ?`,
			s.Snapshot, s.HeadSeq, s.HeadHash, s.SyncedSeq, s.SyncedHash, s.SyncedSeq, s.ActiveTurn, s.Closed,
			s.StartTime, s.EndTime, s.SelfRole, s.SelfState, boolInt(s.IsCreator), oldest, oldest, b.Now, key); err != nil {
			return nil, err
		}
		if err := t.prune(ctx, key, s.SyncedSeq-t.window); err != nil {
			return nil, err
		}
	}
	switch {
	case b.Failure != nil:
		if err := t.MarkFailed(ctx, key, *b.Failure); err != nil {
			return nil, err
		}
	case b.Resync:
		if _, err := t.exec(ctx, `UPDATE rooms SET fail_seq = 0, fail_code = '', fail_message = '', failed_at = 0 WHERE id = ?`, key); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// RestoreWindow stores events a catch-up left out (Batch.SkipThrough) that
// are inside the window of the room's synced position after all, because
// the catch-up ended before reaching the host's end: the window then holds
// what it would have held had every record been stored. Events above the
// synced position, or already stored, are ignored. It returns how many
// were stored.
func (t *Tx) RestoreWindow(ctx context.Context, key int64, events []Event) (int, error) {
	var synced int64
	if err := t.queryRow(ctx, `SELECT synced_seq FROM rooms WHERE id = ?`, key).Scan(&synced); err != nil {
		return 0, notFound(err)
	}
	first, n := int64(0), 0
	for _, e := range events {
		if e.Seq > synced || e.Seq <= synced-t.window {
			continue
		}
		added, err := t.execN(ctx, `INSERT INTO events (room, seq, hash, event_id, type, actor, head_seq, head_hash, record, item)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (room, seq) DO NOTHING`,
			key, e.Seq, e.Hash, e.EventID, e.Type, e.Actor, e.HeadSeq, e.HeadHash, e.Record, e.Item)
		if err != nil {
			return n, err
		}
		if added > 0 {
			n++
			if first == 0 || e.Seq < first {
				first = e.Seq
			}
		}
	}
	if n > 0 {
		if _, err := t.exec(ctx, `UPDATE rooms SET oldest_seq = CASE WHEN oldest_seq = 0 THEN ? ELSE MIN(oldest_seq, ?) END WHERE id = ?`,
			first, first, key); err != nil {
			return n, err
		}
	}
	return n, nil
}

// prune drops records at or below through, and acknowledged inbox items of
// those records (they can never be created again: records below the window
// are never applied again).
func (t *Tx) prune(ctx context.Context, key, through int64) error {
	if through < 1 {
		return nil
	}
	if _, err := t.exec(ctx, `DELETE FROM events WHERE room = ? AND seq <= ?`, key, through); err != nil {
		return err
	}
	_, err := t.exec(ctx, `DELETE FROM inbox WHERE room = ? AND seq > 0 AND seq <= ? AND state IN ('handled', 'dismissed')`, key, through)
	return err
}

// TimelineQuery selects timeline items of one room.
type TimelineQuery struct {
	AfterSeq  int64    // seq > AfterSeq
	BeforeSeq int64    // seq < BeforeSeq when > 0
	Types     []string // only these types when not empty
	Actors    []string // only these actors when not empty
	Limit     int      // at most this many (capped at 1000)
	Newest    bool     // the newest matching items (returned oldest first)
	Records   bool     // also return the records
	// ItemsOnly leaves Hash, EventID, Type and Actor empty: only the seq,
	// the head after the record and the item (and the record with
	// Records), what a page of the timeline shows, are read.
	ItemsOnly bool
}

// Timeline returns the matching items of a room's window, oldest first.
func (q Q) Timeline(ctx context.Context, key int64, tq TimelineQuery) ([]Event, error) {
	limit := tq.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	cols := `seq, hash, event_id, type, actor, head_seq, head_hash, item`
	if tq.ItemsOnly {
		cols = `seq, head_seq, head_hash, item`
	}
	if tq.Records {
		cols += `, record`
	}
	args := []any{key, tq.AfterSeq}
	where := []string{`room = ?`, `seq > ?`}
	if tq.BeforeSeq > 0 {
		where = append(where, `seq < ?`)
		args = append(args, tq.BeforeSeq)
	}
	if len(tq.Types) > 0 {
		where = append(where, `type IN (`+placeholders(len(tq.Types))+`)`)
		for _, s := range tq.Types {
			args = append(args, s)
		}
	}
	if len(tq.Actors) > 0 {
		where = append(where, `actor IN (`+placeholders(len(tq.Actors))+`)`)
		for _, s := range tq.Actors {
			args = append(args, s)
		}
	}
	order := `ASC`
	if tq.Newest {
		order = `DESC`
	}
	query := `SELECT ` + cols + ` FROM events WHERE ` + strings.Join(where, " AND ") + ` ORDER BY seq ` + order + ` LIMIT ` + strconv.Itoa(limit)
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		dest := []any{&e.Seq, &e.Hash, &e.EventID, &e.Type, &e.Actor, &e.HeadSeq, &e.HeadHash, &e.Item}
		if tq.ItemsOnly {
			dest = []any{&e.Seq, &e.HeadSeq, &e.HeadHash, &e.Item}
		}
		if tq.Records {
			dest = append(dest, &e.Record)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if tq.Newest {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// UnreadCount returns the number of items after readSeq not written by
// self.
func (q Q) UnreadCount(ctx context.Context, key, readSeq int64, self string) (int64, error) {
	var all, own int64
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM events WHERE room = ? AND seq > ?`, key, readSeq).Scan(&all); err != nil {
		return 0, err
	}
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM events WHERE room = ? AND actor = ? AND seq > ?`, key, self, readSeq).Scan(&own); err != nil {
		return 0, err
	}
	return all - own, nil
}

// RecordHash returns the record hash at seq when the window holds it.
func (q Q) RecordHash(ctx context.Context, key, seq int64) (string, bool, error) {
	var h string
	err := q.queryRow(ctx, `SELECT hash FROM events WHERE room = ? AND seq = ?`, key, seq).Scan(&h)
	if errors.Is(notFound(err), ErrNotFound) {
		return "", false, nil
	}
	return h, err == nil, err
}

// EventByID returns the record of an event ID when the window holds it.
func (q Q) EventByID(ctx context.Context, key int64, eventID string) (*Event, error) {
	var e Event
	err := q.queryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE room = ? AND event_id = ?`,
		key, eventID).Scan(&e.Seq, &e.Hash, &e.EventID, &e.Type, &e.Actor, &e.HeadSeq, &e.HeadHash, &e.Record, &e.Item)
	if err != nil {
		return nil, notFound(err)
	}
	return &e, nil
}

// EventAt returns the record at seq when the window holds it.
func (q Q) EventAt(ctx context.Context, key, seq int64) (*Event, error) {
	var e Event
	err := q.queryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE room = ? AND seq = ?`,
		key, seq).Scan(&e.Seq, &e.Hash, &e.EventID, &e.Type, &e.Actor, &e.HeadSeq, &e.HeadHash, &e.Record, &e.Item)
	if err != nil {
		return nil, notFound(err)
	}
	return &e, nil
}

const eventColumns = `seq, hash, event_id, type, actor, head_seq, head_hash, record, item`
