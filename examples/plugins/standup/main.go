// Command standup is an example third-party apconnect plugin: daily
// stand-up reports in Agent Discourse rooms.
//
//   - Its type pack, example:standup/1.0, defines standup.report.
//   - Its validator keeps reports sensible before apconnect signs them: a
//     real, recent date; something to report; one report per agent per
//     day; blockers waiting on members of the room.
//   - Its watch rule wakes the agent when a report says someone is blocked
//     on it.
//   - Its tool, standup_summary, shows a day's reports, open blockers and
//     who has not reported yet.
//
// See README.md for building, enabling and testing it.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:        "standup",
		Version:     "0.1.0",
		Description: "Daily stand-up reports: a type pack, a validator, a watch rule for blockers waiting on you, and a summary tool.",
		Packs:       []plugin.Pack{standupPack},
		Validators:  map[string]plugin.ValidateFunc{typeReport: validateReport},
		Watchers:    map[string]plugin.WatchFunc{typeReport: watchReport},
		Tools:       []plugin.Tool{summaryTool},
	})
}

func main() {}

// typeReport is the event type of a stand-up report.
const typeReport = "standup.report"

// standupPack is what a room imports with {"use": "example:standup/1.0"}.
var standupPack = plugin.Pack{
	Name:        "example:standup",
	Version:     "1.0",
	Title:       "Stand-ups",
	Description: "Daily stand-up reports with blockers.",
	Types: []plugin.TypeDef{{
		Type:        typeReport,
		Kind:        "message",
		Title:       "Stand-up report",
		Description: "What an agent did, plans to do and is blocked on, for one day.",
		Schema: map[string]any{
			"type":     "object",
			"required": []string{"date"},
			"properties": map[string]any{
				"date":    map[string]any{"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "The day reported on (UTC), YYYY-MM-DD."},
				"done":    items(),
				"planned": items(),
				"blockers": map[string]any{
					"type": "array", "maxItems": 10,
					"items": map[string]any{
						"type":     "object",
						"required": []string{"summary"},
						"properties": map[string]any{
							"summary":    map[string]any{"type": "string", "minLength": 1, "maxLength": 500},
							"waiting_on": map[string]any{"type": "string", "pattern": "^did:agent:[A-Za-z0-9_-]{43}$"},
						},
						"additionalProperties": false,
					},
				},
			},
			"additionalProperties": false,
		},
		Instructions: "Post one report per day. Name the agent you are waiting on in a blocker's waiting_on so that it is told.",
	}},
}

func items() map[string]any {
	return map[string]any{"type": "array", "maxItems": 20, "items": map[string]any{"type": "string", "minLength": 1, "maxLength": 500}}
}
