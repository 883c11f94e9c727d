package discourse

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
)

// RoomJoin is agent_protocols_room_join, every join path of connector spec
// 4.3 under ADP 1.0:
//
//   - an own join request is re-read first: pending gives
//     approval_required (it is never submitted twice), rejected gives
//     rejected, approved completes — the approving room.join.review record
//     is the membership event in ADP 1.0, so the connector syncs the room,
//     checks that the agent is an active member with the approved role (an
//     input role that differs is role_mismatch) and returns joined;
//   - an agent already active in the room gets joined at once;
//   - when a direct join is allowed (the role is an effective open role of
//     the room in any visibility, or an invitation names exactly that role,
//     and no ban), it signs and submits room.join with the role and
//     perspective;
//   - otherwise it signs and submits room.join.request (role, perspective,
//     reason, extra) and returns approval_required with the request.
func (c *Module) RoomJoin(ctx context.Context, sess SessionID, in RoomJoinInput) (*RoomJoinResult, error) {
	role := adp.Role(in.Role)
	if !role.Valid() {
		return nil, engine.Invalid("role %q is not moderator, speaker or observer", in.Role)
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, false)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseWrite); err != nil {
		return nil, err
	}
	if rr.row == nil {
		now := c.NowMS()
		if err := c.Store.Write(ctx, func(tx *store.Tx) error {
			row, err := tx.EnsureRoom(ctx, rr.h.origin, rr.roomID, now)
			rr.row = row
			return err
		}); err != nil {
			return nil, engine.Wrap(err)
		}
	}
	// 1. An own request, stored or named.
	var own *store.JoinRequest
	if in.RequestID != "" {
		if _, err := identity.DecodeBase64URLLen(in.RequestID, 32); err != nil {
			return nil, engine.Invalid("request_id is not an event id")
		}
		own, err = c.refreshOwnRequest(ctx, rr, in.RequestID)
		if err != nil {
			return nil, err
		}
	} else if j, err := c.Store.Read().OwnJoinRequest(ctx, rr.row.Key); err == nil {
		if own, err = c.refreshOwnRequest(ctx, rr, j.ID); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, engine.Wrap(err)
	}
	if own != nil {
		switch adp.JoinRequestStatus(own.Status) {
		case adp.JoinPending:
			return &RoomJoinResult{Status: JoinApprovalRequired, JoinRequest: resourceOf(own)}, nil
		case adp.JoinRejected:
			if err := c.consume(ctx, own); err != nil {
				return nil, err
			}
			return &RoomJoinResult{Status: JoinRejected, JoinRequest: resourceOf(own)}, nil
		case adp.JoinApproved:
			return c.completeJoin(ctx, sess, rr, own, role)
		}
		// Expired: start afresh below.
	}
	// 2. Known state: already a member, or a direct join.
	if !rr.row.HasSnapshot {
		if _, err := c.syncRoom(ctx, rr.h, rr.row.Key, rr.roomID, syncOptions{resource: true}); err != nil {
			e := engine.AsError(err)
			if !slices.Contains([]string{adp.CodeMembershipRequired, identity.CodePermissionDenied, adp.CodeRoomNotFound, identity.CodeNotFound}, e.Code) {
				return nil, e
			}
		}
		if err := c.reload(ctx, rr); err != nil {
			return nil, err
		}
	}
	payload := map[string]any{"role": in.Role}
	if in.Perspective != "" {
		payload["perspective"] = in.Perspective
	}
	if rr.row.HasSnapshot {
		st, err := c.loadStateRow(ctx, rr.row)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		if m, ok := st.Room.Members[c.Self]; ok && m.Active {
			return c.joinedResult(ctx, sess, rr, nil)
		}
		if st.Room.CanJoinDirectly(c.Self, role) && !st.Room.IsBanned(c.Self) {
			res, err := c.write(ctx, &writeRequest{sess: sess, rr: rr, typ: adp.TypeRoomJoin, payload: payload, policy: PolicyHold,
				draftKind: "event", draftInput: map[string]any{"type": adp.TypeRoomJoin, "payload": payload}})
			if err != nil {
				return nil, err
			}
			c.live.kick()
			return c.joinedResult(ctx, sess, rr, res.Record)
		}
	} else if direct, res, err := c.directJoinFromResource(ctx, rr, role, payload); err != nil {
		return nil, err
	} else if direct {
		return c.joinedResult(ctx, sess, rr, res)
	}
	// 3. A join request.
	return c.requestJoin(ctx, rr, in)
}

// refreshOwnRequest reads an own join request from the host and stores it.
func (c *Module) refreshOwnRequest(ctx context.Context, rr *roomRef, id string) (*store.JoinRequest, error) {
	ctx, err := c.Need(ctx, rr.h.origin, capability.DiscourseRead)
	if err != nil {
		return nil, err
	}
	jr, err := rr.h.client.JoinRequest(ctx, rr.roomID, id)
	if err != nil {
		if code := engine.ServiceCode(err); code == adp.CodeJoinRequestNotFound || code == identity.CodeNotFound {
			// Gone on the host: treat as expired.
			if j, err := c.Store.Read().JoinRequest(ctx, rr.row.Key, id); err == nil {
				j.Status = string(adp.JoinExpired)
				return j, nil
			}
			return nil, engine.Wrap(err)
		}
		return nil, engine.Wrap(err)
	}
	if jr.Request == nil || jr.Request.Event.Actor != c.Self || jr.ID != id {
		return nil, engine.Errorf(engine.CodeInvalidInput, "join request %s is not this agent's request", id)
	}
	j := joinRow(rr.row.Key, jr, true, c.NowMS())
	if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutJoinRequest(ctx, j) }); err != nil {
		return nil, engine.Wrap(err)
	}
	return c.Store.Read().JoinRequest(ctx, rr.row.Key, id)
}

// joinRow converts a join request resource for the store.
func joinRow(key int64, jr *client.JoinRequest, own bool, now int64) *store.JoinRequest {
	raw, _ := json.Marshal(jr.Raw)
	j := &store.JoinRequest{RoomKey: key, ID: jr.ID, Own: own, Status: string(jr.Status), ExpiresAt: jr.ExpiresAt, Resource: raw,
		CreatedAt: now, UpdatedAt: now}
	if jr.Request != nil {
		j.Applicant = jr.Request.Event.Actor
		if p, ok := jr.Request.Event.Payload.(map[string]any); ok {
			j.Role, _ = p["role"].(string)
		}
	}
	return j
}

func resourceOf(j *store.JoinRequest) map[string]any {
	var m map[string]any
	if json.Unmarshal(j.Resource, &m) != nil || m == nil {
		m = map[string]any{"id": j.ID, "status": j.Status}
	}
	m["status"] = j.Status
	return m
}

func (c *Module) consume(ctx context.Context, j *store.JoinRequest) error {
	j.Consumed, j.UpdatedAt = true, c.NowMS()
	return engine.Wrap(c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutJoinRequest(ctx, j) }))
}

// completeJoin finishes a join whose request was approved: the review
// record made the agent a member; sync, check the approved role and
// report the membership.
func (c *Module) completeJoin(ctx context.Context, sess SessionID, rr *roomRef, own *store.JoinRequest, role adp.Role) (*RoomJoinResult, error) {
	if _, err := c.syncRoom(ctx, rr.h, rr.row.Key, rr.roomID, syncOptions{resource: !rr.row.HasSnapshot}); err != nil {
		return nil, err
	}
	if err := c.reload(ctx, rr); err != nil {
		return nil, err
	}
	var res map[string]any
	_ = json.Unmarshal(own.Resource, &res)
	reviewID, _ := res["review_event_id"].(string)
	var approved string
	var reviewRecord json.RawMessage
	if reviewID != "" {
		if ev, err := c.Store.Read().EventByID(ctx, rr.row.Key, reviewID); err == nil {
			var rec adp.Record
			if json.Unmarshal(ev.Record, &rec) == nil && rec.Envelope != nil {
				if p, ok := rec.Envelope.Event.Payload.(map[string]any); ok {
					approved, _ = p["role"].(string)
				}
			}
			reviewRecord = ev.Record
		}
	}
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if st.Room == nil {
		return nil, engine.Errorf(engine.CodeUnavailable, "the approved membership is not visible yet: the room could not be read")
	}
	m, ok := st.Room.Members[c.Self]
	if !ok || !m.Active {
		return nil, engine.Errorf(engine.CodeUnavailable, "the approved membership is not visible yet; try again shortly")
	}
	if approved == "" {
		approved = string(m.Role)
	}
	if string(role) != approved {
		return nil, &engine.Error{Code: CodeRoleMismatch, Message: "the join request was approved as " + approved + ", not " + string(role) + "; call again with role " + approved,
			Data: map[string]any{"approved_role": approved, "requested_role": string(role), "request_id": own.ID}}
	}
	if err := c.consume(ctx, own); err != nil {
		return nil, err
	}
	c.live.kick()
	return c.joinedResult(ctx, sess, rr, reviewRecord)
}

// joinedResult reports the agent's membership.
func (c *Module) joinedResult(ctx context.Context, sess SessionID, rr *roomRef, record json.RawMessage) (*RoomJoinResult, error) {
	if err := c.reload(ctx, rr); err != nil {
		return nil, err
	}
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &RoomJoinResult{Status: JoinJoined, Record: record}
	if st.Room != nil {
		if m, ok := room.Member(st.Room, c.Self); ok {
			out.Member = &m
		}
	}
	sync, err := c.syncState(ctx, c.Store.Read(), rr, sess)
	if err != nil {
		return nil, err
	}
	out.Sync = &sync
	return out, nil
}

// directJoinFromResource joins a room the connector cannot read history of
// yet (a private or restricted room the agent is invited to): the room
// resource says whether a direct join is allowed and gives the anchor; the
// history is synced and verified once the agent is a member.
func (c *Module) directJoinFromResource(ctx context.Context, rr *roomRef, role adp.Role, payload map[string]any) (bool, json.RawMessage, error) {
	res, err := rr.h.client.Room(ctx, rr.roomID)
	if err != nil {
		e := engine.AsError(err)
		if e.Code == adp.CodeRoomNotFound || e.Code == identity.CodeNotFound || e.Code == identity.CodePermissionDenied || e.Code == adp.CodeMembershipRequired {
			return false, nil, nil
		}
		return false, nil, e
	}
	var pol adp.Policy
	if res.Policy != nil {
		raw, _ := json.Marshal(res.Policy)
		if err := json.Unmarshal(raw, &pol); err != nil {
			return false, nil, nil
		}
	}
	direct := pol.Invites[c.Self] == role || slices.Contains(pol.EffectiveOpenRoles(res.Visibility), role)
	if !direct {
		return false, nil, nil
	}
	anchor := res.Head
	if res.Seq > 0 {
		anchor = adp.Link{Seq: res.Seq, Hash: res.Hash}
	}
	if anchor.Seq < 1 {
		return false, nil, nil
	}
	pv, err := engine.ObjectValue(payload)
	if err != nil {
		return false, nil, engine.Wrap(err)
	}
	ev := adp.NewEvent(adp.TypeRoomJoin, c.Self, c.NowMS(), pv, adp.Fields{RoomID: rr.roomID, Base: &anchor})
	sent, err := engine.Submit(c.Engine, ctx, engine.Write{Kind: OutboxRoomEvent, Origin: rr.h.origin, Capability: capability.DiscourseWrite,
		Event: ev, Ref: rr.roomID, BaseSeq: anchor.Seq}, func(ctx context.Context, env *identity.Envelope) (*adp.Record, error) {
		res, err := rr.h.client.Submit(ctx, rr.roomID, env)
		if err != nil {
			return nil, err
		}
		return res.Record, nil
	})
	if err != nil {
		return false, nil, engine.Wrap(err)
	}
	rec := sent.Result
	if err := c.acceptOwnRecord(ctx, rr.h, rr.row.Key, rr.roomID, rec, sent.Outbox); err != nil {
		return false, nil, err
	}
	c.live.kick()
	raw, _ := json.Marshal(rec)
	return true, raw, nil
}

// requestJoin signs and submits a room.join.request and stores it as the
// agent's own request.
func (c *Module) requestJoin(ctx context.Context, rr *roomRef, in RoomJoinInput) (*RoomJoinResult, error) {
	payload := map[string]any{"role": in.Role}
	if in.Perspective != "" {
		payload["perspective"] = in.Perspective
	}
	if in.Reason != "" {
		payload["reason"] = in.Reason
	}
	if len(in.Extra) > 0 {
		payload["extra"] = in.Extra
	}
	pv, err := engine.ObjectValue(payload)
	if err != nil {
		return nil, engine.Invalid("join request: %v", err)
	}
	ev := adp.NewEvent(adp.TypeJoinRequest, c.Self, c.NowMS(), pv, adp.Fields{RoomID: rr.roomID})
	sent, err := engine.Submit(c.Engine, ctx, engine.Write{Kind: OutboxJoinRequest, Origin: rr.h.origin, Capability: capability.DiscourseWrite,
		Event: ev, Ref: rr.roomID}, func(ctx context.Context, env *identity.Envelope) (*client.JoinRequestResult, error) {
		return rr.h.client.SubmitJoinRequest(ctx, rr.roomID, env)
	})
	if err != nil {
		return nil, err
	}
	res := sent.Result
	raw, _ := json.Marshal(res.JoinRequest.Raw)
	c.Done(ctx, sent.Outbox, raw)
	j := joinRow(rr.row.Key, res.JoinRequest, true, c.NowMS())
	if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutJoinRequest(ctx, j) }); err != nil {
		return nil, engine.Wrap(err)
	}
	return &RoomJoinResult{Status: JoinApprovalRequired, JoinRequest: resourceOf(j)}, nil
}

// JoinRequestsList is agent_protocols_join_requests_list: the room's join
// requests from the host (creator and moderators only; an authenticated
// read, nothing signed). Pending ones get room.join.requested inbox items.
func (c *Module) JoinRequestsList(ctx context.Context, sess SessionID, in JoinRequestsListInput) (*JoinRequestsListResult, error) {
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
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
	page, err := rr.h.client.JoinRequests(ctx, rr.roomID, client.JoinRequestQuery{Status: in.Status, Limit: min(limit, 100), Cursor: in.Cursor})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &JoinRequestsListResult{JoinRequests: []map[string]any{}, NextCursor: page.NextCursor}
	if err := c.noteJoinRequests(ctx, rr, page.Items); err != nil {
		return nil, err
	}
	for _, jr := range page.Items {
		m := jr.Raw
		if m == nil {
			raw, _ := json.Marshal(jr)
			_ = json.Unmarshal(raw, &m)
		}
		out.JoinRequests = append(out.JoinRequests, m)
	}
	return out, nil
}

// noteJoinRequests stores join requests the agent reviews and makes sure
// each pending one has a room.join.requested inbox item.
func (c *Module) noteJoinRequests(ctx context.Context, rr *roomRef, list []*client.JoinRequest) error {
	if len(list) == 0 {
		return nil
	}
	now := c.NowMS()
	var inserted []string
	err := c.Store.Write(ctx, func(tx *store.Tx) error {
		var items []store.InboxEntry
		for _, jr := range list {
			if jr.Request != nil && jr.Request.Event.Actor == c.Self {
				continue
			}
			if err := tx.PutJoinRequest(ctx, joinRow(rr.row.Key, jr, false, now)); err != nil {
				return err
			}
			if jr.Status == adp.JoinPending {
				j := joinRow(rr.row.Key, jr, false, now)
				items = append(items, joinRequestedItem(rr.h.origin, rr.roomID, jr.ID, j.Applicant, j.Role, now))
			}
		}
		var err error
		inserted, err = tx.InsertInbox(ctx, rr.row.Key, items)
		return err
	})
	if len(inserted) > 0 {
		c.Notify()
	}
	return engine.Wrap(err)
}

// joinRequestedItem is the connector-local room.join.requested item for a
// reviewer (created_at is the local time).
func joinRequestedItem(host, roomID, requestID, applicant, role string, now int64) store.InboxEntry {
	it := room.NewInboxItem(host, roomID, room.KindJoinRequested, room.PriorityHigh, 0, requestID, applicant, now, "join_requested",
		"Join request as "+role+" awaits your review", true, room.ToolReview, "agent_protocols_join_requests_list")
	raw, _ := json.Marshal(it)
	return store.InboxEntry{ID: it.ID, Kind: it.Kind, EventID: requestID, Priority: room.PriorityRank(it.Priority), CreatedAt: now, Item: raw}
}
