package store

import (
	"context"
	"strconv"
	"strings"
)

// Room is one locally known room: its sync position, the materialized
// snapshot, the read cursor, the failure mark and the columns rooms_list
// filters on.
type Room struct {
	Key    int64  // local key, used by every other table
	Host   string // host origin
	RoomID string // room id on that host
	// HasSnapshot is true once the genesis record is verified (the
	// materialized room is read with Blobs).
	HasSnapshot  bool
	HeadSeq      int64  // verified room head
	HeadHash     string // its record hash
	SyncedSeq    int64  // latest verified record
	SyncedHash   string // its record hash
	RemoteSeq    int64  // latest seq the host advertised
	OldestSeq    int64  // oldest record kept locally (0 when none)
	Subscribed   bool   // followed live because the agent asked
	ReadSeq      int64  // read cursor
	PendingInbox int64  // inbox items of the room in state pending
	// Failure is set while the room is marked as failing verification.
	Failure    *Failure
	Listing          // columns derived from the snapshot
	StatusesAt int64 // when the agent status list was last read whole
	OpenedAt   int64 // when the room was first known locally
	UpdatedAt  int64 // last change
}

// Listing holds the columns derived from the materialized room that lists
// filter on without parsing snapshots.
type Listing struct {
	Closed    string // "ended" or "cancelled" after a room.close / room.cancel record
	StartTime int64  // effective start_time
	EndTime   int64  // effective end_time
	SelfRole  string // the agent's role ("" when never a member)
	SelfState string // "", "active", "left", "removed" or "banned"
	IsCreator bool   // the agent created the room
}

// Failure marks a room whose record failed verification: nothing after it
// is applied until a clean resync.
type Failure struct {
	Seq     int64  // the failing record's seq
	Code    string // error code (adp/identity)
	Message string // what was wrong
	At      int64  // when it was detected, Unix ms
}

const roomColumns = `id, host, room_id, snapshot IS NOT NULL, head_seq, head_hash, synced_seq, synced_hash,
	remote_seq, oldest_seq, subscribed, read_seq, pending_inbox, fail_seq, fail_code, fail_message,
	failed_at, closed, start_time, end_time, self_role, self_state, is_creator,
	statuses_at, opened_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanRoom(s scanner) (*Room, error) {
	var r Room
	var sub, creator int64
	var f Failure
	if err := s.Scan(&r.Key, &r.Host, &r.RoomID, &r.HasSnapshot, &r.HeadSeq, &r.HeadHash, &r.SyncedSeq, &r.SyncedHash,
		&r.RemoteSeq, &r.OldestSeq, &sub, &r.ReadSeq, &r.PendingInbox, &f.Seq, &f.Code, &f.Message,
		&f.At, &r.Closed, &r.StartTime, &r.EndTime, &r.SelfRole, &r.SelfState, &creator,
		&r.StatusesAt, &r.OpenedAt, &r.UpdatedAt); err != nil {
		return nil, notFound(err)
	}
	r.Subscribed, r.IsCreator = sub != 0, creator != 0
	if f.Seq != 0 || f.Code != "" {
		r.Failure = &f
	}
	return &r, nil
}

// Room returns a room by its local key.
func (q Q) Room(ctx context.Context, key int64) (*Room, error) {
	return scanRoom(q.queryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE id = ?`, key))
}

// scanRooms reads every room of rows, and closes them.
func scanRooms(rows rowsScanner) ([]*Room, error) {
	defer rows.Close()
	var out []*Room
	for rows.Next() {
		r, err := scanRoom(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RoomAt returns the room (host, roomID), or ErrNotFound.
func (q Q) RoomAt(ctx context.Context, host, roomID string) (*Room, error) {
	return scanRoom(q.queryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE host = ? AND room_id = ?`, host, roomID))
}

// RoomKeys returns (key, host) of every known room with this room id, on
// any host, ordered by host.
func (q Q) RoomKeys(ctx context.Context, roomID string) ([]RoomRef, error) {
	rows, err := q.query(ctx, `SELECT id, host FROM rooms WHERE room_id = ? ORDER BY host`, roomID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RoomRef
	for rows.Next() {
		ref := RoomRef{RoomID: roomID}
		if err := rows.Scan(&ref.Key, &ref.Host); err != nil {
			return nil, err
		}
		out = append(out, ref)
	}
	return out, rows.Err()
}

// RoomsByID returns every known room with this room id, on any host,
// ordered by host: RoomKeys with the rows, in one query.
func (q Q) RoomsByID(ctx context.Context, roomID string) ([]*Room, error) {
	rows, err := q.query(ctx, `SELECT `+roomColumns+` FROM rooms WHERE room_id = ? ORDER BY host`, roomID)
	if err != nil {
		return nil, err
	}
	return scanRooms(rows)
}

// RoomRef names a room: its local key, host and room id.
type RoomRef struct {
	Key    int64
	Host   string
	RoomID string
}

// EnsureRoom returns the room (host, roomID), creating an empty row (nothing
// synced yet) when it is not known.
func (t *Tx) EnsureRoom(ctx context.Context, host, roomID string, now int64) (*Room, error) {
	if _, err := t.exec(ctx, `INSERT INTO rooms (host, room_id, opened_at, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (host, room_id) DO NOTHING`, host, roomID, now, now); err != nil {
		return nil, err
	}
	return t.RoomAt(ctx, host, roomID)
}

// SetSubscribed records whether the agent asked to follow the room live.
func (t *Tx) SetSubscribed(ctx context.Context, key int64, on bool, now int64) error {
	_, err := t.exec(ctx, `UPDATE rooms SET subscribed = ?, updated_at = ? WHERE id = ?`, boolInt(on), now, key)
	return err
}

// SetRemote records what the host advertised: the latest seq (kept when
// smaller than what is known) and, when resource is not nil, the room
// resource it sent.
func (t *Tx) SetRemote(ctx context.Context, key, remoteSeq int64, resource []byte, now int64) error {
	if resource != nil {
		_, err := t.exec(ctx, `UPDATE rooms SET remote_seq = MAX(remote_seq, ?), resource = ?, updated_at = ? WHERE id = ?`,
			remoteSeq, resource, now, key)
		return err
	}
	_, err := t.exec(ctx, `UPDATE rooms SET remote_seq = MAX(remote_seq, ?) WHERE id = ?`, remoteSeq, key)
	return err
}

// MarkFailed marks a room as failing verification at a record. Nothing is
// applied to it afterwards until a resync batch succeeds.
func (t *Tx) MarkFailed(ctx context.Context, key int64, f Failure) error {
	_, err := t.exec(ctx, `UPDATE rooms SET fail_seq = ?, fail_code = ?, fail_message = ?, failed_at = ?, updated_at = ? WHERE id = ?`,
		f.Seq, f.Code, f.Message, f.At, f.At, key)
	return err
}

// SetReadSeq moves the read cursor forward to seq (never backwards, never
// past the latest verified record) and returns the cursor.
func (t *Tx) SetReadSeq(ctx context.Context, key, seq int64) (int64, error) {
	var cur int64
	err := t.queryRow(ctx, `UPDATE rooms SET read_seq = MAX(read_seq, MIN(?, synced_seq)) WHERE id = ? RETURNING read_seq`, seq, key).Scan(&cur)
	return cur, notFound(err)
}

// SetStatusesAt records when the agent status list was read whole.
func (t *Tx) SetStatusesAt(ctx context.Context, key, at int64) error {
	_, err := t.exec(ctx, `UPDATE rooms SET statuses_at = ? WHERE id = ?`, at, key)
	return err
}

// RoomFilter selects rooms for ListRooms.
type RoomFilter struct {
	// Membership is "", "all", "member", "creator", "moderator" or
	// "pending" (an own join request awaits review).
	Membership string
	// Status is "", "scheduled", "active", "ended" or "cancelled",
	// evaluated at Now from the listing columns.
	Status string
	// Now is the time status is evaluated at, Unix ms.
	Now int64
	// Host, when set, keeps only the rooms of that host origin.
	Host string
	// AfterKey pages: only rooms with a greater key.
	AfterKey int64
	// Limit caps the result (at most 1000).
	Limit int
}

// statusExpr is the room status at ?now (rooms.closed, start_time,
// end_time); rooms never synced have start_time 0 and read as unknown.
const statusExpr = `CASE WHEN closed != '' THEN closed
	WHEN snapshot IS NULL THEN 'unknown'
	WHEN ?1 >= end_time THEN 'ended'
	WHEN ?1 >= start_time THEN 'active'
	ELSE 'scheduled' END`

// ListRooms lists rooms in key order.
func (q Q) ListRooms(ctx context.Context, f RoomFilter) ([]*Room, error) {
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	var where []string
	switch f.Membership {
	case "member":
		where = append(where, `self_state = 'active'`)
	case "creator":
		where = append(where, `is_creator = 1`)
	case "moderator":
		where = append(where, `self_state = 'active' AND self_role = 'moderator'`)
	case "pending":
		where = append(where, `EXISTS (SELECT 1 FROM join_requests j WHERE j.room = rooms.id AND j.own = 1 AND j.status = 'pending')`)
	}
	if f.Status != "" {
		where = append(where, `(`+statusExpr+`) = ?2`)
	}
	where = append(where, `(?4 = '' OR host = ?4)`, `id > ?3`)
	query := `SELECT ` + roomColumns + ` FROM rooms WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id LIMIT ` + strconv.Itoa(limit)
	rows, err := q.query(ctx, query, f.Now, f.Status, f.AfterKey, f.Host)
	if err != nil {
		return nil, err
	}
	return scanRooms(rows)
}

// LiveRooms returns the rooms to follow live: where the agent is an active
// member, that it subscribed to or that it watches event types of, and that
// are not marked as failing.
func (q Q) LiveRooms(ctx context.Context) ([]RoomRef, error) {
	rows, err := q.query(ctx, `SELECT id, host, room_id FROM rooms
		WHERE (self_state = 'active' OR subscribed = 1 OR EXISTS (SELECT 1 FROM room_watches w WHERE w.room = rooms.id))
		AND fail_seq = 0 AND fail_code = '' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RoomRef
	for rows.Next() {
		var ref RoomRef
		if err := rows.Scan(&ref.Key, &ref.Host, &ref.RoomID); err != nil {
			return nil, err
		}
		out = append(out, ref)
	}
	return out, rows.Err()
}

// RoomPosition is the sync position of a room, read cheaply.
type RoomPosition struct {
	HeadSeq, SyncedSeq, RemoteSeq, ReadSeq, PendingInbox, OldestSeq int64
	HeadHash, SyncedHash                                            string
	Subscribed                                                      bool
	Failed                                                          bool
}

// Position returns the sync position of a room without its blobs.
func (q Q) Position(ctx context.Context, key int64) (*RoomPosition, error) {
	var p RoomPosition
	var sub, fail int64
	err := q.queryRow(ctx, `SELECT head_seq, head_hash, synced_seq, synced_hash, remote_seq, read_seq, pending_inbox,
		oldest_seq, subscribed, (fail_seq != 0 OR fail_code != '') FROM rooms WHERE id = ?`, key).Scan(
		&p.HeadSeq, &p.HeadHash, &p.SyncedSeq, &p.SyncedHash, &p.RemoteSeq, &p.ReadSeq, &p.PendingInbox,
		&p.OldestSeq, &sub, &fail)
	if err != nil {
		return nil, notFound(err)
	}
	p.Subscribed, p.Failed = sub != 0, fail != 0
	return &p, nil
}

// Blobs are the large columns of a room row.
type Blobs struct {
	Snapshot   []byte // adp.Room JSON; nil until the genesis record is verified
	ActiveTurn []byte // ActiveTurn JSON, nil when none
	Resource   []byte // latest room resource read from the host, nil when none
	SyncedSeq  int64  // the position the snapshot is at
	SyncedHash string
}

// Blobs returns the snapshot, active turn and resource of a room with the
// position they belong to.
func (q Q) Blobs(ctx context.Context, key int64) (*Blobs, error) {
	var b Blobs
	err := q.queryRow(ctx, `SELECT snapshot, active_turn, resource, synced_seq, synced_hash FROM rooms WHERE id = ?`, key).
		Scan(&b.Snapshot, &b.ActiveTurn, &b.Resource, &b.SyncedSeq, &b.SyncedHash)
	if err != nil {
		return nil, notFound(err)
	}
	return &b, nil
}
