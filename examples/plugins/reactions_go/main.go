// Command reactions_go is the Go version of apconnect's first-party plugin
// reactions (plugins/reactions, written in Rust), kept as an example of a
// plugin written with the Go guest SDK: the same description, rules, texts
// and results, so that either file can be configured as "reactions" (the
// tests of plugins/ run against both). It is for the registered type pack
// adp:reactions/1.0 (Agent Discourse 1.0, Appendix A.1).
//
// Validator (reaction.create): the reacted event must be a record of the
// room that apconnect holds. The room context carries every held record
// whose event ID the proposal names, so a reaction to a mistyped or
// invented event ID is refused before it is signed; so is a reaction to an
// event older than the records apconnect keeps for the room
// (state.records_per_room), which it cannot tell from an invented one.
//
// Tool (reactions_summary): counts per reaction per target event, over the
// reaction.create records of the room context.
//
// It is built with the SDK exactly as a third-party plugin would be.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:        "reactions",
		Version:     "1.0.0",
		Description: "Checks adp:reactions/1.0 reactions against the room (the reacted event must exist) and summarizes them per target event.",
		Validators:  map[string]plugin.ValidateFunc{typeReaction: validateReaction},
		Tools:       []plugin.Tool{summaryTool},
	})
}

func main() {}

const typeReaction = "reaction.create"

// validateReaction refuses a reaction whose event_id is not a record of the
// room that the host holds.
func validateReaction(req *plugin.ValidateRequest) []plugin.FieldError {
	id, ok := req.Payload.Get("event_id").AsString()
	if !ok {
		return nil // the pack's schema requires it; the host checks that
	}
	if _, found := req.Room.Record(id); found {
		return nil
	}
	return []plugin.FieldError{{Path: "/payload/event_id", Message: missingEvent(req.Room, id)}}
}

// missingEvent explains why an event ID the proposal names is not in the
// context: the room has no such event, or apconnect does not hold it.
func missingEvent(room *plugin.Room, id string) string {
	if room.RecordsTruncated {
		return "event " + id + " is not among the records of this room that apconnect holds; react only to events you can see in the room's timeline"
	}
	return "this room has no event " + id
}
