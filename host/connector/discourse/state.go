package discourse

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"apconnect/host/engine"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
)

// stateCache keeps parsed room snapshots by room key, valid while the
// room's synced position is unchanged (another process applying records
// moves it, which invalidates the entry). Cached states are never mutated.
type stateCache struct {
	mu  sync.Mutex
	max int
	m   map[int64]*cachedState
	seq uint64
}

type cachedState struct {
	syncedSeq  int64
	syncedHash string
	state      *room.State
	used       uint64
}

func newStateCache(max int) *stateCache { return &stateCache{max: max, m: map[int64]*cachedState{}} }

func (s *stateCache) get(key, seq int64, hash string) *room.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok || e.syncedSeq != seq || e.syncedHash != hash {
		return nil
	}
	s.seq++
	e.used = s.seq
	return e.state
}

func (s *stateCache) put(key, seq int64, hash string, st *room.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.m[key] = &cachedState{syncedSeq: seq, syncedHash: hash, state: st, used: s.seq}
	if len(s.m) > s.max {
		var oldest int64
		var min uint64 = ^uint64(0)
		for k, e := range s.m {
			if e.used < min {
				min, oldest = e.used, k
			}
		}
		delete(s.m, oldest)
	}
}

// loadState returns a room's verified state (nil Room before the genesis
// record), from the cache when the stored position still matches.
func (c *Module) loadState(ctx context.Context, h *hostState, key int64) (*room.State, error) {
	pos, err := c.Store.Read().Position(ctx, key)
	if err != nil {
		return nil, err
	}
	if st := c.cache.get(key, pos.SyncedSeq, pos.SyncedHash); st != nil {
		return st, nil
	}
	return c.loadStateRow(ctx, &store.Room{Key: key, SyncedSeq: pos.SyncedSeq, SyncedHash: pos.SyncedHash})
}

// loadStateRow is loadState for a room row just read.
func (c *Module) loadStateRow(ctx context.Context, row *store.Room) (*room.State, error) {
	if st := c.cache.get(row.Key, row.SyncedSeq, row.SyncedHash); st != nil {
		return st, nil
	}
	b, err := c.Store.Read().Blobs(ctx, row.Key)
	if err != nil {
		return nil, err
	}
	if st := c.cache.get(row.Key, b.SyncedSeq, b.SyncedHash); st != nil {
		return st, nil
	}
	st := &room.State{}
	if b.Snapshot != nil {
		var r adp.Room
		if err := json.Unmarshal(b.Snapshot, &r); err != nil {
			return nil, err
		}
		st.Room = &r
		if b.ActiveTurn != nil {
			var t room.ActiveTurn
			if err := json.Unmarshal(b.ActiveTurn, &t); err == nil {
				st.ActiveTurn = &t
			}
		}
	}
	c.cache.put(row.Key, b.SyncedSeq, b.SyncedHash, st)
	return st, nil
}

// roomRef is a resolved room: its host and, when known locally, its row.
type roomRef struct {
	h      *hostState
	roomID string
	row    *store.Room
}

// resolve finds the room a tool names. With host, that host must be
// configured. Without it, the room must be known on exactly one configured
// host (ambiguous_room otherwise); an unknown room resolves to the only
// configured host when there is just one. With open, a room without
// verified local state is synced from its host first.
func (c *Module) resolve(ctx context.Context, host, roomID string, open bool) (*roomRef, error) {
	if !adp.ValidRoomID(roomID) {
		return nil, engine.Invalid("room_id %q is not a valid room id", roomID)
	}
	rr := &roomRef{roomID: roomID}
	if host != "" {
		h, err := c.host(host)
		if err != nil {
			return nil, err
		}
		rr.h = h
		row, err := c.Store.Read().RoomAt(ctx, h.origin, roomID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, engine.Wrap(err)
		}
		rr.row = row
	} else {
		rows, err := c.Store.Read().RoomsByID(ctx, roomID)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		var hosts []string
		var known []*store.Room
		for _, row := range rows {
			if _, ok := c.hosts[row.Host]; ok {
				known = append(known, row)
				hosts = append(hosts, row.Host)
			}
		}
		switch {
		case len(known) > 1:
			return nil, &engine.Error{Code: CodeAmbiguousRoom, Message: "room " + roomID + " is known on more than one host; pass host",
				Data: map[string]any{"hosts": hosts}}
		case len(known) == 1:
			rr.h, rr.row = c.hosts[known[0].Host], known[0]
		case len(rows) > 0:
			return nil, engine.Errorf(engine.CodeHostNotAllowed, "room %s is on a host that is no longer configured", roomID)
		case len(c.hostOrder) == 1:
			rr.h = c.hosts[c.hostOrder[0]]
		default:
			return nil, &engine.Error{Code: CodeRoomNotOpen, Message: "room " + roomID + " is not known locally; open it with agent_protocols_room_open and its host",
				Data: map[string]any{"hosts": c.hostOrder}}
		}
	}
	if open && (rr.row == nil || !rr.row.HasSnapshot) {
		if err := c.openRoom(ctx, rr); err != nil {
			return nil, err
		}
	}
	return rr, nil
}

// openRoom creates the room's row when needed and syncs it from the host.
func (c *Module) openRoom(ctx context.Context, rr *roomRef) error {
	if rr.row == nil {
		now := c.NowMS()
		err := c.Store.Write(ctx, func(tx *store.Tx) error {
			row, err := tx.EnsureRoom(ctx, rr.h.origin, rr.roomID, now)
			rr.row = row
			return err
		})
		if err != nil {
			return engine.Wrap(err)
		}
	}
	if _, err := c.syncRoom(ctx, rr.h, rr.row.Key, rr.roomID, syncOptions{resource: true}); err != nil {
		return err
	}
	return c.reload(ctx, rr)
}

// reload re-reads the room row of a resolved room.
func (c *Module) reload(ctx context.Context, rr *roomRef) error {
	row, err := c.Store.Read().Room(ctx, rr.row.Key)
	if err != nil {
		return engine.Wrap(err)
	}
	rr.row = row
	return nil
}
