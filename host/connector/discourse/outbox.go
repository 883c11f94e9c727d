package discourse

import (
	"context"
	"encoding/json"
	"errors"

	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/store"
)

// The outbox kinds of Discourse writes; resubmitter resubmits them.
const (
	OutboxRoomCreate  = "room_create"
	OutboxRoomEvent   = "room_event"
	OutboxJoinRequest = "join_request"
)

// resubmitter resubmits Discourse outbox entries whose outcome stayed
// unknown (engine.Submitter). An exact resubmission is an idempotent lookup
// on the host, so an envelope the host already accepted is recorded once;
// a room event the host refuses (for example because its time window
// passed) is resolved from the room's history: found there, it is done,
// otherwise it failed and was never accepted.
type resubmitter struct{ c *Module }

func (r resubmitter) Resubmit(ctx context.Context, e *store.OutboxEntry, env *identity.Envelope) (engine.Outcome, []byte, error) {
	c := r.c
	h, ok := c.hosts[e.Service]
	if !ok {
		return engine.Refused, nil, errors.New("host " + e.Service + " is no longer configured")
	}
	switch e.Kind {
	case OutboxRoomCreate:
		res, err := h.client.CreateRoom(ctx, env)
		if err != nil {
			return refusedOrUnknown(err)
		}
		if _, err := c.acceptCreated(ctx, h, env, res, 0); err != nil {
			return engine.Unknown, nil, err
		}
		c.live.kick()
		rec, _ := res.Record(env)
		raw, _ := json.Marshal(rec)
		return engine.Accepted, raw, nil
	case OutboxJoinRequest:
		res, err := h.client.SubmitJoinRequest(ctx, e.Ref, env)
		if err != nil {
			return refusedOrUnknown(err)
		}
		if row, err := c.Store.Read().RoomAt(ctx, h.origin, e.Ref); err == nil {
			j := joinRow(row.Key, res.JoinRequest, true, c.NowMS())
			_ = c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutJoinRequest(ctx, j) })
		}
		raw, _ := json.Marshal(res.JoinRequest.Raw)
		return engine.Accepted, raw, nil
	case OutboxRoomEvent:
		return c.resubmitRoomEvent(ctx, h, e, env)
	}
	return engine.Refused, nil, errors.New("unknown outbox kind " + e.Kind)
}

// resubmitRoomEvent sends a room event again and applies the record, or
// resolves a refusal from the room's history.
func (c *Module) resubmitRoomEvent(ctx context.Context, h *hostState, e *store.OutboxEntry, env *identity.Envelope) (engine.Outcome, []byte, error) {
	res, err := h.client.Submit(ctx, e.Ref, env)
	row, rerr := c.Store.Read().RoomAt(ctx, h.origin, e.Ref)
	if err == nil {
		raw, _ := json.Marshal(res.Record)
		if rerr == nil {
			if err := c.applyOwnRecord(ctx, h, row.Key, e.Ref, res.Record); err != nil {
				return engine.Unknown, nil, err
			}
		}
		return engine.Accepted, raw, nil
	}
	if engine.UnknownOutcome(err) {
		return engine.Unknown, nil, err
	}
	if rerr == nil {
		if _, serr := c.syncRoom(ctx, h, row.Key, e.Ref, syncOptions{}); serr != nil {
			return engine.Unknown, nil, serr
		}
		ev, ferr := c.Store.Read().EventByID(ctx, row.Key, e.EventID)
		if ferr == nil {
			return engine.Accepted, ev.Record, nil
		}
		if !errors.Is(ferr, store.ErrNotFound) {
			return engine.Unknown, nil, ferr
		}
	}
	return engine.Refused, nil, err
}

// refusedOrUnknown classifies a resubmission's failure.
func refusedOrUnknown(err error) (engine.Outcome, []byte, error) {
	if engine.UnknownOutcome(err) {
		return engine.Unknown, nil, err
	}
	return engine.Refused, nil, err
}
