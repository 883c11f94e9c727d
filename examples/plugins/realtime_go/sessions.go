package main

import (
	"strings"

	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/text"
)

// transfer is a file transfer an offer announces.
type transfer struct {
	ID       string `json:"transfer_id"`
	FileName string `json:"file_name,omitempty"`
	Size     *int64 `json:"size_bytes,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
}

// offer is a session.offer record as the rules read it.
type offer struct {
	rec       *plugin.Record
	sessionID string
	media     []string
	to        []string
	topology  string
	transfers []transfer
	expiresAt int64
	expires   bool
}

func readOffer(rec *plugin.Record) *offer {
	p := rec.Payload
	o := &offer{rec: rec}
	o.sessionID, _ = p.Get("session_id").AsString()
	o.media, _ = p.Get("media").AsStrings()
	o.to, _ = p.Get("to").AsStrings()
	o.topology, _ = p.Get("topology").AsString()
	o.expiresAt, o.expires = p.Get("expires_at").AsInt()
	p.Get("transfers").Each(func(_ int, t plugin.Raw) bool {
		var tr transfer
		tr.ID, _ = t.Get("transfer_id").AsString()
		tr.FileName, _ = t.Get("file_name").AsString()
		tr.MIMEType, _ = t.Get("mime_type").AsString()
		if n, ok := t.Get("size_bytes").AsInt(); ok {
			tr.Size = &n
		}
		o.transfers = append(o.transfers, tr)
		return true
	})
	return o
}

func (o *offer) expired(now int64) bool { return o.expires && o.expiresAt <= now }

func (o *offer) addressedTo(id string) bool { return contains(o.to, id) }

// session is one session of the room: its offer, answers and closes.
type session struct {
	offer   *offer
	answers []*plugin.Record
	closes  []*plugin.Record
}

// closedBy returns the close the agent sent, or nil.
func (s *session) closedBy(id string) *plugin.Record {
	for _, c := range s.closes {
		if c.Actor == id {
			return c
		}
	}
	return nil
}

func (s *session) answeredBy(id string) bool {
	for _, a := range s.answers {
		if a.Actor == id {
			return true
		}
	}
	return false
}

// state is "closed" once the offerer closed it, "declined" when every
// target closed it unanswered, "answered" with an answer, "expired" when
// the offer expired unanswered, else "offered".
func (s *session) state(now int64) string {
	switch {
	case s.closedBy(s.offer.rec.Actor) != nil:
		return "closed"
	case len(s.answers) == 0 && len(s.offer.to) > 0 && s.allTargetsClosed():
		return "declined"
	case len(s.answers) > 0:
		return "answered"
	case s.offer.expired(now):
		return "expired"
	}
	return "offered"
}

func (s *session) allTargetsClosed() bool {
	for _, t := range s.offer.to {
		if s.closedBy(t) == nil {
			return false
		}
	}
	return true
}

// sessions reads the sessions of the room context in offer order. The
// first offer of a session_id makes the session; answers count when they
// name its offer and session_id, closes when they follow its offer.
func sessions(room *plugin.Room) (byID map[string]*session, order []*session) {
	byID = map[string]*session{}
	byOffer := map[string]*session{}
	for i := range room.Records {
		rec := &room.Records[i]
		if rec.Redacted {
			continue
		}
		id, _ := rec.Payload.Get("session_id").AsString()
		switch rec.Type {
		case typeOffer:
			if byID[id] == nil {
				s := &session{offer: readOffer(rec)}
				byID[id] = s
				byOffer[rec.EventID] = s
				order = append(order, s)
			}
		case typeAnswer:
			oid, _ := rec.Payload.Get("offer_event_id").AsString()
			if s := byOffer[oid]; s != nil && s.offer.sessionID == id {
				s.answers = append(s.answers, rec)
			}
		case typeClose:
			if s := byID[id]; s != nil {
				s.closes = append(s.closes, rec)
			}
		}
	}
	return byID, order
}

func contains(list []string, s string) bool {
	for _, t := range list {
		if t == s {
			return true
		}
	}
	return false
}

// checkSDP refuses a description that is not an SDP session description
// or that carries no ICE candidates.
func checkSDP(p plugin.Raw, errs *[]plugin.FieldError) {
	sdp, ok := p.Get("description", "sdp").AsString()
	switch {
	case !ok:
	case !strings.HasPrefix(sdp, "v=0"):
		*errs = append(*errs, plugin.FieldError{Path: "/payload/description/sdp", Message: `not an SDP session description: it must start with "v=0"`})
	case !strings.Contains(sdp, "a=candidate:"):
		*errs = append(*errs, plugin.FieldError{Path: "/payload/description/sdp",
			Message: "the SDP carries no ICE candidates (a=candidate lines): gather them before sending, trickled candidates are not allowed"})
	}
}

// validateOffer checks a session.offer proposal.
func validateOffer(req *plugin.ValidateRequest) []plugin.FieldError {
	var errs []plugin.FieldError
	add := func(path, msg string) { errs = append(errs, plugin.FieldError{Path: path, Message: msg}) }
	o := readOffer(&plugin.Record{Payload: req.Payload})
	byID, _ := sessions(req.Room)
	if s := byID[o.sessionID]; s != nil {
		add("/payload/session_id", "session_id "+text.Quote(o.sessionID, 64)+" is already used by session.offer event "+s.offer.rec.EventID+"; it must be unique in the room")
	}
	for i, t := range o.to {
		path := "/payload/to/" + text.Int(int64(i))
		switch {
		case t == req.Actor:
			add(path, "an offer cannot be addressed to its sender")
		case len(req.Room.Members) > 0 && !isMember(req.Room, t):
			add(path, t+" is not an active member of the room")
		}
	}
	if o.expires && o.expiresAt <= req.NowMS {
		add("/payload/expires_at", "expires_at "+text.Int(o.expiresAt)+" is not in the future (now "+text.Int(req.NowMS)+")")
	}
	first := map[string]int{}
	for i, t := range o.transfers {
		if j, dup := first[t.ID]; dup {
			add("/payload/transfers/"+text.Int(int64(i))+"/transfer_id", "transfer_id "+text.Quote(t.ID, 64)+" is already used by transfer "+text.Int(int64(j)))
			continue
		}
		first[t.ID] = i
	}
	if len(o.transfers) > 0 && !contains(o.media, "file") {
		add("/payload/media", `the offer announces transfers, so its media must include "file"`)
	}
	checkSDP(req.Payload, &errs)
	return errs
}

// validateAnswer checks a session.answer proposal against its offer.
func validateAnswer(req *plugin.ValidateRequest) []plugin.FieldError {
	var errs []plugin.FieldError
	add := func(path, msg string) { errs = append(errs, plugin.FieldError{Path: path, Message: msg}) }
	oid, _ := req.Payload.Get("offer_event_id").AsString()
	rec, found := req.Room.Record(oid)
	switch {
	case !found && req.Room.RecordsTruncated:
		add("/payload/offer_event_id", "offer "+oid+" is not among the records of this room that apconnect holds, so the answer cannot be checked")
	case !found:
		add("/payload/offer_event_id", "this room has no event "+oid)
	case rec.Type != typeOffer:
		add("/payload/offer_event_id", "event "+oid+" is a "+rec.Type+", not a session.offer")
	case rec.Redacted:
		add("/payload/offer_event_id", "offer "+oid+" was redacted")
	}
	if len(errs) > 0 {
		return errs
	}
	o := readOffer(rec)
	if id, _ := req.Payload.Get("session_id").AsString(); id != o.sessionID {
		add("/payload/session_id", "session_id "+text.Quote(id, 64)+" does not match the offer's "+text.Quote(o.sessionID, 64))
	}
	byID, _ := sessions(req.Room)
	s := byID[o.sessionID]
	switch {
	case rec.Actor == req.Actor:
		add("/payload/offer_event_id", "you cannot answer your own offer")
	case len(o.to) > 0 && !o.addressedTo(req.Actor):
		add("/payload/offer_event_id", "the offer is addressed to "+strings.Join(o.to, ", ")+", not to you")
	case s != nil && s.offer.rec != rec:
		add("/payload/offer_event_id", "session "+text.Quote(o.sessionID, 64)+" belongs to offer "+s.offer.rec.EventID)
	case s != nil && s.closedBy(rec.Actor) != nil:
		add("/payload/offer_event_id", "session "+text.Quote(o.sessionID, 64)+" was closed by its sender (event "+s.closedBy(rec.Actor).EventID+")")
	case o.expired(req.NowMS):
		add("/payload/offer_event_id", "the offer expired at "+text.Int(o.expiresAt)+" (now "+text.Int(req.NowMS)+")")
	}
	req.Payload.Get("accepted_media").Each(func(i int, v plugin.Raw) bool {
		if m, _ := v.AsString(); !contains(o.media, m) {
			add("/payload/accepted_media/"+text.Int(int64(i)), text.Quote(m, 20)+" is not among the offered media ("+strings.Join(o.media, ", ")+")")
		}
		return true
	})
	req.Payload.Get("transfers").Each(func(i int, v plugin.Raw) bool {
		id, _ := v.Get("transfer_id").AsString()
		for _, t := range o.transfers {
			if t.ID == id {
				return true
			}
		}
		add("/payload/transfers/"+text.Int(int64(i))+"/transfer_id", "the offer announces no transfer "+text.Quote(id, 64))
		return true
	})
	checkSDP(req.Payload, &errs)
	return errs
}

// validateClose checks a session.close proposal.
func validateClose(req *plugin.ValidateRequest) []plugin.FieldError {
	id, _ := req.Payload.Get("session_id").AsString()
	byID, _ := sessions(req.Room)
	s := byID[id]
	at := func(msg string) []plugin.FieldError {
		return []plugin.FieldError{{Path: "/payload/session_id", Message: msg}}
	}
	switch {
	case s == nil && req.Room.RecordsTruncated:
		return nil // the offer may be older than the records the context holds
	case s == nil:
		return at("this room has no session " + text.Quote(id, 64))
	case s.closedBy(req.Actor) != nil:
		return at("you already closed session " + text.Quote(id, 64) + " (event " + s.closedBy(req.Actor).EventID + ")")
	case req.Actor != s.offer.rec.Actor && len(s.offer.to) > 0 && !s.offer.addressedTo(req.Actor) && !s.answeredBy(req.Actor):
		return at("you take no part in session " + text.Quote(id, 64) + ": it was offered by " + s.offer.rec.Actor + " to " + strings.Join(s.offer.to, ", "))
	}
	return nil
}

func isMember(room *plugin.Room, id string) bool {
	_, ok := room.Member(id)
	return ok
}

// Tools an inbox item suggests besides the plugin's own.
const toolSubmitEvent = "agent_protocols_room_submit_event"

// watchOffer wakes the agent for a session offered to it, or to the whole
// room by another agent when the agent may answer (not an observer).
func watchOffer(rec *plugin.Record, req *plugin.WatchRequest) *plugin.InboxItem {
	self := req.Room.SelfID()
	if self == "" || rec.Actor == self {
		return nil
	}
	// The common case, an offer to others, costs one member read.
	if to, _ := rec.Payload.Get("to").AsStrings(); len(to) > 0 && !contains(to, self) {
		return nil
	}
	o := readOffer(rec)
	if o.expired(req.NowMS) {
		return nil
	}
	what := strings.Join(o.media, "+") + " session " + text.Quote(o.sessionID, 60)
	if len(o.transfers) > 0 {
		what += " with " + text.Plural(len(o.transfers), "file transfer")
	}
	if o.expires {
		what += " (expires in " + text.Until(o.expiresAt-req.NowMS) + ")"
	}
	item := &plugin.InboxItem{SuggestedTools: []string{"sessions", toolSubmitEvent}}
	switch {
	case o.addressedTo(self):
		item.Summary = "Session offered to you: " + what + " from " + rec.Actor
		item.Priority, item.RequiresResponse, item.Reason = plugin.PriorityHigh, true, "session offered to you"
	case len(o.to) == 0 && role(req.Room) != "observer":
		item.Summary = "Session offered to the room: " + what + " from " + rec.Actor
		item.Reason = "session offered to the room"
	default:
		return nil
	}
	return item
}

// role returns the active agent's role in the room, "" when unknown.
func role(room *plugin.Room) string {
	if room.Self != nil && room.Self.Role != "" {
		return room.Self.Role
	}
	m, _ := room.Member(room.SelfID())
	return m.Role
}
