// Command voter is a test plugin of test/e2e: one tool, granted
// propose:poll.vote, that proposes a vote in the room its arguments name.
// apconnect submits the proposal through its normal write path, where the
// deliberation plugin's validator checks it like any vote the agent sends.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:     "voter",
		Version:  "0.1.0",
		Proposes: []string{"poll.vote"},
		Tools: []plugin.Tool{{
			Name:        "vote",
			Description: "Votes in a poll of a room.",
			InputSchema: map[string]any{
				"type":     "object",
				"required": []string{"room_id", "poll_event_id", "option_ids"},
				"properties": map[string]any{
					"room_id":       map[string]any{"type": "string"},
					"host":          map[string]any{"type": "string"},
					"poll_event_id": map[string]any{"type": "string"},
					"option_ids":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1},
				},
				"additionalProperties": false,
			},
			Handler: func(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
				poll, _ := req.Arguments.Get("poll_event_id").AsString()
				options, _ := req.Arguments.Get("option_ids").AsStrings()
				res := plugin.Text("voting " + options[0] + " in " + poll)
				res.Proposals = []plugin.Proposal{{Type: "poll.vote", Payload: map[string]any{"poll_event_id": poll, "option_ids": options}}}
				return res, nil
			},
		}},
	})
}

func main() {}
