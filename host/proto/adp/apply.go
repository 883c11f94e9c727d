package adp

import (
	"context"

	"apconnect/host/identity"
)

// Apply applies an accepted record to the room: it checks that the record is
// valid and continues the chain (CheckLink against Last), then makes every
// state change the record causes — contract, lifecycle, members, bans,
// reviewed requests, type registry — and moves Last, and the head when the
// record's class advances it (genesis, contract, control). Redacted records
// consume their seq and keep their type, so their class decides the head as
// for any record (a redacted message.create does not move it, a redacted
// control record does); their content changes nothing else, which is why
// only message.create and custom types may be redacted.
//
// Apply trusts the record's acceptance: it does not run Check, and it reads
// payloads under the historical dialect (a superset of the current rules),
// so a record any host accepted applies. A host runs
// Check before assigning the record; a reader runs VerifyRecord first. On
// error the room is unchanged. Pack imports of a type.define are resolved
// through rules (cached since the Check that preceded it).
func (r *Room) Apply(rules *Rules, rec *Record) error {
	if err := CheckLink(r.ID, r.Last.Link(), rec); err != nil {
		return err
	}
	return r.apply(rules.orDefault(), rec)
}

// apply applies a record whose link was checked.
func (r *Room) apply(rules *Rules, rec *Record) error {
	class, err := ClassOf(rec.Type(), r.Types)
	if err != nil {
		return err
	}
	if rec.Envelope != nil {
		if err := r.applyEvent(rules, rec); err != nil {
			return err
		}
	}
	r.advance(rec, class)
	return nil
}

// advance moves Last, and the head for classes that advance it.
func (r *Room) advance(rec *Record, class Class) {
	if class.AdvancesHead() {
		r.Head = rec.Link()
	}
	r.Last = RecordHead{Seq: rec.Seq, PreHash: rec.PreHash, Hash: rec.Hash, AcceptedAt: rec.AcceptedAt}
}

// applyEvent makes the state changes of a non-redacted record. Everything
// that can fail is computed before anything is changed.
func (r *Room) applyEvent(rules *Rules, rec *Record) error {
	ev := &rec.Envelope.Event
	payload, _ := ev.Payload.(map[string]any)
	seq := rec.Seq
	switch ev.Type {
	case TypeRoomUpdate:
		u, err := parseUpdate(historical, ev.Payload, r.Visibility)
		if err != nil {
			return err
		}
		u.applyTo(r)
	case TypeRoomClose, TypeRoomCancel:
		st := RoomEnded
		if ev.Type == TypeRoomCancel {
			st = RoomCancelled
		}
		r.Closed = &Closure{Status: st, Seq: seq, At: rec.AcceptedAt, By: ev.Actor}
	case TypeTypeDefine:
		d, err := parseDeclaration(historical, ev.Payload, "/event/payload")
		if err != nil {
			return err
		}
		mat, err := rules.materialize(context.Background(), historical, d, "/event/payload", Limits{})
		if err != nil {
			return err
		}
		reg, err := declare(r.Types, []*materialized{mat}, false, 0)
		if err != nil {
			return err
		}
		r.Types = reg
		if mat.imp != nil {
			imp := *mat.imp
			imp.Seq = seq
			r.Imports = append(r.Imports, imp)
		}
	case TypeRoomJoin:
		if err := validateKernelAs(historical, "roomJoinPayload", ev.Payload, CodeInvalidEvent, "/event/payload"); err != nil {
			return err
		}
		r.join(ev.Actor, Role(str(payload, "role")), str(payload, "perspective"), seq)
	case TypeJoinReview:
		if err := validateKernelAs(historical, "roomJoinReviewPayload", ev.Payload, CodeInvalidEvent, "/event/payload"); err != nil {
			return err
		}
		req, err := identity.EnvelopeFromValue(payload["request"], "/event/payload/request")
		if err != nil {
			return AsError(err)
		}
		if r.ReviewedRequests == nil {
			r.ReviewedRequests = map[string]int64{}
		}
		r.ReviewedRequests[req.Hash] = seq
		if str(payload, "decision") == "approve" {
			reqPayload, _ := req.Event.Payload.(map[string]any)
			r.join(req.Event.Actor, Role(str(payload, "role")), str(reqPayload, "perspective"), seq)
			delete(r.Bans, req.Event.Actor)
		}
	case TypeRoomLeave:
		r.depart(ev.Actor, DepartureLeft, seq)
	case TypeRoleUpdate:
		if err := validateKernelAs(historical, "roomMemberRoleUpdatePayload", ev.Payload, CodeInvalidEvent, "/event/payload"); err != nil {
			return err
		}
		if m, ok := r.Members[str(payload, "member")]; ok && m.Active {
			m.Role = Role(str(payload, "role"))
		}
	case TypeMemberRemove:
		if err := validateKernelAs(historical, "roomMemberRemovePayload", ev.Payload, CodeInvalidEvent, "/event/payload"); err != nil {
			return err
		}
		member := str(payload, "member")
		ban, _ := payload["ban"].(bool)
		how := DepartureRemoved
		if ban {
			how = DepartureBanned
			if r.Bans == nil {
				r.Bans = map[string]int64{}
			}
			r.Bans[member] = seq
		}
		r.depart(member, how, seq)
	}
	if m, ok := r.Members[ev.Actor]; ok {
		m.LastEventSeq = seq
	}
	r.normalize()
	return nil
}

// join makes agentID an active member.
func (r *Room) join(agentID string, role Role, perspective string, seq int64) {
	m, ok := r.Members[agentID]
	if !ok {
		m = &Member{AgentID: agentID}
		r.Members[agentID] = m
	}
	m.Role, m.Perspective, m.Active, m.JoinedSeq = role, perspective, true, seq
	m.LeftSeq, m.Departure = 0, ""
}

// depart ends an active membership. The creator never departs (9.1).
func (r *Room) depart(agentID string, how Departure, seq int64) {
	m, ok := r.Members[agentID]
	if !ok || !m.Active || r.IsCreator(agentID) {
		return
	}
	m.Active, m.LeftSeq, m.Departure = false, seq, how
}
