package connector

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"apconnect/host/identity"
	"apconnect/host/store"
)

// outboxInterval paces the background resubmission.
const outboxInterval = 5 * time.Second

// outboxLoop resubmits pending outbox entries — signed envelopes whose
// outcome is unknown (the process stopped or the host was unreachable after
// signing) — at start and then periodically.
func (c *Connector) outboxLoop(ctx context.Context) {
	t := time.NewTicker(outboxInterval)
	defer t.Stop()
	for {
		c.ResubmitOutbox(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ResubmitOutbox resubmits the pending outbox entries whose lease ended
// (entries of a crashed process, or left by a write whose host was
// unreachable). An exact resubmission is an idempotent lookup on the
// service, so an envelope the host already accepted is recorded once; an
// envelope the host refuses (for example because its time window passed)
// is resolved from the room history: found there, it is done, otherwise
// it failed and was never accepted. It returns how many entries it closed.
func (c *Connector) ResubmitOutbox(ctx context.Context) int {
	now := c.nowMS()
	var entries []*store.OutboxEntry
	err := c.store.Write(ctx, func(tx *store.Tx) error {
		var err error
		entries, err = tx.LeaseOutbox(ctx, now, now+outboxLease.Milliseconds(), 20)
		return err
	})
	if err != nil {
		return 0
	}
	closed := 0
	for _, e := range entries {
		if c.resubmit(ctx, e) {
			closed++
		}
	}
	return closed
}

// resubmit sends one entry again; it reports whether the entry was closed.
func (c *Connector) resubmit(ctx context.Context, e *store.OutboxEntry) bool {
	var env identity.Envelope
	if err := json.Unmarshal(e.Envelope, &env); err != nil {
		c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, "stored envelope unreadable: "+err.Error())
		return true
	}
	release := func(err error) bool {
		now := c.nowMS()
		c.outboxWrite(ctx, "releasing an outbox entry", e.ID, func(ctx context.Context, tx *store.Tx) error {
			return tx.ReleaseOutbox(ctx, e.ID, now, err.Error())
		})
		return false
	}
	switch e.Kind {
	case store.OutboxProfileUpdate:
		ps, err := c.profileService(e.Service)
		if err != nil {
			c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, err.Error())
			return true
		}
		res, err := ps.UpdateProfile(ctx, &env)
		if err != nil {
			if unknownOutcome(err) {
				return release(err)
			}
			c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, err.Error())
			return true
		}
		raw, _ := json.Marshal(res.Profile.Raw)
		c.closeOutbox(ctx, e.ID, store.OutboxDone, raw, "")
		return true
	}
	h, ok := c.hosts[e.Service]
	if !ok {
		c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, "host "+e.Service+" is no longer configured")
		return true
	}
	switch e.Kind {
	case store.OutboxRoomCreate:
		res, err := h.client.CreateRoom(ctx, &env)
		if err != nil {
			if unknownOutcome(err) {
				return release(err)
			}
			c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, err.Error())
			return true
		}
		if _, err := c.acceptCreated(ctx, h, &env, res, e.ID); err != nil {
			return release(err)
		}
		c.live.kick()
		return true
	case store.OutboxJoinRequest:
		res, err := h.client.SubmitJoinRequest(ctx, e.RoomID, &env)
		if err != nil {
			if unknownOutcome(err) {
				return release(err)
			}
			c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, err.Error())
			return true
		}
		if row, err := c.store.Read().RoomAt(ctx, h.origin, e.RoomID); err == nil {
			j := joinRow(row.Key, res.JoinRequest, true, c.nowMS())
			_ = c.store.Write(ctx, func(tx *store.Tx) error { return tx.PutJoinRequest(ctx, j) })
		}
		raw, _ := json.Marshal(res.JoinRequest.Raw)
		c.closeOutbox(ctx, e.ID, store.OutboxDone, raw, "")
		return true
	case store.OutboxRoomEvent:
		res, err := h.client.Submit(ctx, e.RoomID, &env)
		row, rerr := c.store.Read().RoomAt(ctx, h.origin, e.RoomID)
		if err == nil {
			if rerr != nil {
				raw, _ := json.Marshal(res.Record)
				c.closeOutbox(ctx, e.ID, store.OutboxDone, raw, "")
				return true
			}
			if err := c.acceptOwnRecord(ctx, h, row.Key, e.RoomID, res.Record, e.ID); err != nil {
				return release(err)
			}
			return true
		}
		if unknownOutcome(err) {
			return release(err)
		}
		// Refused now: resolve from history.
		if rerr == nil {
			if _, serr := c.syncRoom(ctx, h, row.Key, e.RoomID, syncOptions{}); serr == nil {
				if ev, ferr := c.store.Read().EventByID(ctx, row.Key, e.EventID); ferr == nil {
					c.closeOutbox(ctx, e.ID, store.OutboxDone, ev.Record, "")
					return true
				} else if !errors.Is(ferr, store.ErrNotFound) {
					return release(ferr)
				}
			} else {
				return release(serr)
			}
		}
		c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, err.Error())
		return true
	}
	c.closeOutbox(ctx, e.ID, store.OutboxFailed, nil, "unknown outbox kind "+e.Kind)
	return true
}
