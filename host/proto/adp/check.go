package adp

import (
	"context"
	"fmt"
	"mime"
	"strings"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// RecordLookup answers the record hash at a seq of one room. ok is false
// when the caller does not hold that record.
type RecordLookup interface {
	RecordHash(seq int64) (hash string, ok bool)
}

// RecordHashFunc adapts a function to RecordLookup.
type RecordHashFunc func(seq int64) (string, bool)

// RecordHash calls f.
func (f RecordHashFunc) RecordHash(seq int64) (string, bool) { return f(seq) }

// EventLookup answers whether an event ID belongs to an accepted record of
// the room (redacted records included: their event IDs stay valid, 14.1).
type EventLookup interface {
	HasEvent(eventID string) bool
}

// EventFunc adapts a function to EventLookup.
type EventFunc func(eventID string) bool

// HasEvent calls f.
func (f EventFunc) HasEvent(eventID string) bool { return f(eventID) }

// JoinRequestStatus is a join request's status (10).
type JoinRequestStatus string

// Join request statuses.
const (
	JoinPending  JoinRequestStatus = "pending"
	JoinApproved JoinRequestStatus = "approved"
	JoinRejected JoinRequestStatus = "rejected"
	JoinExpired  JoinRequestStatus = "expired"
)

// JoinRequestState is what a host knows of a join request it holds.
type JoinRequestState struct {
	// Status is the request's status; only JoinPending may be reviewed.
	Status JoinRequestStatus
	// ExpiresAt is the request's expiry (Unix ms); 0 for none.
	ExpiresAt int64
}

// JoinRequestLookup returns the state of a join request of the room by its
// event ID; ok is false when the host holds no such request.
type JoinRequestLookup interface {
	JoinRequest(id string) (state JoinRequestState, ok bool)
}

// JoinRequestFunc adapts a function to JoinRequestLookup.
type JoinRequestFunc func(id string) (JoinRequestState, bool)

// JoinRequest calls f.
func (f JoinRequestFunc) JoinRequest(id string) (JoinRequestState, bool) { return f(id) }

// CheckOptions carry what Check needs beyond the room state.
type CheckOptions struct {
	// Now is the acceptance time (Unix ms): the host clock for a live
	// write, the record's accepted_at when verifying a record.
	Now int64
	// Records looks up record hashes for contract and signal anchors
	// (5.1). Anchors at the latest record and at the head are answered from
	// the room state; any other anchor needs the lookup.
	Records RecordLookup
	// TrustUnknownAnchors accepts a contract or signal anchor at a seq the
	// room has reached but Records does not hold, instead of rejecting it
	// with base_record_mismatch. For a connector whose record window is
	// bounded; never for a host, which holds every record.
	TrustUnknownAnchors bool
	// Events checks that message.create references name events of the
	// room (11); nil skips that check.
	Events EventLookup
	// Envelopes, for a reader, finds the earlier record of the room that
	// carries an envelope, by event hash, over the room's whole history:
	// CheckRecord refuses a record whose envelope an earlier record
	// already carries (replayed_envelope). nil skips that check. Check, which
	// judges a live write, ignores it: a host answers an exact resubmission
	// with the original record before any room rule runs (Agent Identity
	// 6.1 step 6), and its records table holds each event hash once.
	Envelopes EnvelopeLookup
	// JoinRequests gives the host's state of the request a room.join.review
	// embeds (pending and unexpired, 10). A host must set it. A verifier,
	// which cannot know request lifecycles, leaves it nil: it then checks
	// only that a request is reviewed once.
	JoinRequests JoinRequestLookup
	// RoomURL is the canonical room URL; when set, room_head_mismatch data
	// carries events_url.
	RoomURL string

	// dialect is current for a host and historical for a reader
	// (VerifyRecord sets it).
	dialect dialect
}

// Check applies every ADP acceptance rule that depends on room state and the
// event to env, a write for this room (every type except room.create, which
// CheckCreate handles, and room.join.request, which CheckJoinRequest
// handles): event framing, type registry and status, state restrictions,
// the freshness base (5.1), membership, roles, bans, invitations and open
// roles, quotas that are room state (max_speakers, observers), payload
// shape, size and schema, and the per-type rules of 8.4, 9.2–9.5, 10, 11,
// 12.4 and 12.6.
//
// It does not verify the envelope's hash or signature, the timestamp window
// or the nonce (Agent Identity 6.1 steps 1–8 are the caller's), nor rates.
// It does not change the room; Apply does, with the accepted record. A host
// must hold the room exclusively from Check to Apply, so the head compared
// is the head replaced.
func (r *Room) Check(rules *Rules, env *identity.Envelope, opt CheckOptions) error {
	rules = rules.orDefault()
	ev := &env.Event
	if err := r.checkFrame(ev); err != nil {
		return err
	}
	class, err := ClassOf(ev.Type, r.Types)
	if err != nil {
		return err
	}
	var def *TypeDef
	if !IsBuiltin(ev.Type) {
		def, _ = r.Types.Lookup(ev.Type)
		if def.EffectiveStatus() == TypeDisabled {
			return newError(CodeTypeDisabled, "/event/type", "event type %s is disabled in this room", ev.Type)
		}
	}
	if err := stateAllows(r.StatusAt(opt.Now), ev.Type); err != nil {
		return err
	}
	if err := r.checkBase(class, ev, opt); err != nil {
		return err
	}
	if err := checkPayloadSize(rules.Limits, ev.Type, def, ev.Payload); err != nil {
		return err
	}
	switch ev.Type {
	case TypeRoomUpdate:
		return r.checkUpdate(ev, rules, opt)
	case TypeRoomClose, TypeRoomCancel:
		if err := r.requireManager(ev); err != nil {
			return err
		}
		return validateKernelAs(opt.dialect, "reasonPayload", ev.Payload, CodeInvalidEvent, "/event/payload")
	case TypeTypeDefine:
		return r.checkTypeDefine(ev, rules, opt.dialect)
	case TypeRoomJoin:
		return r.checkJoin(ev, rules, opt.dialect)
	case TypeJoinReview:
		return r.checkReview(ev, rules, opt)
	case TypeRoomLeave:
		return r.checkLeave(ev, opt.dialect)
	case TypeRoleUpdate:
		return r.checkRoleUpdate(ev, rules, opt.dialect)
	case TypeMemberRemove:
		return r.checkRemove(ev, opt.dialect)
	case TypeMessageCreate:
		return r.checkMessage(ev, opt)
	}
	return r.checkCustom(ev, def, rules, opt.dialect)
}

// checkFrame checks what every room write shares: the protocol, a valid
// type name that is neither room.create nor room.join.request, this room's
// id, and a base.
func (r *Room) checkFrame(ev *identity.Event) error {
	if ev.Protocol != Protocol {
		return newError(CodeInvalidEvent, "/event/protocol", "protocol must be %q", Protocol)
	}
	if !ValidTypeName(ev.Type) {
		return newError(CodeInvalidEvent, "/event/type", "event type must be a dot-separated lowercase name")
	}
	switch ev.Type {
	case TypeRoomCreate:
		return newError(CodeInvalidEvent, "/event/type", "room.create creates a room; check it with CheckCreate")
	case TypeJoinRequest:
		return newError(CodeInvalidEvent, "/event/type", "room.join.request is never a record; check it with CheckJoinRequest")
	}
	if err := CheckEventFields(ev, "/event"); err != nil {
		return err
	}
	if RoomOf(ev) != r.ID {
		return newError(CodeInvalidEvent, "/event/room_id", "event room_id does not name this room")
	}
	return nil
}

// checkBase applies the freshness rule of the event's class (5.1) with
// CheckBase: anchors at the latest record and at the head are answered from
// the room state, any other through opt.Records.
func (r *Room) checkBase(class Class, ev *identity.Event, opt CheckOptions) error {
	base, _ := baseOf(ev) // present: checkFrame ran CheckEventFields
	anchor := func(seq int64) (string, bool) {
		if seq == r.Last.Seq {
			return r.Last.Hash, true
		}
		if opt.Records != nil {
			return opt.Records.RecordHash(seq)
		}
		return "", false
	}
	err := CheckBase(class, r.Head, r.Last.Seq, base, anchor, opt.TrustUnknownAnchors)
	return withEventsURL(err, opt.RoomURL, base.Seq)
}

// checkPayloadSize bounds JCS(payload) (20).
func checkPayloadSize(l Limits, typ string, def *TypeDef, payload any) error {
	limit := l.payloadLimit(typ, def)
	if limit <= 0 {
		return nil
	}
	n, err := canonicalSize(payload)
	if err != nil {
		return newError(CodeInvalidEvent, "/event/payload", "cannot canonicalize the payload: %v", err)
	}
	if n > limit {
		e := newError(CodePayloadTooLarge, "/event/payload", "payload is %d bytes; at most %d are allowed for %s", n, limit, text.Truncate(typ, 80))
		e.Data = map[string]any{"size": int64(n), "limit": int64(limit)}
		return e
	}
	return nil
}

// requireManager rejects writes of creator/moderator-only built-ins by
// anyone else.
func (r *Room) requireManager(ev *identity.Event) error {
	if !r.IsManager(ev.Actor) {
		return newError(CodePermissionDenied, "/event/actor", "only the room creator or an active moderator may send %s", ev.Type)
	}
	return nil
}

// checkUpdate applies 8.4.
func (r *Room) checkUpdate(ev *identity.Event, rules *Rules, opt CheckOptions) error {
	now := opt.Now
	if err := r.requireManager(ev); err != nil {
		return err
	}
	u, err := parseUpdate(opt.dialect, ev.Payload, r.Visibility)
	if err != nil {
		return err
	}
	active := r.StatusAt(now) == RoomActive
	if u.start != nil && active {
		return newError(CodeInvalidEvent, "/event/payload/start_time", "start_time cannot change once the room is active")
	}
	start, end := u.effectiveTimes(r)
	if err := checkTimes(start, end, rules.Limits, "/event/payload"); err != nil {
		return err
	}
	if active && end <= now {
		return newError(CodeInvalidEvent, "/event/payload/end_time", "an active room's end_time must stay after the acceptance time; end a room early with room.close")
	}
	return nil
}

// checkTypeDefine applies 12.4 to a type.define.
func (r *Room) checkTypeDefine(ev *identity.Event, rules *Rules, dl dialect) error {
	if err := r.requireManager(ev); err != nil {
		return err
	}
	const at = "/event/payload"
	d, err := parseDeclaration(dl, ev.Payload, at)
	if err != nil {
		return err
	}
	mat, err := rules.materialize(context.Background(), dl, d, at, rules.Limits)
	if err != nil {
		return err
	}
	_, err = declare(r.Types, []*materialized{mat}, false, rules.Limits.MaxTypes)
	return err
}

// checkJoin applies 9.2.
func (r *Room) checkJoin(ev *identity.Event, rules *Rules, d dialect) error {
	const at = "/event/payload"
	if err := validateKernelAs(d, "roomJoinPayload", ev.Payload, CodeInvalidEvent, at); err != nil {
		return err
	}
	role := Role(str(ev.Payload.(map[string]any), "role"))
	if r.IsActiveMember(ev.Actor) {
		return newError(CodePermissionDenied, "/event/actor", "the actor is already an active member (the creator always is)")
	}
	if r.IsBanned(ev.Actor) {
		return newError(CodeMemberBanned, "/event/actor", "the actor is banned from this room")
	}
	if err := r.checkRoleGrant(ev.Actor, role, rules.Limits, true, at+"/role"); err != nil {
		return err
	}
	if !r.canJoinDirectly(d, ev.Actor, role) {
		return newError(CodeApprovalRequired, at+"/role", "the actor is neither invited as %s nor may take it as an open role; submit a join request", role)
	}
	return nil
}

// checkLeave applies 9.3.
func (r *Room) checkLeave(ev *identity.Event, d dialect) error {
	if !r.IsActiveMember(ev.Actor) {
		return newError(CodePermissionDenied, "/event/actor", "only an active member can leave")
	}
	if r.IsCreator(ev.Actor) {
		return newError(CodePermissionDenied, "/event/actor", "the creator cannot leave; it closes or cancels the room instead")
	}
	return validateKernelAs(d, "reasonPayload", ev.Payload, CodeInvalidEvent, "/event/payload")
}

// checkRoleUpdate applies 9.4.
func (r *Room) checkRoleUpdate(ev *identity.Event, rules *Rules, d dialect) error {
	if err := r.requireManager(ev); err != nil {
		return err
	}
	const at = "/event/payload"
	if err := validateKernelAs(d, "roomMemberRoleUpdatePayload", ev.Payload, CodeInvalidEvent, at); err != nil {
		return err
	}
	p := ev.Payload.(map[string]any)
	member, role := str(p, "member"), Role(str(p, "role"))
	if !identity.ValidAgentID(member) {
		return newError(CodeInvalidEvent, at+"/member", "member must be a canonical Agent ID")
	}
	if !r.IsActiveMember(member) {
		return newError(CodeNotFound, at+"/member", "member is not an active member of the room")
	}
	return r.checkRoleGrant(member, role, rules.Limits, false, at+"/role")
}

// checkRemove applies 9.5.
func (r *Room) checkRemove(ev *identity.Event, d dialect) error {
	if err := r.requireManager(ev); err != nil {
		return err
	}
	const at = "/event/payload"
	if err := validateKernelAs(d, "roomMemberRemovePayload", ev.Payload, CodeInvalidEvent, at); err != nil {
		return err
	}
	p := ev.Payload.(map[string]any)
	member := str(p, "member")
	ban, _ := p["ban"].(bool)
	switch {
	case !identity.ValidAgentID(member):
		return newError(CodeInvalidEvent, at+"/member", "member must be a canonical Agent ID")
	case r.IsCreator(member):
		return newError(CodePermissionDenied, at+"/member", "the room creator cannot be removed or banned")
	case member == ev.Actor:
		return newError(CodeInvalidRequest, at+"/member", "a member cannot remove itself; leaving is room.leave")
	case !r.IsActiveMember(member) && !ban:
		return newError(CodeNotFound, at+"/member", "member is not an active member (only ban: true may target a non-member)")
	}
	return nil
}

// checkMessage applies 11.
func (r *Room) checkMessage(ev *identity.Event, opt CheckOptions) error {
	if !r.IsActiveMember(ev.Actor) {
		return newError(CodePermissionDenied, "/event/actor", "only active members can send message.create")
	}
	if !r.MaySend(ev.Actor, TypeMessageCreate) {
		return newError(CodePermissionDenied, "/event/actor", "observers cannot send message.create")
	}
	const at = "/event/payload"
	if err := validateKernelAs(opt.dialect, "messageCreatePayload", ev.Payload, CodeInvalidEvent, at); err != nil {
		return err
	}
	p := ev.Payload.(map[string]any)
	if isBlankAs(opt.dialect, str(p, "content_type")) {
		return newError(CodeInvalidEvent, at+"/content_type", "content_type must not be blank")
	}
	// content may be a string or an object whatever content_type says: the
	// reference SDK does not tie an object to a JSON media type, so neither
	// does the hub (a stricter host would refuse what 0.12.6 clients send).
	if opt.Events != nil {
		for i, id := range stringList(p, "references") {
			if !opt.Events.HasEvent(id) {
				return newError(CodeInvalidEvent, fmt.Sprintf("%s/references/%d", at, i), "reference %s is not an event of this room", id)
			}
		}
	}
	return nil
}

// IsJSONMediaType reports whether a content_type is a JSON media type:
// application/json or any +json structured syntax suffix.
func IsJSONMediaType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// checkCustom applies 12.6 steps 2–4 (status was checked with the type).
// Under the historical dialect a payload of a registered pack's type also
// passes when the 0f87fee definition of that type accepts it.
func (r *Room) checkCustom(ev *identity.Event, def *TypeDef, rules *Rules, d dialect) error {
	if !r.IsActiveMember(ev.Actor) {
		return newError(CodePermissionDenied, "/event/actor", "only active members can send %s", ev.Type)
	}
	if !r.MaySend(ev.Actor, ev.Type) {
		return newError(CodePermissionDenied, "/event/actor", "the actor's role may not send %s", ev.Type)
	}
	err := rules.schemas().ValidatePayload(def.Schema, ev.Payload)
	if err == nil || d != historical || def.Registered == "" {
		return err
	}
	if old, ok := legacyRegisteredType(def.Registered, def.Type); ok {
		if rules.schemas().ValidatePayload(old.Schema, ev.Payload) == nil {
			return nil
		}
	}
	return err
}
