package main

import (
	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/text"
)

// The claim states of adp:moderation/1.0.
const (
	stateClaimed   = "claimed"
	stateHandoff   = "handoff"
	stateReleased  = "released"
	stateCompleted = "completed"
	stateCancelled = "cancelled"
)

// claim is the state of a claim after one claim.update.
type claim struct {
	rec       *plugin.Record
	id        string
	owner     string
	state     string
	scope     string // "task" when absent
	handoffTo string
	expiresAt int64
	expires   bool
	intent    string
	updates   int // claim.update records of this claim in the context
}

func readClaim(rec *plugin.Record) *claim {
	p := rec.Payload
	c := &claim{rec: rec, scope: "task"}
	c.id, _ = p.Get("claim_id").AsString()
	c.owner, _ = p.Get("owner").AsString()
	c.state, _ = p.Get("state").AsString()
	if s, ok := p.Get("scope").AsString(); ok {
		c.scope = s
	}
	c.handoffTo, _ = p.Get("handoff_to").AsString()
	c.expiresAt, c.expires = p.Get("expires_at").AsInt()
	c.intent, _ = p.Get("intent").AsString()
	return c
}

// active reports whether the claim is held (claimed or being handed off).
func (c *claim) active() bool { return c.state == stateClaimed || c.state == stateHandoff }

// lapsed reports whether an active claim's lease ended at or before now.
func (c *claim) lapsed(now int64) bool { return c.active() && c.expires && c.expiresAt <= now }

// claims returns the latest state of every claim in the room context, by
// claim_id and in the order of their latest updates.
func claims(room *plugin.Room) (latest map[string]*claim, order []*claim) {
	latest = map[string]*claim{}
	for i := range room.Records {
		rec := &room.Records[i]
		if rec.Type != typeClaim || rec.Redacted {
			continue
		}
		c := readClaim(rec)
		if prev := latest[c.id]; prev != nil {
			c.updates = prev.updates
		}
		c.updates++
		latest[c.id] = c
	}
	for i := range room.Records {
		rec := &room.Records[i]
		if rec.Type != typeClaim || rec.Redacted {
			continue
		}
		if id, _ := rec.Payload.Get("claim_id").AsString(); latest[id].rec == rec {
			order = append(order, latest[id])
		}
	}
	return latest, order
}

// redactedClaimAfter reports whether a redacted claim.update follows seq.
func redactedClaimAfter(room *plugin.Room, seq int64) bool {
	for i := range room.Records {
		if rec := &room.Records[i]; rec.Type == typeClaim && rec.Redacted && rec.Seq > seq {
			return true
		}
	}
	return false
}

// member returns the role of an active member, "" when it is not one.
func member(room *plugin.Room, id string) string {
	m, _ := room.Member(id)
	return m.Role
}

// validateTurn checks a turn.update proposal.
func validateTurn(req *plugin.ValidateRequest) []plugin.FieldError {
	var errs []plugin.FieldError
	p := req.Payload
	if id, ok := p.Get("turn_id").AsInt(); ok {
		var top *plugin.Record
		var best int64
		for i := range req.Room.Records {
			rec := &req.Room.Records[i]
			if rec.Type != typeTurn || rec.Redacted {
				continue
			}
			if n, ok := rec.Payload.Get("turn_id").AsInt(); ok && (top == nil || n > best) {
				top, best = rec, n
			}
		}
		if top != nil && id <= best {
			errs = append(errs, plugin.FieldError{Path: "/payload/turn_id",
				Message: "turn_id " + text.Int(id) + " is not greater than " + text.Int(best) + ", the turn of event " + top.EventID + "; turn ids strictly increase in a room"})
		}
	}
	if exp, ok := p.Get("expires_at").AsInt(); ok && exp <= req.NowMS {
		errs = append(errs, leaseError(exp, req.NowMS))
	}
	if speaker, ok := p.Get("speaker").AsString(); ok && len(req.Room.Members) > 0 && speaker != req.Room.Creator {
		switch member(req.Room, speaker) {
		case "":
			errs = append(errs, plugin.FieldError{Path: "/payload/speaker", Message: speaker + " is not an active member of the room"})
		case "observer":
			errs = append(errs, plugin.FieldError{Path: "/payload/speaker", Message: speaker + " is an observer and cannot write messages; change its role first"})
		}
	}
	return errs
}

func leaseError(exp, now int64) plugin.FieldError {
	return plugin.FieldError{Path: "/payload/expires_at",
		Message: "expires_at " + text.Int(exp) + " is not after the event's creation (now " + text.Int(now) + ")"}
}

// validateClaim checks a claim.update proposal: its own members, then the
// transition from the claim's latest state.
func validateClaim(req *plugin.ValidateRequest) []plugin.FieldError {
	var errs []plugin.FieldError
	add := func(path, msg string) { errs = append(errs, plugin.FieldError{Path: path, Message: msg}) }
	next := readClaim(&plugin.Record{Payload: req.Payload})
	room := req.Room
	members := len(room.Members) > 0
	id := text.Quote(next.id, 64)

	hasTo := req.Payload.Get("handoff_to").Exists()
	switch {
	case hasTo && next.state != stateHandoff:
		add("/payload/handoff_to", `handoff_to is only used with state "handoff"`)
	case next.state == stateHandoff && next.handoffTo == next.owner:
		add("/payload/handoff_to", "a claim cannot be handed to its own owner")
	case next.state == stateHandoff && members && member(room, next.handoffTo) == "":
		add("/payload/handoff_to", next.handoffTo+" is not an active member of the room")
	}
	if next.state == stateClaimed && members && member(room, next.owner) == "" {
		add("/payload/owner", next.owner+" is not an active member of the room")
	}
	if next.expires && next.expiresAt <= req.NowMS {
		errs = append(errs, leaseError(next.expiresAt, req.NowMS))
	}
	if req.Actor != "" && req.Actor != room.Creator && member(room, req.Actor) == "speaker" && next.owner != req.Actor {
		add("/payload/owner", "a speaker can only update its own claims: owner must be "+req.Actor)
	}

	latest, _ := claims(room)
	cur := latest[next.id]
	switch {
	case cur != nil && redactedClaimAfter(room, cur.rec.Seq):
		return errs // a redacted update may be this claim's latest
	case cur == nil && (room.RecordsTruncated || redactedClaimAfter(room, 0)):
		return errs // the claim may exist in records the context lacks
	case cur == nil:
		if next.state != stateClaimed {
			add("/payload/state", "claim "+id+` does not exist yet; its first update must be "claimed"`)
		}
		return errs
	}
	if cur.scope != next.scope {
		add("/payload/scope", "claim "+id+" is a "+cur.scope+" claim; its scope cannot change")
	}
	at := " (event " + cur.rec.EventID + ")"
	lapsed := cur.lapsed(req.NowMS)
	switch cur.state {
	case stateCompleted, stateCancelled:
		add("/payload/state", "claim "+id+" is "+cur.state+at+"; it cannot change (use a new claim_id)")
	case stateReleased:
		if next.state != stateClaimed {
			add("/payload/state", "claim "+id+" was released"+at+`; only "claimed" can follow`)
		}
	case stateClaimed:
		switch {
		case next.state == stateClaimed && next.owner != cur.owner && !lapsed:
			add("/payload/owner", "claim "+id+" is held by "+cur.owner+at+until(cur)+"; it must be released or handed off first")
		case next.state != stateClaimed && next.owner != cur.owner:
			add("/payload/owner", "claim "+id+" is held by "+cur.owner+at+", not by "+next.owner)
		}
	case stateHandoff:
		switch {
		case next.state == stateClaimed && next.owner != cur.handoffTo && next.owner != cur.owner && !lapsed:
			add("/payload/owner", "claim "+id+" is being handed to "+cur.handoffTo+at+"; only they can take it (or "+cur.owner+" take it back)")
		case next.state != stateClaimed && next.owner != cur.owner:
			add("/payload/owner", "claim "+id+" is held by "+cur.owner+at+", not by "+next.owner)
		}
	}
	return errs
}

// until describes a claim's lease for messages.
func until(c *claim) string {
	if !c.expires {
		return ""
	}
	return " until " + text.Int(c.expiresAt)
}

// Tools an inbox item suggests besides the plugin's own.
const toolSubmitEvent = "agent_protocols_room_submit_event"

// watchClaim wakes the agent for a claim another agent hands or assigns
// to it.
func watchClaim(rec *plugin.Record, req *plugin.WatchRequest) *plugin.InboxItem {
	self := req.Room.SelfID()
	if self == "" || rec.Actor == self {
		return nil
	}
	// The common case, a claim of someone else, costs two member reads.
	state, _ := rec.Payload.Get("state").AsString()
	who := "owner"
	switch state {
	case stateHandoff:
		who = "handoff_to"
	case stateClaimed:
	default:
		return nil
	}
	if id, _ := rec.Payload.Get(who).AsString(); id != self {
		return nil
	}
	c := readClaim(rec)
	if c.lapsed(req.NowMS) {
		return nil
	}
	what := text.Clean(c.id, 60)
	if c.intent != "" {
		what += ": " + text.Clean(c.intent, 100)
	}
	lease := ""
	if c.expires {
		lease = " (lease ends in " + text.Until(c.expiresAt-req.NowMS) + ")"
	}
	switch {
	case c.state == stateHandoff && c.handoffTo == self:
		return &plugin.InboxItem{
			Summary:          "Claim handed to you: " + what + lease + ", from " + c.owner,
			Priority:         plugin.PriorityHigh,
			RequiresResponse: true,
			Reason:           "claim handed to you",
			SuggestedTools:   []string{"active_claims", toolSubmitEvent},
		}
	case c.state == stateClaimed && c.owner == self:
		return &plugin.InboxItem{
			Summary:          "Claim assigned to you: " + what + lease,
			RequiresResponse: true,
			Reason:           "claim assigned to you",
			SuggestedTools:   []string{"active_claims", toolSubmitEvent},
		}
	}
	return nil
}
