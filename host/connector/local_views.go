package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
	var e *Error
	return errors.As(err, &e) && (e.Code == CodeRoomNotOpen || e.Code == CodeNotFound)
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
func (c *Connector) FindLocalRoom(ctx context.Context, host, roomID string) (*LocalRoom, error) {
	rr, err := c.resolve(ctx, host, roomID, false)
	if err != nil {
		if e := AsError(err); e.Code == CodeHostNotAllowed && host == "" {
			return nil, errorf(CodeRoomNotOpen, "room %s is not known on a configured host", roomID)
		}
		return nil, err
	}
	if rr.row == nil {
		return nil, errorf(CodeRoomNotOpen, "room %s is not known locally", roomID)
	}
	return &LocalRoom{Host: rr.h.origin, RoomID: rr.roomID, Verified: rr.row.HasSnapshot, StatusesAt: rr.row.StatusesAt, key: rr.row.Key}, nil
}

// PendingInboxView returns up to limit pending inbox items, highest
// priority first, and how many are pending in all, without claiming any.
func (c *Connector) PendingInboxView(ctx context.Context, limit int) ([]InboxItem, int64, error) {
	items := []InboxItem{}
	var total int64
	err := c.store.View(ctx, func(q store.Q) error {
		rows, err := q.PendingInbox(ctx, store.InboxQuery{Limit: limit})
		if err != nil {
			return err
		}
		for _, r := range rows {
			var it InboxItem
			if err := json.Unmarshal(r.Item, &it); err != nil {
				return err
			}
			it.State = r.State
			items = append(items, it)
		}
		n, err := q.PendingTotal(ctx)
		total = max(n, 0)
		return err
	})
	return items, total, wrap(err)
}

// RecentTimeline returns the newest n timeline items of a room, oldest
// first, and whether older ones exist locally.
func (c *Connector) RecentTimeline(ctx context.Context, lr *LocalRoom, n int) ([]TimelineItem, bool, error) {
	evs, err := c.store.Read().Timeline(ctx, lr.key, store.TimelineQuery{Limit: n + 1, Newest: true})
	if err != nil {
		return nil, false, wrap(err)
	}
	more := len(evs) > n
	if more {
		evs = evs[1:]
	}
	items := make([]TimelineItem, 0, len(evs))
	for _, e := range evs {
		var it TimelineItem
		if err := json.Unmarshal(e.Item, &it); err != nil {
			return nil, false, wrap(err)
		}
		items = append(items, it)
	}
	return items, more, nil
}

// CachedStatuses returns the unexpired agent statuses cached for a room.
func (c *Connector) CachedStatuses(ctx context.Context, lr *LocalRoom) ([]AgentStatus, error) {
	list, err := c.store.Read().Statuses(ctx, lr.key, c.nowMS())
	if err != nil {
		return nil, wrap(err)
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
func (c *Connector) SyncPosition(ctx context.Context, host, roomID string) (synced, remote int64, ok bool, err error) {
	lr, err := c.FindLocalRoom(ctx, host, roomID)
	if err != nil {
		if IsNotFound(err) || AsError(err).Code == CodeAmbiguousRoom || AsError(err).Code == CodeHostNotAllowed {
			return 0, 0, false, nil
		}
		return 0, 0, false, err
	}
	row, err := c.store.Read().Room(ctx, lr.key)
	if err != nil {
		return 0, 0, false, wrap(err)
	}
	return row.SyncedSeq, row.RemoteSeq, row.SyncedSeq > 0, nil
}

// RoomFingerprint returns a string that changes whenever the local state of
// a room id changes on any host (its head, position, read cursor, live
// flag, membership, pending inbox count, verification mark), "" when it
// cannot be read. Resources built only from that state need no rebuild
// while it stays the same.
func (c *Connector) RoomFingerprint(ctx context.Context, roomID string) string {
	q := c.store.Read()
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
