package adp

import (
	"apconnect/host/identity"
)

// CheckCreate applies the room.create rules (8.1, 8.3, 12.4) to a room.create
// envelope: ADP protocol and type, payload size, the kernel schema, host
// binding against rules.HostOrigin (host_mismatch), a non-blank topic,
// start_time before end_time within the duration limits, the policy rules,
// and the type declarations (invalid_event, invalid_type_schema,
// type_conflict, pack_unavailable, rate_limited beyond MaxTypes). The
// top-level shape (no room_id, base or mentions) is the identity package's.
// The caller verifies hash, signature, window and nonce.
func CheckCreate(rules *Rules, env *identity.Envelope) error {
	return checkCreate(rules, env, current)
}

// checkCreate is CheckCreate under dialect d.
func checkCreate(rules *Rules, env *identity.Envelope, d dialect) error {
	rules = rules.orDefault()
	ev := &env.Event
	if ev.Protocol != Protocol {
		return newError(CodeInvalidEvent, "/event/protocol", "protocol must be %q", Protocol)
	}
	if ev.Type != TypeRoomCreate {
		return newError(CodeInvalidEvent, "/event/type", "CheckCreate takes a room.create event")
	}
	if err := CheckEventFields(ev, "/event"); err != nil {
		return err
	}
	if err := checkPayloadSize(rules.Limits, ev.Type, nil, ev.Payload); err != nil {
		return err
	}
	_, err := rules.parseCreate(d, ev.Payload, rules.Limits, rules.HostOrigin)
	return err
}

// NewRoom materializes a room from its room.create record (seq 1): the
// contract, the creator as an active moderator (8), the initial type
// registry with packs resolved through rules, and head = last = the record.
// It validates the record (shape and hash) and the payload's protocol rules,
// but not host policy (host origin, duration limits) — CheckCreate does that
// before a host accepts, and a verifier runs it at the record's accepted_at.
// Like Apply, it reads the payload under the historical dialect.
func NewRoom(rules *Rules, rec *Record) (*Room, error) {
	rules = rules.orDefault()
	if err := CheckLink(rec.RoomID, Link{}, rec); err != nil {
		return nil, err
	}
	if rec.Envelope == nil {
		return nil, newError(CodeInvalidRecord, "/envelope", "the room.create record cannot be redacted")
	}
	ev := &rec.Envelope.Event
	spec, err := rules.parseCreate(historical, ev.Payload, Limits{}, "")
	if err != nil {
		return nil, err
	}
	return roomFromSpec(rec, spec), nil
}

// roomFromSpec builds the genesis state from a checked room.create payload.
func roomFromSpec(rec *Record, spec *createSpec) *Room {
	ev := &rec.Envelope.Event
	r := &Room{
		ID:         rec.RoomID,
		Creator:    ev.Actor,
		CreatedAt:  ev.CreatedAt,
		Host:       spec.host,
		Topic:      spec.topic,
		Agenda:     spec.agenda,
		Guidance:   spec.guidance,
		Visibility: spec.visibility,
		StartTime:  spec.start,
		EndTime:    spec.end,
		Tags:       spec.tags,
		Language:   spec.language,
		Policy:     spec.policy,
		Extra:      spec.extra,
		Types:      spec.types,
		Members: map[string]*Member{ev.Actor: {
			AgentID: ev.Actor, Role: RoleModerator, Active: true, JoinedSeq: 1, LastEventSeq: 1,
		}},
		Head: rec.Link(),
		Last: RecordHead{Seq: rec.Seq, Hash: rec.Hash, AcceptedAt: rec.AcceptedAt},
	}
	for _, imp := range spec.imports {
		c := *imp
		c.Seq = 1
		r.Imports = append(r.Imports, c)
	}
	r.normalize()
	return r
}
