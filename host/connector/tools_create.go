package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/store"
)

// RoomCreate is agent_protocols_room_create: build room.create bound to the
// host (payload.host is its origin), check it under the ADP creation rules,
// sign it (nonce and envelope in the outbox first), submit it, and verify
// and keep the genesis record. The agent becomes the room's creator and a
// moderator; the new head is presented.
func (c *Connector) RoomCreate(ctx context.Context, sess SessionID, in RoomCreateInput) (*RoomCreateResult, error) {
	h, err := c.host(in.Host)
	if err != nil {
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
	pv, err := objectValue(p)
	if err != nil {
		return nil, invalid("room: %v", err)
	}
	now := c.now()
	ev := identity.Event{Protocol: identity.ProtocolDiscourse, Type: adp.TypeRoomCreate, Actor: c.self, CreatedAt: now.UnixMilli(), Payload: pv}
	if err := adp.CheckCreate(h.writeRules, &identity.Envelope{Event: ev}); err != nil {
		return nil, localError(err)
	}
	rate, _ := adp.RateLimit(c.writeLimit, adp.TypeRoomCreate, nil)
	if _, wait := c.buckets.take(0, "create:"+h.origin, rate, now); wait > 0 {
		return nil, &Error{Code: CodeRateLimited, Message: "local room creation budget is spent", RetryAfter: wait,
			Data: map[string]any{"retry_after_ms": wait.Milliseconds(), "local": true}}
	}
	res, env, obID, err := submitSigned(c, ctx, store.OutboxRoomCreate, h.origin, "", ev,
		func(env *identity.Envelope) (*client.CreateRoomResult, error) { return h.client.CreateRoom(ctx, env) }, nil)
	if err != nil {
		return nil, err
	}
	rr, err := c.acceptCreated(ctx, h, env, res, obID)
	if err != nil {
		return nil, err
	}
	c.live.kick()
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, wrap(err)
	}
	sync, err := c.presentCurrent(ctx, rr, sess)
	if err != nil {
		return nil, err
	}
	return &RoomCreateResult{Room: c.roomView(ctx, h.origin, rr.row, st, false, sync.UnreadCount), Envelope: envelopeValue(env), Sync: sync}, nil
}

// acceptCreated verifies and keeps the genesis record of a created room
// and closes its outbox entry.
func (c *Connector) acceptCreated(ctx context.Context, h *hostState, env *identity.Envelope, res *client.CreateRoomResult, obID int64) (*roomRef, error) {
	rec, err := res.Record(env)
	if err != nil {
		return nil, wrap(err)
	}
	rr := &roomRef{h: h, roomID: res.ID}
	now := c.nowMS()
	err = c.store.Write(ctx, func(tx *store.Tx) error {
		row, err := tx.EnsureRoom(ctx, h.origin, res.ID, now)
		rr.row = row
		return err
	})
	if err != nil {
		return nil, wrap(err)
	}
	if rr.row.SyncedSeq == 0 {
		_, f, err := c.applyRecords(ctx, h, rr.row.Key, []*adp.Record{rec}, false)
		if err != nil {
			return nil, err
		}
		if f != nil {
			return nil, &Error{Code: CodeVerificationFailed, Message: "the host's room.create record does not verify: " + f.Message}
		}
	}
	raw, _ := json.Marshal(rec)
	c.closeOutbox(ctx, obID, store.OutboxDone, raw, "")
	if err := c.reload(ctx, rr); err != nil {
		return nil, err
	}
	return rr, nil
}

// submitSigned signs ev into the outbox and sends it with send, serialized
// with every other signed write of this Agent ID so the service sees nonces
// in order. When the service refuses the nonce and names a Max-Seen-Nonce
// within the bound of Agent Identity 6.2, the nonce is advanced and the event
// re-signed once with a fresh created_at. done, when set, gives the outbox
// entry's recorded result; otherwise the caller closes the entry (obID)
// itself. An unknown outcome is CodeSubmissionPending, the entry left for the
// background resubmission.
func submitSigned[T any](c *Connector, ctx context.Context, kind, service, roomID string, ev identity.Event,
	send func(*identity.Envelope) (T, error), done func(T) json.RawMessage) (T, *identity.Envelope, int64, error) {
	var zero T
	sl := c.submitLocks.get(submitKey(service))
	for attempt := 0; ; attempt++ {
		if err := sl.Lock(ctx); err != nil {
			return zero, nil, 0, err
		}
		env, obID, err := c.signToOutbox(ctx, kind, service, roomID, 0, ev)
		if err != nil {
			sl.Unlock()
			return zero, nil, 0, err
		}
		res, err := sendUnknownSafe(c, ctx, obID, func() (T, error) { return send(env) })
		sl.Unlock()
		if err == nil {
			if done != nil {
				c.closeOutbox(ctx, obID, store.OutboxDone, done(res), "")
			}
			return res, env, obID, nil
		}
		var ce *Error
		if errors.As(err, &ce) && ce.Code == CodeSubmissionPending {
			return zero, nil, 0, ce
		}
		c.closeOutbox(ctx, obID, store.OutboxFailed, nil, err.Error())
		var he *client.Error
		if errors.As(err, &he) && he.Code == identity.CodeNonceNotGreater && he.MaxSeenNonce != "" && attempt == 0 {
			if err := c.applyMaxSeenNonce(ctx, he.MaxSeenNonce); err != nil {
				return zero, nil, 0, err
			}
			ev.CreatedAt = c.nowMS()
			continue
		}
		return zero, nil, 0, wrap(err)
	}
}

// sendUnknownSafe calls send up to three times while the outcome stays
// unknown (network errors, 5xx): the same signed envelope is resubmitted,
// which the service answers idempotently. If it stays unknown the outbox
// entry is left for the background resubmission.
func sendUnknownSafe[T any](c *Connector, ctx context.Context, obID int64, send func() (T, error)) (T, error) {
	var zero T
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			if err := client.Sleep(ctx, time.Duration(attempt*attempt)*150*time.Millisecond); err != nil {
				break
			}
		}
		v, err := send()
		if err == nil {
			return v, nil
		}
		last = err
		if !unknownOutcome(err) {
			return zero, err
		}
		now := c.nowMS()
		c.outboxWrite(ctx, "extending an outbox lease", obID, func(ctx context.Context, tx *store.Tx) error {
			return tx.TouchOutbox(ctx, obID, now, now+outboxLease.Milliseconds(), err.Error())
		})
	}
	// Released, so the background resubmission may take the entry at once.
	now := c.nowMS()
	c.outboxWrite(ctx, "releasing an outbox entry", obID, func(ctx context.Context, tx *store.Tx) error {
		return tx.ReleaseOutbox(ctx, obID, now, fmt.Sprint(last))
	})
	return zero, &Error{Code: CodeSubmissionPending, Message: "the service could not be reached to confirm the write; it stays signed in the outbox and is resubmitted in the background (never twice)", Err: last}
}

// ProfileUpdate is agent_protocols_profile_update: sign a profile.update
// whose payload is the given profile with id set to the active Agent ID (a
// different id is refused) and submit it to a configured profile service.
// The accepted profile is pinned locally at its nonce.
func (c *Connector) ProfileUpdate(ctx context.Context, sess SessionID, in ProfileUpdateInput) (*ProfileUpdateResult, error) {
	if in.Profile == nil {
		return nil, invalid("profile must be an object")
	}
	origin, err := config.NormalizeOrigin(in.ProfileService)
	if err != nil {
		return nil, errorf(CodeHostNotAllowed, "profile_service %q is not an https origin", in.ProfileService)
	}
	ps, err := c.profileService(origin)
	if err != nil {
		return nil, err
	}
	p := cloneMap(in.Profile)
	if id, ok := p["id"]; ok && id != c.self {
		return nil, invalid("profile.id must be the active Agent ID %s", c.self)
	}
	p["id"] = c.self
	pv, err := objectValue(p)
	if err != nil {
		return nil, invalid("profile: %v", err)
	}
	ev := identity.Event{Protocol: identity.ProtocolProfile, Type: "profile.update", Actor: c.self, CreatedAt: c.nowMS(), Payload: pv}
	res, env, _, err := submitSigned(c, ctx, store.OutboxProfileUpdate, origin, "", ev,
		func(env *identity.Envelope) (*client.ProfileUpdateResult, error) { return ps.UpdateProfile(ctx, env) },
		func(r *client.ProfileUpdateResult) json.RawMessage { raw, _ := json.Marshal(r.Profile.Raw); return raw })
	if err != nil {
		return nil, err
	}
	if sp, err := profileFromEnvelope(origin, c.self, env, c.nowMS()); err == nil {
		if err := c.store.Write(ctx, func(tx *store.Tx) error { return tx.PutProfile(ctx, sp) }); err != nil && !errors.Is(err, store.ErrRollback) {
			c.log.Warn("pinning own profile", "err", err)
		}
	}
	doc := res.Profile.Raw
	if doc == nil {
		doc = map[string]any{}
	}
	return &ProfileUpdateResult{Profile: doc, Envelope: envelopeValue(env)}, nil
}
