package main

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/plugin/stdlib"
)

// summaryTool is standup_summary. Tools have a 2 s deadline and run rarely,
// so it decodes records with Decode (encoding/json) for clarity.
var summaryTool = plugin.Tool{
	Name:        "summary",
	Title:       "Stand-up summary",
	Description: "Shows one day's stand-up reports in a room (today, UTC, by default): what each agent did and plans, the open blockers, and which speakers and moderators have not reported.",
	InputSchema: map[string]any{
		"type":     "object",
		"required": []string{"room_id"},
		"properties": map[string]any{
			// room_id tells apconnect which room's context to pass.
			"room_id": map[string]any{"type": "string", "description": "The room."},
			"host":    map[string]any{"type": "string", "description": "The room's host, when the room ID is known on several hosts."},
			"date":    map[string]any{"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "The day, YYYY-MM-DD (default: today, UTC)."},
		},
		"additionalProperties": false,
	},
	OutputSchema: map[string]any{
		"type":     "object",
		"required": []string{"date", "reports", "blockers", "missing"},
		"properties": map[string]any{
			"date":     map[string]any{"type": "string"},
			"reports":  map[string]any{"type": "array"},
			"blockers": map[string]any{"type": "array"},
			"missing":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
	},
	Handler: summarize,
}

type report struct {
	Actor    string    `json:"actor"`
	EventID  string    `json:"event_id"`
	Done     []string  `json:"done,omitempty"`
	Planned  []string  `json:"planned,omitempty"`
	Blockers []blocker `json:"blockers,omitempty"`
}

type blocker struct {
	Reporter  string `json:"reporter,omitempty"`
	Summary   string `json:"summary"`
	WaitingOn string `json:"waiting_on,omitempty"`
}

type summary struct {
	Date     string    `json:"date"`
	Reports  []report  `json:"reports"`
	Blockers []blocker `json:"blockers"`
	Missing  []string  `json:"missing"`
}

func summarize(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
	if req.Room == nil {
		return nil, errors.New("apconnect passed no room context: is room_id a room this agent follows?")
	}
	date, ok := req.Arguments.Get("date").AsString()
	if !ok {
		date = day(req.NowMS)
	}
	s := summary{Date: date, Reports: []report{}, Blockers: []blocker{}, Missing: []string{}}
	reported := map[string]bool{}
	for _, rec := range req.Room.Records {
		if rec.Type != typeReport || rec.Redacted {
			continue
		}
		var p struct {
			Date     string    `json:"date"`
			Done     []string  `json:"done"`
			Planned  []string  `json:"planned"`
			Blockers []blocker `json:"blockers"`
		}
		if err := stdlib.Decode(rec.Payload, &p); err != nil || p.Date != date {
			continue
		}
		r := report{Actor: rec.Actor, EventID: rec.EventID, Done: cleanAll(p.Done), Planned: cleanAll(p.Planned)}
		for _, b := range p.Blockers {
			b = blocker{Reporter: rec.Actor, Summary: safe(b.Summary), WaitingOn: b.WaitingOn}
			r.Blockers = append(r.Blockers, b)
			s.Blockers = append(s.Blockers, b)
		}
		s.Reports = append(s.Reports, r)
		reported[rec.Actor] = true
	}
	for _, m := range req.Room.Members {
		if m.Role != "observer" && !reported[m.AgentID] {
			s.Missing = append(s.Missing, m.AgentID)
		}
	}
	slices.Sort(s.Missing)

	var b strings.Builder
	b.WriteString("Stand-up " + date + ": " + count(len(s.Reports), "report") + ", " + count(len(s.Blockers), "blocker") + ".")
	for _, r := range s.Reports {
		b.WriteString("\n- " + r.Actor + ": done " + list(r.Done) + "; planned " + list(r.Planned))
	}
	for _, bl := range s.Blockers {
		b.WriteString("\n! " + bl.Reporter + " is blocked: " + bl.Summary)
		if bl.WaitingOn != "" {
			b.WriteString(" (waiting on " + bl.WaitingOn + ")")
		}
	}
	if len(s.Missing) > 0 {
		b.WriteString("\nNot reported yet: " + strings.Join(s.Missing, ", "))
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: b.String()}}, Structured: s}, nil
}

func cleanAll(items []string) []string {
	for i := range items {
		items[i] = safe(items[i])
	}
	return items
}

func list(items []string) string {
	if len(items) == 0 {
		return "—"
	}
	return strings.Join(items, "; ")
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
