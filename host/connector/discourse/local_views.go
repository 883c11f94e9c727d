package discourse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"apconnect/host/engine"
	"apconnect/host/room"
	"apconnect/host/store"
)

// Local views: what the MCP resources, their change notifications and the
// progress reports read. Each reads verified local state only: it never
// fetches, saves, claims, releases, presents or marks anything read.

// IsNotFound reports whether err says that local state does not hold what
// was asked for (a room, a pinned profile, a kept archive).
func IsNotFound(err error) bool {
	if errors.Is(err, store.ErrNotFound) {
		return true
	}
	var e *engine.Error
	return errors.As(err, &e) && (e.Code == CodeRoomNotOpen || e.Code == engine.CodeNotFound)
}

// LocalRoom is a room known in local state.
type LocalRoom struct {
	Host   string // its host
	RoomID string // its id
	// Verified is true once its genesis record is verified.
	Verified bool
	// StatusesAt is when its whole status list was last read (0: never).
	StatusesAt int64
	key        int64
}

// FindLocalRoom finds a room in local state by the rules the tools use (a
// host must be configured; without one the room must be known on exactly
// one configured host, else ambiguous_room). A room local state does not
// hold is room_not_open; nothing is fetched or created.
func (c *Module) FindLocalRoom(ctx context.Context, host, roomID string) (*LocalRoom, error) {
	rr, err := c.resolve(ctx, host, roomID, false)
	if err != nil {
		if e := engine.AsError(err); e.Code == engine.CodeHostNotAllowed && host == "" {
			return nil, engine.Errorf(CodeRoomNotOpen, "room %s is not known on a configured host", roomID)
		}
		return nil, err
	}
	if rr.row == nil {
		return nil, engine.Errorf(CodeRoomNotOpen, "room %s is not known locally", roomID)
	}
	return &LocalRoom{Host: rr.h.origin, RoomID: rr.roomID, Verified: rr.row.HasSnapshot, StatusesAt: rr.row.StatusesAt, key: rr.row.Key}, nil
}

// RoomKey returns the local key of a room for the inbox's room filter (ok
// false when local state does not know the room).
func (c *Module) RoomKey(ctx context.Context, host, roomID string) (int64, bool, error) {
	rr, err := c.resolve(ctx, host, roomID, false)
	if err != nil {
		return 0, false, err
	}
	if rr.row == nil {
		return 0, false, nil
	}
	return rr.row.Key, true, nil
}

// InboxKinds are the kinds of the module's inbox items.
func (c *Module) InboxKinds() []string { return room.InboxKinds() }

// RecentTimeline returns the newest n timeline items of a room, oldest
// first, and whether older ones exist locally.
func (c *Module) RecentTimeline(ctx context.Context, lr *LocalRoom, n int) ([]TimelineItem, bool, error) {
	evs, err := c.Store.Read().Timeline(ctx, lr.key, store.TimelineQuery{Limit: n + 1, Newest: true})
	if err != nil {
		return nil, false, engine.Wrap(err)
	}
	more := len(evs) > n
	if more {
		evs = evs[1:]
	}
	items := make([]TimelineItem, 0, len(evs))
	for _, e := range evs {
		var it TimelineItem
		if err := json.Unmarshal(e.Item, &it); err != nil {
			return nil, false, engine.Wrap(err)
		}
		items = append(items, it)
	}
	return items, more, nil
}

// CachedStatuses returns the unexpired agent statuses cached for a room.
func (c *Module) CachedStatuses(ctx context.Context, lr *LocalRoom) ([]AgentStatus, error) {
	list, err := c.Store.Read().Statuses(ctx, lr.key, c.NowMS())
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := []AgentStatus{}
	for _, st := range list {
		var v AgentStatus
		if json.Unmarshal(st.Status, &v) == nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// SyncPosition returns how far a room's verified local copy has come
// (synced) and the latest seq its host advertised (remote); ok is false
// while local state does not know the room.
func (c *Module) SyncPosition(ctx context.Context, host, roomID string) (synced, remote int64, ok bool, err error) {
	lr, err := c.FindLocalRoom(ctx, host, roomID)
	if err != nil {
		if IsNotFound(err) || engine.AsError(err).Code == CodeAmbiguousRoom || engine.AsError(err).Code == engine.CodeHostNotAllowed {
			return 0, 0, false, nil
		}
		return 0, 0, false, err
	}
	row, err := c.Store.Read().Room(ctx, lr.key)
	if err != nil {
		return 0, 0, false, engine.Wrap(err)
	}
	return row.SyncedSeq, row.RemoteSeq, row.SyncedSeq > 0, nil
}

// RoomFingerprint returns a string that changes whenever the local state of
// a room id changes on any host (its head, position, read cursor, live
// flag, membership, pending inbox count, verification mark), "" when it
// cannot be read. Resources built only from that state need no rebuild
// while it stays the same.
func (c *Module) RoomFingerprint(ctx context.Context, roomID string) string {
	q := c.Store.Read()
	refs, err := q.RoomKeys(ctx, roomID)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, ref := range refs {
		r, err := q.Room(ctx, ref.Key)
		if err != nil {
			return ""
		}
		fmt.Fprintf(&b, "%s|%d|%t|%d|%s|%d|%s|%d|%d|%t|%s|%s|%d|%d;", r.Host, r.Key, r.HasSnapshot, r.HeadSeq, r.HeadHash, r.SyncedSeq, r.SyncedHash,
			r.RemoteSeq, r.ReadSeq, r.Subscribed, r.SelfState, r.SelfRole, r.PendingInbox, r.UpdatedAt)
		if r.Failure != nil {
			fmt.Fprintf(&b, "failed:%d:%s;", r.Failure.Seq, r.Failure.Code)
		}
	}
	return "rooms:" + b.String()
}
