package discourse

import (
	"context"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/store"
)

// RoomTimeline is agent_protocols_room_timeline: timeline items from
// verified local state, oldest first, filtered and paged; unread_only starts
// after the read cursor and mark_read moves it through the last item
// returned (resolving the room.message.new inbox items it covers). refresh
// syncs from the host first. An unfiltered read contiguous with the
// presented head presents the head in force after its last item. source
// remote (0.12.6) reads the room's whole history from its host instead and
// verifies it from genesis (see remoteTimeline).
func (c *Module) RoomTimeline(ctx context.Context, sess SessionID, in RoomTimelineInput) (*RoomTimelineResult, error) {
	for _, a := range in.Actors {
		if !identity.ValidAgentID(a) {
			return nil, engine.Invalid("actors: %q is not a valid Agent ID", a)
		}
	}
	if in.AfterSeq < 0 || in.BeforeSeq < 0 {
		return nil, engine.Invalid("after_seq and before_seq must not be negative")
	}
	switch in.Source {
	case "", SourceLocal:
	case SourceRemote:
		return c.remoteTimeline(ctx, sess, in)
	default:
		return nil, engine.Invalid("source %q is not local or remote", in.Source)
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	if in.Refresh {
		if _, err := c.syncRoom(ctx, rr.h, rr.row.Key, rr.roomID, syncOptions{resource: true, resync: true}); err != nil {
			return nil, err
		}
		if err := c.reload(ctx, rr); err != nil {
			return nil, err
		}
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	row := rr.row
	after := in.AfterSeq
	if in.UnreadOnly && row.ReadSeq > after {
		after = row.ReadSeq
	}
	evs, err := c.Store.Read().Timeline(ctx, row.Key, store.TimelineQuery{AfterSeq: after, BeforeSeq: in.BeforeSeq,
		Types: in.Types, Actors: in.Actors, Limit: limit + 1, Records: in.IncludeRecords, ItemsOnly: true})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	more := len(evs) > limit
	if more {
		evs = evs[:limit]
	}
	list, err := items(evs, in.IncludeRecords)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &RoomTimelineResult{Items: list}
	if more {
		out.NextAfterSeq = engine.Ptr(evs[len(evs)-1].Seq)
	}
	pres, marked, err := c.presentAndMark(ctx, sess, in, row, after, more, evs)
	if err != nil {
		return nil, err
	}
	// The sync state of the row read before the items (again when the read
	// cursor moved) and of the head now presented.
	q := c.Store.Read()
	if marked {
		if rr.row, err = q.Room(ctx, row.Key); err != nil {
			return nil, engine.Wrap(err)
		}
	}
	out.Sync, err = c.syncStateWith(ctx, q, rr.h.origin, rr.row, sess, &pres)
	if err != nil {
		return nil, err
	}
	out.UnreadCount = out.Sync.UnreadCount
	out.History = TimelineHistory{Source: SourceLocal, LastSeq: rr.row.SyncedSeq}
	if rr.row.SyncedSeq > 0 {
		out.History.FirstSeq = max(rr.row.OldestSeq, 1)
		out.History.Truncated = out.History.FirstSeq > 1
	}
	return out, nil
}

// presentAndMark presents what a local timeline read showed and marks it
// read when asked: a contiguous, unfiltered read starting at or before the
// presented head presents the latest head among its items (the room's
// head when it reached the end); mark_read moves the read cursor through
// its last item and resolves the room.message.new items it covers. It
// returns the head presented to the session afterwards and whether the
// read cursor was moved.
func (c *Module) presentAndMark(ctx context.Context, sess SessionID, in RoomTimelineInput, row *store.Room, after int64, more bool, evs []store.Event) (presentedHead, bool, error) {
	pSeq, pHash, pOK, err := c.presented(ctx, sess, row.Key)
	if err != nil {
		return presentedHead{}, false, err
	}
	pres := presentedHead{seq: pSeq, hash: pHash, ok: pOK}
	var presentSeq int64
	var presentHash string
	if len(in.Types) == 0 && len(in.Actors) == 0 && (!pOK || after <= pSeq) {
		reachedEnd := !more && (in.BeforeSeq == 0 || in.BeforeSeq > row.SyncedSeq)
		switch {
		case reachedEnd:
			presentSeq, presentHash = row.HeadSeq, row.HeadHash
		case len(evs) > 0:
			last := evs[len(evs)-1]
			presentSeq, presentHash = last.HeadSeq, last.HeadHash
		}
		if pOK && presentSeq <= pSeq {
			presentSeq = 0
		}
	}
	markThrough := int64(0)
	if in.MarkRead && len(evs) > 0 {
		markThrough = evs[len(evs)-1].Seq
	}
	if sess == "" {
		presentSeq = 0 // no session to present to
	}
	if presentSeq == 0 && markThrough == 0 {
		return pres, false, nil
	}
	now := c.NowMS()
	err = c.Store.Write(ctx, func(tx *store.Tx) error {
		if presentSeq > 0 {
			if err := tx.TouchSession(ctx, string(sess), now); err != nil {
				return err
			}
			if err := tx.SetPresented(ctx, string(sess), row.Key, presentSeq, presentHash); err != nil {
				return err
			}
		}
		if markThrough > 0 {
			cur, err := tx.SetReadSeq(ctx, row.Key, markThrough)
			if err != nil {
				return err
			}
			return tx.ResolveRead(ctx, row.Key, cur)
		}
		return nil
	})
	if err != nil {
		return presentedHead{}, false, engine.Wrap(err)
	}
	if presentSeq > 0 {
		pres = presentedHead{seq: presentSeq, hash: presentHash, ok: true}
	}
	return pres, markThrough > 0, nil
}

// RoomMarkRead is agent_protocols_room_mark_read: move the room's read
// cursor through through_seq (never backwards, never past the latest
// verified record) and resolve the room.message.new inbox items it covers.
// Local state only.
func (c *Module) RoomMarkRead(ctx context.Context, sess SessionID, in RoomMarkReadInput) (*RoomMarkReadResult, error) {
	if in.ThroughSeq < 1 {
		return nil, engine.Invalid("through_seq must be at least 1")
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	var cur int64
	err = c.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		if cur, err = tx.SetReadSeq(ctx, rr.row.Key, in.ThroughSeq); err != nil {
			return err
		}
		return tx.ResolveRead(ctx, rr.row.Key, cur)
	})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	n, err := c.Store.Read().UnreadCount(ctx, rr.row.Key, cur, c.Self)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	return &RoomMarkReadResult{RoomID: rr.roomID, ReadSeq: cur, UnreadCount: n}, nil
}
