package adp

import (
	"apconnect/host/identity"
)

// CheckJoinRequest applies section 10 to a room.join.request submitted to
// POST /v1/rooms/{room_id}/join-requests: an ADP event of this room, the
// room neither ended nor cancelled, a valid payload, the actor not an active
// member, and the requested role allowed by the room policy. Requests from
// banned agents are accepted for review (a host must never approve them
// automatically). now is the host clock. The caller verifies the envelope as
// a live write (hash, signature, window, nonce) and keeps the request's
// lifecycle — pending, superseded by a newer request of the same applicant
// (expired), expired, reviewed — itself.
func (r *Room) CheckJoinRequest(rules *Rules, env *identity.Envelope, now int64) error {
	rules = rules.orDefault()
	ev := &env.Event
	if ev.Protocol != Protocol {
		return newError(CodeInvalidEvent, "/event/protocol", "protocol must be %q", Protocol)
	}
	if ev.Type != TypeJoinRequest {
		return newError(CodeInvalidEvent, "/event/type", "a join request must be a room.join.request")
	}
	if err := CheckEventFields(ev, "/event"); err != nil {
		return err
	}
	if RoomOf(ev) != r.ID {
		return newError(CodeInvalidEvent, "/event/room_id", "event room_id does not name this room")
	}
	switch r.StatusAt(now) {
	case RoomEnded:
		return newError(CodeRoomNotActive, "", "the room has ended")
	case RoomCancelled:
		return newError(CodeRoomNotActive, "", "the room was cancelled")
	}
	if err := checkPayloadSize(rules.Limits, ev.Type, nil, ev.Payload); err != nil {
		return err
	}
	const at = "/event/payload"
	if err := validateKernel("roomJoinRequestPayload", ev.Payload, CodeInvalidEvent, at); err != nil {
		return err
	}
	if r.IsActiveMember(ev.Actor) {
		return newError(CodePermissionDenied, "/event/actor", "the actor is already an active member (the creator always is)")
	}
	return nil
}

// JoinRequestExpiry returns the expiry a host assigns to a join request
// received at now: now plus the request lifetime, not past the room's
// end_time (10). With no lifetime limit it is the end_time.
func (r *Room) JoinRequestExpiry(l Limits, now int64) int64 {
	if l.JoinRequestLifetime <= 0 {
		return r.EndTime
	}
	return min(now+l.JoinRequestLifetime.Milliseconds(), r.EndTime)
}

// reviewedRequest is the join request a room.join.review embeds, verified.
type reviewedRequest struct {
	env  *identity.Envelope
	role Role // the role the request asked for
}

// embeddedRequest reads and verifies the request a review embeds (10): the
// Agent Identity shape, hash and signature (historical verification, no
// window or nonce), a room.join.request of this room.
func (r *Room) embeddedRequest(payload map[string]any) (*reviewedRequest, error) {
	const at = "/event/payload/request"
	env, err := identity.EnvelopeFromValue(payload["request"], at)
	if err != nil {
		return nil, AsError(err)
	}
	if err := env.Verify(); err != nil {
		return nil, withPointerPrefix(err, at)
	}
	ev := &env.Event
	switch {
	case ev.Protocol != Protocol:
		return nil, newError(CodeInvalidEvent, at+"/event/protocol", "the embedded request is not an ADP event")
	case ev.Type != TypeJoinRequest:
		return nil, newError(CodeInvalidEvent, at+"/event/type", "the embedded request must be a room.join.request")
	}
	if err := CheckEventFields(ev, at+"/event"); err != nil {
		return nil, err
	}
	if RoomOf(ev) != r.ID {
		return nil, newError(CodeInvalidEvent, at+"/event/room_id", "the embedded request is for another room")
	}
	if err := validateKernel("roomJoinRequestPayload", ev.Payload, CodeInvalidEvent, at+"/event/payload"); err != nil {
		return nil, err
	}
	return &reviewedRequest{env: env, role: Role(str(ev.Payload.(map[string]any), "role"))}, nil
}

// checkReview applies the review rules of section 10.
func (r *Room) checkReview(ev *identity.Event, rules *Rules, opt CheckOptions) error {
	if err := r.requireManager(ev); err != nil {
		return err
	}
	const at = "/event/payload"
	if err := validateKernelAs(opt.dialect, "roomJoinReviewPayload", ev.Payload, CodeInvalidEvent, at); err != nil {
		return err
	}
	p := ev.Payload.(map[string]any)
	req, err := r.embeddedRequest(p)
	if err != nil {
		return err
	}
	id := req.env.Hash
	if seq, done := r.ReviewedRequests[id]; done {
		return newError(CodeJoinRequestNotPending, at+"/request", "the join request was already reviewed at seq %d", seq)
	}
	if opt.JoinRequests != nil {
		st, ok := opt.JoinRequests.JoinRequest(id)
		if !ok {
			return newError(CodeJoinRequestNotFound, at+"/request", "no join request %s is held for this room", id)
		}
		if st.Status != JoinPending || (st.ExpiresAt > 0 && st.ExpiresAt <= opt.Now) {
			status := st.Status
			if status == JoinPending {
				status = JoinExpired
			}
			return newError(CodeJoinRequestNotPending, at+"/request", "the join request is %s", status)
		}
	}
	if str(p, "decision") != "approve" {
		return nil
	}
	applicant := req.env.Event.Actor
	if r.IsActiveMember(applicant) {
		return newError(CodePermissionDenied, at+"/request", "the applicant is already an active member")
	}
	return r.checkRoleGrant(applicant, Role(str(p, "role")), rules.Limits, true, at+"/role")
}
