package discourse

import (
	"context"
	"encoding/json"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/room"
	"apconnect/host/store"
)

// RoomSendMessage is agent_protocols_room_send_message: sign and submit a
// message.create built from the input (content_type text/plain by
// default, references in the payload, mentions at the event's top level).
// The base is base_seq/base_hash or the session's presented head; when the
// room moved past it, on_head_mismatch decides (hold by default: a held
// draft and the changes, nothing signed; reject; send_anyway: re-sign on
// the latest head at most MaxAutoResigns times, then hold).
func (c *Module) RoomSendMessage(ctx context.Context, sess SessionID, in RoomSendMessageInput) (*WriteResult, error) {
	if in.Content == "" {
		return nil, engine.Invalid("content must not be empty")
	}
	ct := in.ContentType
	if ct == "" {
		ct = "text/plain"
	}
	policy, err := normPolicy(in.OnHeadMismatch)
	if err != nil {
		return nil, err
	}
	base, err := explicitBase(in.BaseSeq, in.BaseHash)
	if err != nil {
		return nil, err
	}
	payload := map[string]any{"content_type": ct, "content": in.Content}
	if len(in.Extra) > 0 {
		payload["extra"] = in.Extra
	}
	pv, err := engine.ObjectValue(payload)
	if err != nil {
		return nil, engine.Invalid("payload: %v", err)
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseWrite); err != nil {
		return nil, err
	}
	draft := map[string]any{"content": in.Content, "content_type": ct, "mentions": strs(in.Mentions),
		"references": strs(in.References), "extra": objOrEmpty(in.Extra)}
	return c.write(ctx, &writeRequest{sess: sess, rr: rr, typ: adp.TypeMessageCreate, payload: pv, mentions: in.Mentions,
		references: in.References, base: base, policy: policy, draftKind: "message", draftInput: draft})
}

// RoomSubmitEvent is agent_protocols_room_submit_event: sign and submit any
// other room event — a custom type of the room's registry (its payload
// validated against the type's schema and by plugin validators before
// signing) or a built-in without its own tool (room.update, room.close,
// room.cancel, type.define, room.member.role.update, room.member.remove,
// room.leave, room.join.review). Head-bound and contract writes follow
// on_head_mismatch; signal-kind and membership events are never held.
func (c *Module) RoomSubmitEvent(ctx context.Context, sess SessionID, in RoomSubmitEventInput) (*WriteResult, error) {
	if !adp.ValidTypeName(in.Type) {
		return nil, engine.Invalid("type %q is not an event type name", in.Type)
	}
	if in.Payload == nil {
		return nil, engine.Invalid("payload must be a JSON object")
	}
	policy, err := normPolicy(in.OnHeadMismatch)
	if err != nil {
		return nil, err
	}
	base, err := explicitBase(in.BaseSeq, in.BaseHash)
	if err != nil {
		return nil, err
	}
	pv, err := engine.ObjectValue(in.Payload)
	if err != nil {
		return nil, engine.Invalid("payload: %v", err)
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseWrite); err != nil {
		return nil, err
	}
	if in.Type == adp.TypeTypeDefine {
		// A plugin pack import becomes the inline definition it brings.
		if pv, err = c.expandTypeDefine(ctx, rr.h, pv); err != nil {
			return nil, err
		}
	}
	draft := map[string]any{"type": in.Type, "payload": pv, "mentions": strs(in.Mentions), "references": strs(in.References)}
	return c.write(ctx, &writeRequest{sess: sess, rr: rr, typ: in.Type, payload: pv, mentions: in.Mentions,
		references: in.References, base: base, policy: policy, draftKind: "event", draftInput: draft})
}

// RoomLeave is agent_protocols_room_leave: sign and submit room.leave (a
// signal write, never held).
func (c *Module) RoomLeave(ctx context.Context, sess SessionID, in RoomLeaveInput) (*RecordResult, error) {
	payload := map[string]any{}
	if in.Reason != "" {
		payload["reason"] = in.Reason
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseWrite); err != nil {
		return nil, err
	}
	res, err := c.write(ctx, &writeRequest{sess: sess, rr: rr, typ: adp.TypeRoomLeave, payload: payload, policy: PolicyHold,
		draftKind: "event", draftInput: map[string]any{"type": adp.TypeRoomLeave, "payload": payload}})
	if err != nil {
		return nil, err
	}
	c.live.kick()
	return &RecordResult{Record: res.Record, Sync: *res.Sync}, nil
}

// JoinRequestReview is agent_protocols_join_request_review: read the
// pending join request from the host, embed the applicant's signed request
// in a room.join.review (role required to approve) and sign and submit it.
func (c *Module) JoinRequestReview(ctx context.Context, sess SessionID, in JoinRequestReviewInput) (*RecordResult, error) {
	switch in.Decision {
	case "approve":
		if in.Role == "" {
			return nil, engine.Invalid("approving a join request requires a role")
		}
		if !adp.Role(in.Role).Valid() {
			return nil, engine.Invalid("role %q is not moderator, speaker or observer", in.Role)
		}
	case "reject":
	default:
		return nil, engine.Invalid("decision %q is not approve or reject", in.Decision)
	}
	if _, err := identity.DecodeBase64URLLen(in.RequestID, 32); err != nil {
		return nil, engine.Invalid("request_id is not an event id")
	}
	rr, err := c.resolve(ctx, in.Host, in.RoomID, true)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, rr.h.origin, capability.DiscourseWrite); err != nil {
		return nil, err
	}
	jr, err := rr.h.client.JoinRequest(ctx, rr.roomID, in.RequestID)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if jr.Request == nil || jr.Request.Hash != in.RequestID {
		return nil, engine.Errorf(engine.CodeInvalidInput, "the host returned another join request than %s", in.RequestID)
	}
	payload := map[string]any{"request": jr.Request.Value(), "decision": in.Decision}
	if in.Decision == "approve" {
		payload["role"] = in.Role
	}
	if in.Reason != "" {
		payload["reason"] = in.Reason
	}
	pv, err := engine.ObjectValue(payload)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	res, err := c.write(ctx, &writeRequest{sess: sess, rr: rr, typ: adp.TypeJoinReview, payload: pv, policy: PolicyHold,
		draftKind: "event", draftInput: map[string]any{"type": adp.TypeJoinReview, "payload": pv}})
	if err != nil {
		return nil, err
	}
	if err := c.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.ResolveEvent(ctx, rr.row.Key, room.KindJoinRequested, in.RequestID)
	}); err != nil {
		c.Log.Warn("resolving join request inbox items", "err", err)
	}
	return &RecordResult{Record: res.Record, Sync: *res.Sync}, nil
}

func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string{}, s...)
}

func objOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// envelopeValue returns an envelope as a JSON object value.
func envelopeValue(env *identity.Envelope) map[string]any {
	var m map[string]any
	raw, _ := json.Marshal(env)
	_ = json.Unmarshal(raw, &m)
	return m
}
