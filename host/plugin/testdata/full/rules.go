package main

import (
	"slices"
	"strconv"

	"apconnect/sdk-guest/plugin"
)

var pollsPack = plugin.Pack{
	Name:    "demo:polls",
	Version: "1.0",
	Title:   "Demo polls",
	Types: []plugin.TypeDef{
		{
			Type:  "demo.poll",
			Kind:  "message",
			Title: "Poll",
			Schema: map[string]any{
				"type":     "object",
				"required": []string{"question", "options"},
				"properties": map[string]any{
					"question":  map[string]any{"type": "string", "minLength": 1},
					"options":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1},
					"targets":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
					"closes_at": map[string]any{"type": "integer"},
				},
				"additionalProperties": false,
			},
			Instructions: "Ask one question with distinct options.",
		},
		{
			Type:  "demo.vote",
			Kind:  "signal",
			Title: "Vote",
			Schema: map[string]any{
				"type":     "object",
				"required": []string{"poll_event_id", "option"},
				"properties": map[string]any{
					"poll_event_id": map[string]any{"type": "string", "pattern": "^[A-Za-z0-9_-]{43}$"},
					"option":        map[string]any{"type": "string"},
				},
				"additionalProperties": false,
			},
		},
	},
}

// validateVote: the poll must be a demo.poll record of the room window, still
// open at now_ms, and offer the option.
func validateVote(req *plugin.ValidateRequest) []plugin.FieldError {
	pollID, _ := req.Payload.Get("poll_event_id").AsString()
	option, _ := req.Payload.Get("option").AsString()
	rec, ok := req.Room.Record(pollID)
	if !ok || rec.Type != "demo.poll" {
		return []plugin.FieldError{plugin.Errorf("/payload/poll_event_id", "no poll %s in this room", pollID)}
	}
	var errs []plugin.FieldError
	if closes, ok := rec.Payload.Get("closes_at").AsInt(); ok && req.NowMS >= closes {
		errs = append(errs, plugin.Errorf("/payload/poll_event_id", "the poll closed at %d", closes))
	}
	options, _ := rec.Payload.Get("options").AsStrings()
	if !slices.Contains(options, option) {
		errs = append(errs, plugin.Errorf("/payload/option", "%q is not an option of the poll", option))
	}
	return errs
}

// watchPoll wakes the agent for polls aimed at it.
func watchPoll(rec *plugin.Record, req *plugin.WatchRequest) *plugin.InboxItem {
	targets, _ := rec.Payload.Get("targets").AsStrings()
	if !slices.Contains(targets, req.Room.SelfID()) {
		return nil
	}
	q, _ := rec.Payload.Get("question").AsString()
	return &plugin.InboxItem{
		Summary:          "Poll for you: " + q,
		Priority:         plugin.PriorityHigh,
		RequiresResponse: true,
		Reason:           "you are a target of this poll",
		SuggestedTools:   []string{"tally", "agent_protocols_room_submit_event", "no_such_tool"},
	}
}

// watchBench is a typical rule for the benchmark: mentions and one payload
// member.
func watchBench(rec *plugin.Record, req *plugin.WatchRequest) *plugin.InboxItem {
	if !rec.Mentioned(req.Room.SelfID()) {
		return nil
	}
	if urgent, _ := rec.Payload.Get("urgent").AsBool(); !urgent {
		return nil
	}
	// strconv, not fmt: fmt is branchy and branches are what cost in the sandbox.
	return &plugin.InboxItem{Summary: "urgent note " + strconv.FormatInt(rec.Seq, 10), Priority: plugin.PriorityHigh}
}
