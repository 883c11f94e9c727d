package discourse

import (
	"context"
	"encoding/json"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// RoomCreate is agent_protocols_room_create: build room.create bound to the
// host (payload.host is its origin), check it under the ADP creation rules,
// sign it (nonce and envelope in the outbox first), submit it, and verify
// and keep the genesis record. The agent becomes the room's creator and a
// moderator; the new head is presented.
func (c *Module) RoomCreate(ctx context.Context, sess SessionID, in RoomCreateInput) (*RoomCreateResult, error) {
	h, err := c.host(in.Host)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, h.origin, capability.DiscourseWrite); err != nil {
		return nil, err
	}
	p := map[string]any{"host": h.origin, "topic": in.Topic, "visibility": in.Visibility, "start_time": in.StartTime, "end_time": in.EndTime}
	if in.Agenda != nil {
		p["agenda"] = *in.Agenda
	}
	if in.Guidance != nil {
		p["guidance"] = *in.Guidance
	}
	if in.Tags != nil {
		p["tags"] = in.Tags
	}
	if in.Language != nil {
		p["language"] = *in.Language
	}
	if in.Policy != nil {
		p["policy"] = in.Policy
	}
	if in.Types != nil {
		types, err := c.expandTypes(ctx, h, in.Types)
		if err != nil {
			return nil, err
		}
		p["types"] = types
	}
	if in.Extra != nil {
		p["extra"] = in.Extra
	}
	pv, err := engine.ObjectValue(p)
	if err != nil {
		return nil, engine.Invalid("room: %v", err)
	}
	now := c.Now()
	ev := identity.Event{Protocol: adp.Protocol, Type: adp.TypeRoomCreate, Actor: c.Self, CreatedAt: now.UnixMilli(), Payload: pv}
	if err := adp.CheckCreate(h.writeRules, &identity.Envelope{Event: ev}); err != nil {
		return nil, localError(err)
	}
	if _, err := c.Take("discourse:create:"+h.origin, c.createRate, time.Minute); err != nil {
		return nil, err
	}
	sent, err := engine.Submit(c.Engine, ctx, engine.Write{Kind: OutboxRoomCreate, Origin: h.origin, Capability: capability.DiscourseWrite, Event: ev},
		func(ctx context.Context, env *identity.Envelope) (*client.CreateRoomResult, error) {
			return h.client.CreateRoom(ctx, env)
		})
	if err != nil {
		return nil, err
	}
	env := sent.Envelope
	rr, err := c.acceptCreated(ctx, h, env, sent.Result, sent.Outbox)
	if err != nil {
		return nil, err
	}
	c.live.kick()
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	sync, err := c.presentCurrent(ctx, rr, sess)
	if err != nil {
		return nil, err
	}
	return &RoomCreateResult{Room: c.roomView(ctx, h.origin, rr.row, st, false, sync.UnreadCount), Envelope: envelopeValue(env), Sync: sync}, nil
}

// acceptCreated verifies and keeps the genesis record of a created room
// and closes its outbox entry (obID; 0 when the caller closes it).
func (c *Module) acceptCreated(ctx context.Context, h *hostState, env *identity.Envelope, res *client.CreateRoomResult, obID int64) (*roomRef, error) {
	rec, err := res.Record(env)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	rr := &roomRef{h: h, roomID: res.ID}
	now := c.NowMS()
	err = c.Store.Write(ctx, func(tx *store.Tx) error {
		row, err := tx.EnsureRoom(ctx, h.origin, res.ID, now)
		rr.row = row
		return err
	})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if rr.row.SyncedSeq == 0 {
		_, f, err := c.applyRecords(ctx, h, rr.row.Key, []*adp.Record{rec}, false)
		if err != nil {
			return nil, err
		}
		if f != nil {
			return nil, &engine.Error{Code: CodeVerificationFailed, Message: "the host's room.create record does not verify: " + f.Message}
		}
	}
	if obID != 0 {
		raw, _ := json.Marshal(rec)
		c.Done(ctx, obID, raw)
	}
	if err := c.reload(ctx, rr); err != nil {
		return nil, err
	}
	return rr, nil
}
