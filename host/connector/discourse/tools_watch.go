package discourse

import (
	"context"
	"slices"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
)

// RoomWatchInput is the input of agent_protocols_room_watch. Types nil
// reads the watches; an empty list removes them.
type RoomWatchInput struct {
	RoomID string    `json:"room_id"`
	Host   string    `json:"host,omitempty"`
	Types  *[]string `json:"types,omitempty"`
}

// RoomWatchResult is the result of agent_protocols_room_watch: the types
// watched now and the room's sync.
type RoomWatchResult struct {
	Types []string  `json:"types"`
	Sync  SyncState `json:"sync"`
}

// MaxWatchTypes bounds the types watched in one room.
const MaxWatchTypes = 64

// RoomWatch is agent_protocols_room_watch: read, or replace, the custom
// event types of a room whose records become room.event.custom inbox items
// (0.12.6). Watching needs no membership: a room with watches is followed
// live like a subscribed one (its stream when the host allows it, else its
// history, polled), so a public room can be watched without joining. Each
// type must be a custom type of the room's verified registry. Watches apply
// to records verified from now on and are kept in local state across
// restarts. A room not known locally is opened from its host first. Changes
// only local state.
func (c *Module) RoomWatch(ctx context.Context, sess SessionID, in RoomWatchInput) (*RoomWatchResult, error) {
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	if in.Types != nil {
		types := *in.Types
		if len(types) > MaxWatchTypes {
			return nil, engine.Invalid("at most %d types can be watched in a room", MaxWatchTypes)
		}
		st, err := c.loadStateRow(ctx, rr.row)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		if st.Room == nil {
			return nil, engine.Errorf(CodeVerificationFailed, "room %s has no verified state", rr.roomID)
		}
		var clean []string
		for _, t := range types {
			if _, ok := st.Room.Types.Lookup(t); !ok || adp.IsBuiltin(t) {
				return nil, &engine.Error{Code: CodeTypeNotDefined, Message: "event type " + t + " is not a custom type of room " + rr.roomID + " (see room.types of agent_protocols_room_state)",
					Data: map[string]any{"type": t}}
			}
			if !slices.Contains(clean, t) {
				clean = append(clean, t)
			}
		}
		if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetWatchTypes(ctx, rr.row.Key, clean, c.NowMS()) }); err != nil {
			return nil, engine.Wrap(err)
		}
		c.live.kick()
	}
	types, err := c.Store.Read().WatchTypes(ctx, rr.row.Key)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if types == nil {
		types = []string{}
	}
	sync, err := c.syncState(ctx, c.Store.Read(), rr, sess)
	if err != nil {
		return nil, err
	}
	return &RoomWatchResult{Types: types, Sync: sync}, nil
}

// watchedItems returns the room.event.custom inbox items of the applied
// records whose types the agent watches in the room (room_watch). The
// agent's own records and redacted ones make none.
func (c *Module) watchedItems(ctx context.Context, host string, key int64, applied []room.Applied) []room.InboxItem {
	types, err := c.Store.Read().WatchTypes(ctx, key)
	if err != nil || len(types) == 0 {
		return nil
	}
	var out []room.InboxItem
	for i := range applied {
		a := &applied[i]
		rec := a.Record
		if rec.IsRedacted() || rec.Actor() == c.Self || !slices.Contains(types, rec.Type()) {
			continue
		}
		it := room.NewInboxItem(host, rec.RoomID, room.KindEventCustom, room.PriorityNormal, rec.Seq, rec.EnvelopeHash(),
			rec.Actor(), rec.AcceptedAt, "watched_type", a.Item.Summary, false)
		it.Message["type"] = rec.Type()
		out = append(out, it)
	}
	return out
}
