package room

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// Tool names the inbox suggests.
const (
	ToolSendMessage = "agent_protocols_room_send_message"
	ToolSubmitEvent = "agent_protocols_room_submit_event"
	ToolRoomState   = "agent_protocols_room_state"
	ToolRoomJoin    = "agent_protocols_room_join"
	ToolTimeline    = "agent_protocols_room_timeline"
	ToolReview      = "agent_protocols_join_request_review"
	ToolMembers     = "agent_protocols_room_members_list"
)

// Registered-pack types the inbox rules know.
const (
	TypeTurnUpdate  = "turn.update"
	TypeSteerCreate = "steer.create"
)

// InboxID returns the stable id of an inbox item: a digest of its
// de-duplication key (host, room_id, kind, seq, event_id), so the same item
// always gets the same id — in any process — and an acknowledged item is
// never created again.
func InboxID(host, roomID, kind string, seq int64, eventID string) string {
	h := sha256.New()
	for _, part := range []string{host, roomID, kind, strconv.FormatInt(seq, 10), eventID} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	return "inbox_" + base64.RawURLEncoding.EncodeToString(sum[:18])
}

// NewInboxItem builds an inbox item about a record (seq > 0) or a local
// event (seq 0, eventID naming what it is about, such as a join request).
func NewInboxItem(host, roomID, kind, priority string, seq int64, eventID, actor string, createdAt int64, reason, summary string, requiresResponse bool, tools ...string) InboxItem {
	it := InboxItem{
		ID:               InboxID(host, roomID, kind, seq, eventID),
		Kind:             kind,
		Priority:         priority,
		RoomID:           roomID,
		Host:             host,
		CreatedAt:        createdAt,
		RequiresResponse: requiresResponse,
		Reason:           reason,
		SuggestedTools:   append([]string{}, tools...),
		Message:          map[string]any{"summary": text.Truncate(summary, MaxSummaryRunes)},
	}
	if seq > 0 {
		s := seq
		it.Seq = &s
	}
	if eventID != "" {
		e := eventID
		it.EventID = &e
	}
	if actor != "" {
		a := actor
		it.Actor = &a
	}
	return it
}

// inboxFor returns the inbox items a verified record causes for self.
// wasMember tells whether the agent was an active member before the record.
func (p *Processor) inboxFor(wasMember bool, rec *adp.Record, item *TimelineItem) []InboxItem {
	if rec.IsRedacted() || p.Self == "" {
		return nil
	}
	ev := &rec.Envelope.Event
	actor := ev.Actor
	if actor == p.Self {
		return nil
	}
	payload, _ := ev.Payload.(map[string]any)
	mk := func(kind, prio, reason, summary string, respond bool, tools ...string) InboxItem {
		it := NewInboxItem(p.Host, rec.RoomID, kind, prio, rec.Seq, rec.EnvelopeHash(), actor, rec.AcceptedAt, reason, summary, respond, tools...)
		it.Message["type"] = ev.Type
		return it
	}
	mentions := adp.MentionsOf(ev)
	mentioned := false
	for _, m := range mentions {
		if m == p.Self {
			mentioned = true
		}
	}
	var out []InboxItem
	switch ev.Type {
	case TypeTurnUpdate:
		if str(payload, "speaker") == p.Self {
			it := mk(KindTurnAssigned, PriorityHigh, "turn_assigned", item.Summary, true, ToolSendMessage, ToolSubmitEvent)
			if exp, ok := intOf(payload, "expires_at"); ok {
				it.Deadline = &exp
			}
			return append(out, it)
		}
	case TypeSteerCreate:
		if steersSelf(p.Self, wasMember, payload, mentions, mentioned) {
			return append(out, mk(KindSteer, PriorityHigh, "steer", item.Summary, true, ToolSendMessage))
		}
	case adp.TypeRoleUpdate:
		if str(payload, "member") == p.Self {
			out = append(out, mk(KindRoleChanged, PriorityNormal, "role_changed", "Your role is now "+str(payload, "role"), false, ToolRoomState))
		}
	case adp.TypeMemberRemove:
		if str(payload, "member") == p.Self {
			reason, summary := "member_removed", "You were removed from the room"
			if b, _ := payload["ban"].(bool); b {
				reason, summary = "member_banned", "You were removed and banned from the room"
			}
			out = append(out, mk(KindMemberRemoved, PriorityHigh, reason, summary, false))
		}
	case adp.TypeJoinReview:
		if str(payload, "decision") == "approve" {
			if req, err := identity.EnvelopeFromValue(payload["request"], ""); err == nil && req.Event.Actor == p.Self {
				out = append(out, mk(KindJoinApproved, PriorityHigh, "join_approved", "Your join request was approved as "+str(payload, "role"), false, ToolRoomJoin))
			}
		}
	case adp.TypeRoomUpdate, adp.TypeRoomClose, adp.TypeRoomCancel, adp.TypeTypeDefine:
		if wasMember {
			reason := map[string]string{adp.TypeRoomUpdate: "room_updated", adp.TypeRoomClose: "room_closed",
				adp.TypeRoomCancel: "room_cancelled", adp.TypeTypeDefine: "type_registry_changed"}[ev.Type]
			out = append(out, mk(KindStateChanged, PriorityNormal, reason, item.Summary, false, ToolRoomState))
		}
	}
	if mentioned {
		return append(out, mk(KindMention, PriorityHigh, "mentioned", item.Summary, true, ToolSendMessage))
	}
	if wasMember && item.Kind == string(adp.KindMessage) {
		out = append(out, mk(KindMessageNew, PriorityNormal, "new_message", item.Summary, false))
	}
	return out
}

// steersSelf reports whether a steer.create addresses self: its mentions
// name self, or it has no mentions and self was a member (it addresses
// every member). A steer written under the 0f87fee drafts' pack may carry a
// target instead, which then decides.
func steersSelf(self string, wasMember bool, payload map[string]any, mentions []string, mentioned bool) bool {
	if target, ok := payload["target"].(string); ok && len(mentions) == 0 {
		return target == self
	}
	return mentioned || (len(mentions) == 0 && wasMember)
}

// turnFrom returns the active turn a turn.update record sets, when the
// payload names a speaker and an integer turn_id (a verified record's type
// is always in the room's registry).
func turnFrom(rec *adp.Record) *ActiveTurn {
	if rec.IsRedacted() || rec.Type() != TypeTurnUpdate {
		return nil
	}
	p, _ := rec.Envelope.Event.Payload.(map[string]any)
	speaker := str(p, "speaker")
	id, ok := intOf(p, "turn_id")
	if speaker == "" || !ok {
		return nil
	}
	t := &ActiveTurn{TurnID: id, Speaker: speaker, AssignedSeq: rec.Seq, Intent: str(p, "intent"), Topic: str(p, "topic"),
		Instruction: str(p, "instruction"), SourceEventID: rec.EnvelopeHash()}
	if exp, ok := intOf(p, "expires_at"); ok {
		t.ExpiresAt = &exp
	}
	return t
}
