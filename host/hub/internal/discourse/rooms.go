package discourse

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/proto/adp"
)

// roomEntry is a room's in-memory state: the materialized adp.Room, the
// write-through copy of the room's stored snapshot and records.
//
// mu is held exclusively by a write from its Check until its record has
// committed and been fanned out (or the write aborted); readers hold it
// shared. A write that aborts after changing room marks the entry evicted
// and drops it from the cache; whoever waited on mu then loads the room
// again.
type roomEntry struct {
	mu          sync.RWMutex
	id          string
	room        *adp.Room
	snapshotSeq int64 // seq of the stored snapshot
	evicted     bool
}

// roomCache holds the rooms loaded so far.
type roomCache struct {
	mu sync.Mutex
	m  map[string]*roomEntry
}

func newRoomCache() *roomCache { return &roomCache{m: map[string]*roomEntry{}} }

// entry returns the room's entry, loading it through q on a miss; nil when
// no such room exists. q must see a consistent committed state (the write
// transaction, or a read transaction).
func (s *Service) entry(ctx context.Context, q hubhttp.Querier, id string) (*roomEntry, error) {
	if !adp.ValidRoomID(id) {
		return nil, nil
	}
	c := s.rooms
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil {
		return e, nil
	}
	e, err := s.loadRoom(ctx, q, id)
	if err != nil || e == nil {
		return nil, err
	}
	c.m[id] = e
	return e, nil
}

// put caches a room created by a committed write, unless a reader loaded
// it from the database in the meantime (that entry may already be ahead).
func (s *Service) put(e *roomEntry) {
	s.rooms.mu.Lock()
	if s.rooms.m[e.id] == nil {
		s.rooms.m[e.id] = e
	}
	s.rooms.mu.Unlock()
}

// evict drops e from the cache; the caller holds e.mu exclusively.
func (s *Service) evict(e *roomEntry) {
	e.evicted = true
	s.rooms.mu.Lock()
	if s.rooms.m[e.id] == e {
		delete(s.rooms.m, e.id)
	}
	s.rooms.mu.Unlock()
}

// loadRoom reads a room's snapshot and replays the records after it. A
// snapshot_seq of 0 (a room whose snapshot predates the current rules)
// replays the whole history from the genesis record instead.
func (s *Service) loadRoom(ctx context.Context, q hubhttp.Querier, id string) (*roomEntry, error) {
	var snap []byte
	var snapSeq int64
	err := q.QueryRowContext(ctx, `SELECT snapshot, snapshot_seq FROM adp_rooms WHERE id = ?`, id).Scan(&snap, &snapSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var room *adp.Room
	if snapSeq > 0 {
		room = new(adp.Room)
		if err := json.Unmarshal(snap, room); err != nil {
			return nil, fmt.Errorf("discourse: room %s snapshot: %w", id, err)
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT record FROM adp_records WHERE room_id = ? AND seq > ? ORDER BY seq`, id, snapSeq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		rec, err := adp.ParseRecord(raw)
		if err != nil {
			return nil, fmt.Errorf("discourse: room %s stored record: %w", id, err)
		}
		if room == nil {
			if room, err = adp.NewRoom(s.rules, rec); err != nil {
				return nil, fmt.Errorf("discourse: room %s replaying its genesis record: %w", id, err)
			}
			continue
		}
		if err := room.Apply(s.rules, rec); err != nil {
			return nil, fmt.Errorf("discourse: room %s replaying seq %d: %w", id, rec.Seq, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if room == nil {
		return nil, fmt.Errorf("discourse: room %s has no stored records to replay", id)
	}
	return &roomEntry{id: id, room: room, snapshotSeq: snapSeq}, nil
}

// readRoom returns the room's entry locked for reading, loading it in a read
// transaction on a miss. The caller calls unlock. A missing room is
// room_not_found.
func (s *Service) readRoom(ctx context.Context, id string) (e *roomEntry, unlock func(), err error) {
	for {
		s.rooms.mu.Lock()
		e = s.rooms.m[id]
		s.rooms.mu.Unlock()
		if e == nil {
			tx, err := s.db.Reader().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			if err != nil {
				return nil, nil, err
			}
			e, err = s.entry(ctx, tx, id)
			_ = tx.Rollback()
			if err != nil {
				return nil, nil, err
			}
		}
		if e == nil {
			return nil, nil, roomNotFound(id)
		}
		e.mu.RLock()
		if !e.evicted {
			return e, e.mu.RUnlock, nil
		}
		e.mu.RUnlock()
	}
}

// writeRoom returns the room's entry locked exclusively for the write w's
// transaction: the lock is released once the transaction has ended and its
// writes have published (or undone) what they did. A later write of the same
// transaction reuses the lock (the writes run one after the other). A
// missing room is room_not_found.
func (s *Service) writeRoom(ctx context.Context, w *hubhttp.Write, id string) (*roomEntry, error) {
	for {
		e, err := s.entry(ctx, w.Tx, id)
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, roomNotFound(id)
		}
		if w.Holds(e) {
			return e, nil // evicted entries leave the cache: e is current
		}
		e.mu.Lock()
		if !e.evicted {
			w.Hold(e, e.mu.Unlock)
			return e, nil
		}
		e.mu.Unlock()
	}
}

// recordJSON renders a server record (ADP 14) with the envelope exactly as
// it was submitted (compacted): what every read and stream returns.
func recordJSON(rec *adp.Record, rawEnvelope []byte) []byte {
	b := make([]byte, 0, len(rawEnvelope)+220)
	b = append(b, `{"room_id":"`...)
	b = append(b, rec.RoomID...)
	b = append(b, `","seq":`...)
	b = strconv.AppendInt(b, rec.Seq, 10)
	b = append(b, `,"pre_hash":`...)
	if rec.PreHash == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, rec.PreHash...)
		b = append(b, '"')
	}
	b = append(b, `,"hash":"`...)
	b = append(b, rec.Hash...)
	b = append(b, `","accepted_at":`...)
	b = strconv.AppendInt(b, rec.AcceptedAt, 10)
	b = append(b, `,"envelope":`...)
	b = append(b, rawEnvelope...)
	return append(b, '}')
}

// The statements of the write path, prepared once (hubdb.DB.Prepare).
const (
	insertRecordSQL = `INSERT INTO adp_records (room_id, seq, hash, event_hash, type, actor, accepted_at, record)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	touchRoomSQL    = `UPDATE adp_rooms SET last_seq = ?, last_accepted_at = ? WHERE id = ?`
	recordHashSQL   = `SELECT hash FROM adp_records WHERE room_id = ? AND seq = ?`
	hasEventSQL     = `SELECT 1 FROM adp_records WHERE event_hash = ? AND room_id = ?`
	joinRequestSQL  = `SELECT status, expires_at FROM adp_join_requests WHERE id = ? AND room_id = ?`
	relateSQL       = `INSERT INTO adp_room_agents (agent_id, room_id) VALUES (?, ?) ON CONFLICT DO NOTHING`
	snapshotRoomSQL = `UPDATE adp_rooms SET last_seq = ?, last_accepted_at = ?, snapshot = ?, snapshot_seq = ?,
		topic = ?, agenda = ?, tags = ?, language = ?, start_time = ?, end_time = ?, closed = ? WHERE id = ?`
)

// writeStatements are the queries New prepares.
var writeStatements = []string{insertRecordSQL, touchRoomSQL, recordHashSQL, hasEventSQL, joinRequestSQL, relateSQL, snapshotRoomSQL}

// insertRecord stores a record.
func (s *Service) insertRecord(ctx context.Context, tx *sql.Tx, rec *adp.Record, raw []byte) error {
	_, err := s.db.Exec(ctx, tx, insertRecordSQL, rec.RoomID, rec.Seq, rec.Hash, rec.EnvelopeHash(), rec.Type(), rec.Actor(), rec.AcceptedAt, raw)
	return err
}

// contractColumns are the discovery columns of adp_rooms, from the room.
func contractColumns(r *adp.Room) (topic, agenda, tags, language string, start, end int64, closed any) {
	t := r.Tags
	if t == nil {
		t = []string{}
	}
	tb, _ := json.Marshal(t)
	if r.Closed != nil {
		closed = string(r.Closed.Status)
	}
	return r.Topic, r.Agenda, string(tb), r.Language, r.StartTime, r.EndTime, closed
}

// saveRoom updates the room row after a record: the latest record always,
// and the snapshot with the contract columns when snapshot is set.
func (s *Service) saveRoom(ctx context.Context, tx *sql.Tx, e *roomEntry, snapshot bool) error {
	r := e.room
	if !snapshot {
		_, err := s.db.Exec(ctx, tx, touchRoomSQL, r.Last.Seq, r.Last.AcceptedAt, e.id)
		return err
	}
	snap, err := json.Marshal(r)
	if err != nil {
		return err
	}
	topic, agenda, tags, lang, start, end, closed := contractColumns(r)
	_, err = s.db.Exec(ctx, tx, snapshotRoomSQL,
		r.Last.Seq, r.Last.AcceptedAt, snap, r.Last.Seq, topic, agenda, tags, lang, start, end, closed, e.id)
	if err == nil {
		e.snapshotSeq = r.Last.Seq
	}
	return err
}

// relate records agents related to a room (for /v1/me/rooms).
func (s *Service) relate(ctx context.Context, tx *sql.Tx, roomID string, agents ...string) error {
	for _, a := range agents {
		if _, err := s.db.Exec(ctx, tx, relateSQL, a, roomID); err != nil {
			return err
		}
	}
	return nil
}
