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
	plan, err := c.planPresent(ctx, sess, in, row, after, more, evs)
	if err != nil {
		return nil, err
	}
	list, err := items(evs, in.IncludeRecords)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &RoomTimelineResult{Items: list}
	if more {
		out.NextAfterSeq = engine.Ptr(evs[len(evs)-1].Seq)
	}
	if out.Sync, err = c.presentAndMark(ctx, sess, rr, plan); err != nil {
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

// presentPlan is what a local timeline read presents and marks read: the
// head to present (seq 0: none), the read cursor to move (0: none), and
// the head presented to the session once that is done.
type presentPlan struct {
	presentSeq  int64
	presentHash string
	markThrough int64
	after       presentedHead
}

// planPresent decides what a local timeline read presents and marks read:
// a contiguous, unfiltered read starting at or before the presented head
// presents the latest head among its items (the room's head when it
// reached the end); mark_read moves the read cursor through its last item
// (resolving the room.message.new items it covers).
func (c *Module) planPresent(ctx context.Context, sess SessionID, in RoomTimelineInput, row *store.Room, after int64, more bool, evs []store.Event) (presentPlan, error) {
	pSeq, pHash, pOK, err := c.presented(ctx, sess, row.Key)
	if err != nil {
		return presentPlan{}, err
	}
	plan := presentPlan{after: presentedHead{seq: pSeq, hash: pHash, ok: pOK}}
	if sess != "" && len(in.Types) == 0 && len(in.Actors) == 0 && (!pOK || after <= pSeq) {
		reachedEnd := !more && (in.BeforeSeq == 0 || in.BeforeSeq > row.SyncedSeq)
		switch {
		case reachedEnd:
			plan.presentSeq, plan.presentHash = row.HeadSeq, row.HeadHash
		case len(evs) > 0:
			last := evs[len(evs)-1]
			plan.presentSeq, plan.presentHash = last.HeadSeq, last.HeadHash
		}
		if pOK && plan.presentSeq <= pSeq {
			plan.presentSeq = 0
		}
	}
	if plan.presentSeq > 0 {
		plan.after = presentedHead{seq: plan.presentSeq, hash: plan.presentHash, ok: true}
	}
	if in.MarkRead && len(evs) > 0 {
		plan.markThrough = evs[len(evs)-1].Seq
	}
	return plan, nil
}

// presentAndMark carries out a plan — the head is presented (written
// behind, see presenter), the read cursor moved in a transaction of its
// own — and returns the sync state: of the row read before the items, or
// read again when the cursor moved.
func (c *Module) presentAndMark(ctx context.Context, sess SessionID, rr *roomRef, plan presentPlan) (SyncState, error) {
	key := rr.row.Key
	if plan.presentSeq > 0 {
		if err := c.present(ctx, sess, key, plan.presentSeq, plan.presentHash); err != nil {
			return SyncState{}, err
		}
	}
	q := c.Store.Read()
	if plan.markThrough > 0 {
		err := c.Store.Write(ctx, func(tx *store.Tx) error {
			cur, err := tx.SetReadSeq(ctx, key, plan.markThrough)
			if err != nil {
				return err
			}
			return tx.ResolveRead(ctx, key, cur)
		})
		if err != nil {
			return SyncState{}, engine.Wrap(err)
		}
		if rr.row, err = q.Room(ctx, key); err != nil {
			return SyncState{}, engine.Wrap(err)
		}
	}
	return c.syncStateWith(ctx, q, rr.h.origin, rr.row, sess, &plan.after)
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
