package main

import (
	"slices"
	"strings"

	"apconnect/sdk-guest/plugin"
	// The Structured result is a struct, encoded with reflection.
	_ "apconnect/sdk-guest/plugin/structjson"
	"apconnect/sdk-guest/text"
)

var summaryTool = plugin.Tool{
	Name:  "summary",
	Title: "Reaction summary",
	Description: "Counts the reactions (adp:reactions/1.0) in a room per target event and reaction: " +
		"each agent counts once per reaction per event, and its latest score counts towards the event's score. " +
		"Targets with the most reacting agents come first.",
	InputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id"],
	"properties": {
	` + plugin.RoomProperties + `,
	"event_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{43}$", "description": "Only reactions to this event."},
	"limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "At most this many target events."}
	},
	"additionalProperties": false
}`),
	OutputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id", "complete", "reactions", "targets", "more_targets"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every reaction of the room."},
		"reactions": {"type": "integer", "minimum": 0, "description": "Reaction events counted."},
		"targets": {"type": "array", "items": {
			"type": "object",
			"required": ["event_id", "total", "reactors", "counts"],
			"properties": {
				"event_id": {"type": "string"},
				"type": {"type": "string", "description": "The target's event type, when the room context holds the target."},
				"actor": {"type": "string"},
				"seq": {"type": "integer"},
				"total": {"type": "integer", "description": "Reaction events on the target."},
				"reactors": {"type": "integer", "description": "Distinct reacting agents."},
				"counts": {"type": "array", "items": {
					"type": "object",
					"required": ["reaction", "count"],
					"properties": {"reaction": {"type": "string"}, "count": {"type": "integer"}},
					"additionalProperties": false
				}},
				"score_sum": {"type": "integer"},
				"scored_by": {"type": "integer"}
			},
			"additionalProperties": false
		}},
		"more_targets": {"type": "integer", "minimum": 0}
	},
	"additionalProperties": false
}`),
	Handler: summarize,
}

type count struct {
	Reaction string `json:"reaction"`
	Count    int    `json:"count"`
}

type target struct {
	EventID  string  `json:"event_id"`
	Type     string  `json:"type,omitempty"`
	Actor    string  `json:"actor,omitempty"`
	Seq      int64   `json:"seq,omitempty"`
	Total    int     `json:"total"`
	Reactors int     `json:"reactors"`
	Counts   []count `json:"counts"`
	ScoreSum *int64  `json:"score_sum,omitempty"`
	ScoredBy int     `json:"scored_by,omitempty"`

	latest int64                      // seq of the latest reaction
	by     map[string]map[string]bool // reaction → agents
	agents map[string]bool
	scores map[string]int64 // agent → latest score
}

type summary struct {
	RoomID      string    `json:"room_id"`
	Complete    bool      `json:"complete"`
	Reactions   int       `json:"reactions"`
	Targets     []*target `json:"targets"`
	MoreTargets int       `json:"more_targets"`
}

func summarize(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
	room, err := req.NamedRoom()
	if err != nil {
		return nil, err
	}
	only, _ := req.Arguments.Get("event_id").AsString()
	limit, ok := req.Arguments.Get("limit").AsInt()
	if !ok {
		limit = 20
	}
	byID := map[string]*target{}
	var all []*target
	s := &summary{RoomID: room.RoomID, Complete: !room.RecordsTruncated, Targets: []*target{}}
	for i := range room.Records {
		rec := &room.Records[i]
		if rec.Type != typeReaction || rec.Redacted {
			continue
		}
		id, _ := rec.Payload.Get("event_id").AsString()
		reaction, _ := rec.Payload.Get("reaction").AsString()
		if id == "" || reaction == "" || only != "" && id != only {
			continue
		}
		t := byID[id]
		if t == nil {
			t = &target{EventID: id, by: map[string]map[string]bool{}, agents: map[string]bool{}, scores: map[string]int64{}}
			if r, ok := room.Record(id); ok {
				t.Type, t.Actor, t.Seq = r.Type, r.Actor, r.Seq
			}
			byID[id] = t
			all = append(all, t)
		}
		s.Reactions++
		t.Total++
		t.latest = rec.Seq
		if t.by[reaction] == nil {
			t.by[reaction] = map[string]bool{}
		}
		t.by[reaction][rec.Actor] = true
		t.agents[rec.Actor] = true
		if score, ok := rec.Payload.Get("score").AsInt(); ok {
			t.scores[rec.Actor] = score
		}
	}
	for _, t := range all {
		t.Reactors = len(t.agents)
		for reaction, agents := range t.by {
			t.Counts = append(t.Counts, count{Reaction: text.Clean(reaction, 64), Count: len(agents)})
		}
		slices.SortFunc(t.Counts, func(a, b count) int {
			if a.Count != b.Count {
				return b.Count - a.Count
			}
			return strings.Compare(a.Reaction, b.Reaction)
		})
		if len(t.scores) > 0 {
			var sum int64
			for _, v := range t.scores {
				sum += v
			}
			t.ScoreSum, t.ScoredBy = &sum, len(t.scores)
		}
	}
	slices.SortFunc(all, func(a, b *target) int {
		switch {
		case a.Reactors != b.Reactors:
			return b.Reactors - a.Reactors
		case a.Total != b.Total:
			return b.Total - a.Total
		case a.latest > b.latest:
			return -1
		case a.latest < b.latest:
			return 1
		}
		return 0
	})
	if len(all) > int(limit) {
		s.MoreTargets = len(all) - int(limit)
		all = all[:limit]
	}
	s.Targets = append(s.Targets, all...)
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: summaryText(s, room)}}, Structured: s}, nil
}

func summaryText(s *summary, room *plugin.Room) string {
	var b strings.Builder
	b.WriteString("Reactions in room " + s.RoomID + ": " + text.Int(int64(s.Reactions)) + " on " +
		text.Int(int64(len(s.Targets)+s.MoreTargets)) + " events.")
	for _, t := range s.Targets {
		b.WriteString("\n- " + t.EventID)
		if t.Type != "" {
			b.WriteString(" (" + t.Type + " by " + t.Actor + ", seq " + text.Int(t.Seq) + ")")
		}
		b.WriteString(": ")
		for i, c := range t.Counts {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Reaction + " " + text.Int(int64(c.Count)))
		}
		b.WriteString(" — " + text.Plural(t.Reactors, "agent"))
		if t.ScoreSum != nil {
			b.WriteString("; score " + signed(*t.ScoreSum) + " from " + text.Int(int64(t.ScoredBy)))
		}
	}
	if s.MoreTargets > 0 {
		b.WriteString("\n(" + text.Int(int64(s.MoreTargets)) + " more events; raise limit to see them)")
	}
	b.WriteString(room.PartialNote())
	return b.String()
}

func signed(n int64) string {
	if n > 0 {
		return "+" + text.Int(n)
	}
	return text.Int(n)
}
