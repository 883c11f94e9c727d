package main

import (
	"strings"

	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/text"
)

// option is one option of a poll.
type option struct {
	ID    string
	Label string
}

// poll is a poll.create record as the rules read it.
type poll struct {
	rec      *plugin.Record
	pollID   string
	question string
	options  []option
	min, max int64
	closesAt int64
	closes   bool
}

// readPoll reads a poll.create payload; min and max default to 1.
func readPoll(rec *plugin.Record) *poll {
	p := &poll{rec: rec, min: 1, max: 1}
	p.pollID, _ = rec.Payload.Get("poll_id").AsString()
	p.question, _ = rec.Payload.Get("question").AsString()
	rec.Payload.Get("options").Each(func(_ int, o plugin.Raw) bool {
		id, _ := o.Get("id").AsString()
		label, _ := o.Get("label").AsString()
		p.options = append(p.options, option{ID: id, Label: label})
		return true
	})
	if n, ok := rec.Payload.Get("min_choices").AsInt(); ok {
		p.min = n
	}
	if n, ok := rec.Payload.Get("max_choices").AsInt(); ok {
		p.max = n
	}
	p.closesAt, p.closes = rec.Payload.Get("closes_at").AsInt()
	return p
}

// open reports whether a vote accepted at t counts: votes accepted after
// closes_at are invalid.
func (p *poll) open(t int64) bool { return !p.closes || t <= p.closesAt }

func (p *poll) hasOption(id string) bool {
	for _, o := range p.options {
		if o.ID == id {
			return true
		}
	}
	return false
}

// choices says how many options a vote selects: "1", "2 to 3", "up to 2".
func (p *poll) choices() string {
	if p.min == p.max {
		return "choose " + text.Int(p.min)
	}
	return "choose " + text.Int(p.min) + " to " + text.Int(p.max)
}

func (p *poll) optionList() string {
	var ids []string
	for _, o := range p.options {
		ids = append(ids, text.Clean(o.ID, 40))
	}
	return strings.Join(ids, ", ")
}

// validatePoll checks a poll.create proposal.
func validatePoll(req *plugin.ValidateRequest) []plugin.FieldError {
	p := readPoll(&plugin.Record{Payload: req.Payload})
	var errs []plugin.FieldError
	first := map[string]int{}
	for i, o := range p.options {
		if j, dup := first[o.ID]; dup {
			errs = append(errs, plugin.FieldError{Path: "/payload/options/" + text.Int(int64(i)) + "/id",
				Message: "option id " + text.Quote(o.ID, 64) + " is already used by option " + text.Int(int64(j)) + "; option ids must be unique within the poll"})
			continue
		}
		first[o.ID] = i
	}
	_, hasMin := req.Payload.Get("min_choices").AsInt()
	_, hasMax := req.Payload.Get("max_choices").AsInt()
	n := int64(len(p.options))
	switch {
	case p.max < p.min && hasMax:
		errs = append(errs, plugin.FieldError{Path: "/payload/max_choices",
			Message: "max_choices " + text.Int(p.max) + " is less than min_choices " + text.Int(p.min)})
	case p.max < p.min:
		errs = append(errs, plugin.FieldError{Path: "/payload/min_choices",
			Message: "min_choices " + text.Int(p.min) + " is more than max_choices, which defaults to 1; set max_choices too"})
	}
	if hasMin && p.min > n {
		errs = append(errs, plugin.FieldError{Path: "/payload/min_choices",
			Message: "min_choices " + text.Int(p.min) + " is more than the " + text.Plural(int(n), "option")})
	}
	if hasMax && p.max > n {
		errs = append(errs, plugin.FieldError{Path: "/payload/max_choices",
			Message: "max_choices " + text.Int(p.max) + " is more than the " + text.Plural(int(n), "option")})
	}
	if p.closes && p.closesAt <= req.NowMS {
		errs = append(errs, plugin.FieldError{Path: "/payload/closes_at",
			Message: "closes_at " + text.Int(p.closesAt) + " is not in the future (now " + text.Int(req.NowMS) + ")"})
	}
	if e, ok := clash(req, typePoll, "poll_id"); ok {
		errs = append(errs, e)
	}
	return errs
}

// uniqueID returns a validator that keeps member unique among the records
// of typ in the room, as the pack's instructions require.
func uniqueID(typ, member string) plugin.ValidateFunc {
	return func(req *plugin.ValidateRequest) []plugin.FieldError {
		if e, ok := clash(req, typ, member); ok {
			return []plugin.FieldError{e}
		}
		return nil
	}
}

// clash finds a record of typ in the room whose member equals the
// proposal's.
func clash(req *plugin.ValidateRequest, typ, member string) (plugin.FieldError, bool) {
	id, ok := req.Payload.Get(member).AsString()
	if !ok {
		return plugin.FieldError{}, false
	}
	for i := range req.Room.Records {
		rec := &req.Room.Records[i]
		if rec.Type != typ || rec.Redacted {
			continue
		}
		if other, _ := rec.Payload.Get(member).AsString(); other == id {
			return plugin.FieldError{Path: "/payload/" + member,
				Message: member + " " + text.Quote(id, 64) + " is already used by " + typ + " event " + rec.EventID + " (seq " + text.Int(rec.Seq) + "); it must be unique in the room"}, true
		}
	}
	return plugin.FieldError{}, false
}

// validateVote checks a poll.vote proposal against its poll.
func validateVote(req *plugin.ValidateRequest) []plugin.FieldError {
	pollID, _ := req.Payload.Get("poll_event_id").AsString()
	rec, found := req.Room.Record(pollID)
	at := func(msg string) []plugin.FieldError {
		return []plugin.FieldError{{Path: "/payload/poll_event_id", Message: msg}}
	}
	switch {
	case !found && req.Room.RecordsTruncated:
		return at("poll " + pollID + " is not among the records of this room that apconnect holds, so the vote cannot be checked")
	case !found:
		return at("this room has no event " + pollID)
	case rec.Type != typePoll:
		return at("event " + pollID + " is a " + rec.Type + ", not a poll.create")
	case rec.Redacted:
		return at("poll " + pollID + " was redacted; its options are unknown")
	}
	p := readPoll(rec)
	if !p.open(req.NowMS) {
		return at("poll " + text.Quote(p.pollID, 64) + " closed at " + text.Int(p.closesAt) + " (now " + text.Int(req.NowMS) + "); votes after closes_at are invalid")
	}
	var errs []plugin.FieldError
	n := int64(0)
	req.Payload.Get("option_ids").Each(func(i int, v plugin.Raw) bool {
		n++
		if id, _ := v.AsString(); !p.hasOption(id) {
			errs = append(errs, plugin.FieldError{Path: "/payload/option_ids/" + text.Int(int64(i)),
				Message: text.Quote(id, 64) + " is not an option of poll " + text.Quote(p.pollID, 64) + " (options: " + p.optionList() + ")"})
		}
		return true
	})
	if n < p.min || n > p.max {
		errs = append(errs, plugin.FieldError{Path: "/payload/option_ids",
			Message: text.Plural(int(n), "option") + " chosen; poll " + text.Quote(p.pollID, 64) + " says " + p.choices()})
	}
	return errs
}
