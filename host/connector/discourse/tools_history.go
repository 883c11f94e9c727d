package discourse

import (
	"context"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/room"
)

// Sources of agent_protocols_room_timeline.
const (
	SourceLocal  = "local"
	SourceRemote = "remote"
)

// remoteTimeline is room_timeline with source remote: the room's history is
// read from its host from seq 1 and verified from genesis with the
// connector's reader rules, independently of local state, and the requested
// range of the verified records is returned. Nothing local changes: no
// record is stored, no read cursor moves and no head is presented. At most
// SyncRecordsPerCall records are verified per call (history.truncated says
// the host has more). unread_only and mark_read do not apply to it.
func (c *Module) remoteTimeline(ctx context.Context, sess SessionID, in RoomTimelineInput) (*RoomTimelineResult, error) {
	if in.UnreadOnly || in.MarkRead {
		return nil, engine.Invalid("source remote reads the host's history: it neither filters unread items nor marks read")
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, false)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	types := map[string]bool{}
	for _, t := range in.Types {
		types[t] = true
	}
	actors := map[string]bool{}
	for _, a := range in.Actors {
		actors[a] = true
	}
	keep := func(it *TimelineItem) bool {
		return it.Seq > in.AfterSeq && (in.BeforeSeq == 0 || it.Seq < in.BeforeSeq) &&
			(len(types) == 0 || types[it.Type]) && (len(actors) == 0 || actors[it.Actor])
	}

	st := &room.State{}
	out := &RoomTimelineResult{Items: []TimelineItem{}, History: TimelineHistory{Source: SourceRemote}}
	bound := c.opts.SyncRecordsPerCall
	var verified int
	var more bool
	cursor := ""
	seen := map[string]bool{}
	envs := room.EnvelopeSeqs{} // bounded by SyncRecordsPerCall
	for {
		page, err := rr.h.client.Events(ctx, rr.roomID, client.EventsQuery{AfterSeq: 0, Limit: c.opts.HistoryPage, Cursor: cursor})
		if err != nil {
			return nil, engine.Wrap(err)
		}
		recs := page.Items
		if verified+len(recs) > bound {
			recs = recs[:bound-verified]
			out.History.Truncated = true
		}
		res := rr.h.proc.Process(st, recs, room.Options{Envelopes: envs.Lookup})
		envs.Add(res.Applied)
		if f := res.Failure; f != nil {
			return nil, &engine.Error{Code: CodeVerificationFailed, Message: "the host's history of room " + rr.roomID + " failed verification: " + f.Message,
				Data: map[string]any{"seq": f.Seq, "code": f.Code}, Err: f}
		}
		st = res.State
		for i := range res.Applied {
			it := res.Applied[i].Item
			if out.History.FirstSeq == 0 {
				out.History.FirstSeq = it.Seq
			}
			out.History.LastSeq = it.Seq
			if !keep(&it) {
				continue
			}
			if len(out.Items) == limit {
				more = true
				continue
			}
			if in.IncludeRecords {
				it.Record = res.Applied[i].RecordJSON
			}
			out.Items = append(out.Items, it)
		}
		verified += len(recs)
		if out.History.Truncated || page.NextCursor == "" {
			break
		}
		if seen[page.NextCursor] {
			return nil, &engine.Error{Code: engine.CodeUnavailable, Message: "the host's history cursor did not advance"}
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	if more && len(out.Items) > 0 {
		out.NextAfterSeq = engine.Ptr(out.Items[len(out.Items)-1].Seq)
	}
	if rr.row != nil {
		if out.Sync, err = c.syncState(ctx, c.Store.Read(), rr, sess); err != nil {
			return nil, err
		}
		out.UnreadCount = out.Sync.UnreadCount
		return out, nil
	}
	out.Sync = SyncState{Host: rr.h.origin, RoomID: rr.roomID, SyncedSeq: out.History.LastSeq, RemoteSeq: out.History.LastSeq}
	if r := st.Room; r != nil {
		out.Sync.HeadSeq, out.Sync.HeadHash = r.Head.Seq, r.Head.Hash
	}
	return out, nil
}
