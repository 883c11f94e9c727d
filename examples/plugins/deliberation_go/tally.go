package main

import (
	"slices"
	"strings"

	"apconnect/sdk-guest/plugin"
	// The Structured result is a struct, encoded with reflection.
	_ "apconnect/sdk-guest/plugin/structjson"
	"apconnect/sdk-guest/text"
)

var tallyTool = plugin.Tool{
	Name:  "tally",
	Title: "Poll tally",
	Description: "Tallies the polls (adp:deliberation/1.0) of a room, newest first. Each agent's latest valid vote " +
		"replaces its earlier votes; a vote accepted after closes_at, naming an unknown option or choosing too few or " +
		"too many options is invalid and counts for nothing. Shows your own current vote.",
	InputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id"],
	"properties": {
	` + plugin.RoomProperties + `,
	"poll_event_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{43}$", "description": "Only this poll (the event ID of its poll.create)."},
	"open_only": {"type": "boolean", "default": false, "description": "Only polls still open."},
	"include_votes": {"type": "boolean", "default": false, "description": "List each agent's counted vote."},
	"limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "At most this many polls."}
	},
	"additionalProperties": false
}`),
	OutputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id", "complete", "polls", "more_polls"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every record of the room: older polls and votes may be missing."},
		"polls": {"type": "array", "items": {
			"type": "object",
			"required": ["poll_event_id", "poll_id", "question", "seq", "actor", "open", "min_choices", "max_choices", "options", "voters", "replaced", "invalid", "leading"],
			"properties": {
				"poll_event_id": {"type": "string"},
				"poll_id": {"type": "string"},
				"question": {"type": "string"},
				"seq": {"type": "integer"},
				"actor": {"type": "string"},
				"open": {"type": "boolean"},
				"closes_at": {"type": "integer"},
				"min_choices": {"type": "integer"},
				"max_choices": {"type": "integer"},
				"options": {"type": "array", "items": {
					"type": "object",
					"required": ["id", "label", "votes"],
					"properties": {"id": {"type": "string"}, "label": {"type": "string"}, "votes": {"type": "integer"}},
					"additionalProperties": false
				}},
				"voters": {"type": "integer", "description": "Agents whose latest valid vote counts."},
				"replaced": {"type": "integer", "description": "Valid votes replaced by a later vote of the same agent."},
				"invalid": {"type": "array", "items": {
					"type": "object",
					"required": ["event_id", "actor", "reason"],
					"properties": {"event_id": {"type": "string"}, "actor": {"type": "string"}, "reason": {"type": "string"}},
					"additionalProperties": false
				}},
				"leading": {"type": "array", "items": {"type": "string"}, "description": "The options with the most votes; empty without votes."},
				"my_vote": {"type": "array", "items": {"type": "string"}},
				"votes": {"type": "array", "items": {
					"type": "object",
					"required": ["actor", "option_ids", "event_id", "seq"],
					"properties": {"actor": {"type": "string"}, "option_ids": {"type": "array", "items": {"type": "string"}}, "event_id": {"type": "string"}, "seq": {"type": "integer"}},
					"additionalProperties": false
				}}
			},
			"additionalProperties": false
		}},
		"more_polls": {"type": "integer", "minimum": 0}
	},
	"additionalProperties": false
}`),
	Handler: tally,
}

type optionCount struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Votes int    `json:"votes"`
}

type invalidVote struct {
	EventID string `json:"event_id"`
	Actor   string `json:"actor"`
	Reason  string `json:"reason"`
}

type ballot struct {
	Actor     string   `json:"actor"`
	OptionIDs []string `json:"option_ids"`
	EventID   string   `json:"event_id"`
	Seq       int64    `json:"seq"`
}

type pollTally struct {
	PollEventID string        `json:"poll_event_id"`
	PollID      string        `json:"poll_id"`
	Question    string        `json:"question"`
	Seq         int64         `json:"seq"`
	Actor       string        `json:"actor"`
	Open        bool          `json:"open"`
	ClosesAt    *int64        `json:"closes_at,omitempty"`
	MinChoices  int64         `json:"min_choices"`
	MaxChoices  int64         `json:"max_choices"`
	Options     []optionCount `json:"options"`
	Voters      int           `json:"voters"`
	Replaced    int           `json:"replaced"`
	Invalid     []invalidVote `json:"invalid"`
	Leading     []string      `json:"leading"`
	MyVote      []string      `json:"my_vote,omitempty"`
	Votes       []ballot      `json:"votes,omitempty"`

	poll *poll
}

type tallyResult struct {
	RoomID    string       `json:"room_id"`
	Complete  bool         `json:"complete"`
	Polls     []*pollTally `json:"polls"`
	MorePolls int          `json:"more_polls"`
}

func tally(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
	room, err := req.NamedRoom()
	if err != nil {
		return nil, err
	}
	only, _ := req.Arguments.Get("poll_event_id").AsString()
	openOnly, _ := req.Arguments.Get("open_only").AsBool()
	withVotes, _ := req.Arguments.Get("include_votes").AsBool()
	limit, ok := req.Arguments.Get("limit").AsInt()
	if !ok {
		limit = 10
	}
	self := ""
	if req.Self != nil {
		self = req.Self.AgentID
	}

	// The polls, then the votes in seq order: a later valid vote of an
	// agent replaces its earlier one.
	byEvent, polls := collectPolls(room, only, req.NowMS)
	if only != "" && len(polls) == 0 {
		return nil, errString("no poll " + only + " among the records of room " + room.RoomID + " that apconnect holds")
	}
	latest := latestBallots(room, byEvent)
	for _, t := range polls {
		t.count(latest[t], self, withVotes)
	}

	res := &tallyResult{RoomID: room.RoomID, Complete: !room.RecordsTruncated, Polls: []*pollTally{}}
	for i := len(polls) - 1; i >= 0; i-- { // newest first
		if openOnly && !polls[i].Open {
			continue
		}
		if int64(len(res.Polls)) == limit {
			res.MorePolls++
			continue
		}
		res.Polls = append(res.Polls, polls[i])
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: tallyText(res, room, req.NowMS)}}, Structured: res}, nil
}

// collectPolls returns the room's polls (only the one with event ID only,
// when set), by event ID and in seq order, without their votes.
func collectPolls(room *plugin.Room, only string, now int64) (map[string]*pollTally, []*pollTally) {
	byEvent := map[string]*pollTally{}
	var polls []*pollTally
	for i := range room.Records {
		rec := &room.Records[i]
		if rec.Type != typePoll || rec.Redacted || only != "" && rec.EventID != only {
			continue
		}
		p := readPoll(rec)
		t := &pollTally{
			PollEventID: rec.EventID, PollID: text.Clean(p.pollID, 80), Question: text.Clean(p.question, 300), Seq: rec.Seq, Actor: rec.Actor,
			Open: p.open(now), MinChoices: p.min, MaxChoices: p.max, Invalid: []invalidVote{}, Leading: []string{}, poll: p,
		}
		if p.closes {
			c := p.closesAt
			t.ClosesAt = &c
		}
		for _, o := range p.options {
			t.Options = append(t.Options, optionCount{ID: text.Clean(o.ID, 80), Label: text.Clean(o.Label, 120)})
		}
		byEvent[rec.EventID] = t
		polls = append(polls, t)
	}
	return byEvent, polls
}

// latestBallots reads the votes for the polls of byEvent in seq order: it
// notes the invalid ones in their poll and returns each agent's latest
// valid ballot per poll (counting the replaced ones).
func latestBallots(room *plugin.Room, byEvent map[string]*pollTally) map[*pollTally]map[string]*ballot {
	latest := map[*pollTally]map[string]*ballot{}
	for i := range room.Records {
		rec := &room.Records[i]
		if rec.Type != typeVote || rec.Redacted {
			continue
		}
		pollID, _ := rec.Payload.Get("poll_event_id").AsString()
		t := byEvent[pollID]
		if t == nil {
			continue
		}
		ids, _ := rec.Payload.Get("option_ids").AsStrings()
		if reason := invalidReason(t.poll, rec, ids); reason != "" {
			t.Invalid = append(t.Invalid, invalidVote{EventID: rec.EventID, Actor: rec.Actor, Reason: reason})
			continue
		}
		if latest[t] == nil {
			latest[t] = map[string]*ballot{}
		}
		if latest[t][rec.Actor] != nil {
			t.Replaced++
		}
		latest[t][rec.Actor] = &ballot{Actor: rec.Actor, OptionIDs: ids, EventID: rec.EventID, Seq: rec.Seq}
	}
	return latest
}

// count tallies the poll's latest ballots (by actor): votes per option,
// voters, this agent's vote, the ballots when asked, and the leading
// options.
func (t *pollTally) count(latest map[string]*ballot, self string, withVotes bool) {
	var ballots []*ballot
	for _, b := range latest {
		ballots = append(ballots, b)
	}
	slices.SortFunc(ballots, func(a, b *ballot) int { return int(a.Seq - b.Seq) })
	t.Voters = len(ballots)
	for _, b := range ballots {
		for _, id := range b.OptionIDs {
			for k := range t.poll.options {
				if t.poll.options[k].ID == id {
					t.Options[k].Votes++
				}
			}
		}
		cleaned := make([]string, len(b.OptionIDs))
		for k, id := range b.OptionIDs {
			cleaned[k] = text.Clean(id, 80)
		}
		if b.Actor == self {
			t.MyVote = cleaned
		}
		if withVotes {
			t.Votes = append(t.Votes, ballot{Actor: b.Actor, OptionIDs: cleaned, EventID: b.EventID, Seq: b.Seq})
		}
	}
	best := 0
	for _, o := range t.Options {
		best = max(best, o.Votes)
	}
	for _, o := range t.Options {
		if best > 0 && o.Votes == best {
			t.Leading = append(t.Leading, o.ID)
		}
	}
}

// invalidReason says why a vote counts for nothing, or "".
func invalidReason(p *poll, rec *plugin.Record, ids []string) string {
	if !p.open(rec.AcceptedAt) {
		return "accepted after the poll closed"
	}
	if rec.Seq < p.rec.Seq {
		return "older than the poll"
	}
	for _, id := range ids {
		if !p.hasOption(id) {
			return text.Quote(id, 40) + " is not an option"
		}
	}
	if n := int64(len(ids)); n < p.min || n > p.max {
		return text.Plural(len(ids), "option") + " chosen; the poll says " + p.choices()
	}
	return ""
}

func tallyText(res *tallyResult, room *plugin.Room, now int64) string {
	var b strings.Builder
	if len(res.Polls) == 0 {
		b.WriteString("No polls in room " + res.RoomID + ".")
	} else {
		b.WriteString("Polls in room " + res.RoomID + ", newest first:")
	}
	for _, t := range res.Polls {
		b.WriteString("\n- " + `"` + t.Question + `" (poll_id ` + t.PollID + ", event " + t.PollEventID + ", ")
		switch {
		case t.Open && t.ClosesAt != nil:
			b.WriteString("open, closes in " + text.Until(*t.ClosesAt-now))
		case t.Open:
			b.WriteString("open")
		default:
			b.WriteString("closed")
		}
		b.WriteString("; " + t.poll.choices() + "): ")
		for i, o := range t.Options {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(o.ID + " " + text.Int(int64(o.Votes)))
		}
		b.WriteString(" — " + text.Plural(t.Voters, "voter"))
		if len(t.Leading) > 0 {
			b.WriteString("; leading: " + strings.Join(t.Leading, ", "))
		}
		if t.MyVote != nil {
			b.WriteString("; you voted " + strings.Join(t.MyVote, ", "))
		} else if t.Open {
			b.WriteString("; you have not voted")
		}
		if len(t.Invalid) > 0 {
			b.WriteString("; " + text.Plural(len(t.Invalid), "invalid vote") + " ignored")
		}
		for _, v := range t.Votes {
			b.WriteString("\n    " + v.Actor + ": " + strings.Join(v.OptionIDs, ", "))
		}
	}
	if res.MorePolls > 0 {
		b.WriteString("\n(" + text.Plural(res.MorePolls, "more poll") + "; raise limit to see them)")
	}
	b.WriteString(room.PartialNote())
	return b.String()
}

// errString is an error with a fixed text (no fmt inside the sandbox).
type errString string

func (e errString) Error() string { return string(e) }
