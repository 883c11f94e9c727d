package main

import (
	"strings"

	"apconnect/sdk-guest/plugin"
	// The Structured result is a struct, encoded with reflection.
	_ "apconnect/sdk-guest/plugin/structjson"
	"apconnect/sdk-guest/text"
)

var sessionsTool = plugin.Tool{
	Name:  "sessions",
	Title: "Realtime sessions",
	Description: "Lists the WebRTC sessions (adp:realtime/1.0) of a room, newest first: who offered each to whom, its media, " +
		"announced file transfers, answers, closes and state (offered, answered, declined, expired, closed). " +
		"Closed, declined and expired sessions are listed with include_ended. SDP bodies are not shown.",
	InputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id"],
	"properties": {
	` + plugin.RoomProperties + `,
	"session_id": {"type": "string", "minLength": 1, "description": "Only this session."},
	"include_ended": {"type": "boolean", "default": false, "description": "Also list closed, declined and expired sessions."}
	},
	"additionalProperties": false
}`),
	OutputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id", "complete", "sessions", "ended"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every record of the room: older sessions may be missing."},
		"sessions": {"type": "array", "items": {
			"type": "object",
			"required": ["session_id", "state", "offer_event_id", "offerer", "media", "seq", "answers", "closed_by"],
			"properties": {
				"session_id": {"type": "string"},
				"state": {"enum": ["offered", "answered", "declined", "expired", "closed"]},
				"offer_event_id": {"type": "string"},
				"offerer": {"type": "string"},
				"to": {"type": "array", "items": {"type": "string"}},
				"media": {"type": "array", "items": {"type": "string"}},
				"topology": {"type": "string"},
				"transfers": {"type": "array", "items": {
					"type": "object",
					"required": ["transfer_id"],
					"properties": {"transfer_id": {"type": "string"}, "file_name": {"type": "string"}, "size_bytes": {"type": "integer"}, "mime_type": {"type": "string"}},
					"additionalProperties": false
				}},
				"expires_at": {"type": "integer"},
				"seq": {"type": "integer"},
				"answers": {"type": "array", "items": {
					"type": "object",
					"required": ["actor", "event_id"],
					"properties": {"actor": {"type": "string"}, "event_id": {"type": "string"}, "accepted_media": {"type": "array", "items": {"type": "string"}}},
					"additionalProperties": false
				}},
				"closed_by": {"type": "array", "items": {"type": "string"}}
			},
			"additionalProperties": false
		}},
		"ended": {"type": "integer", "description": "Closed, declined or expired sessions not listed."}
	},
	"additionalProperties": false
}`),
	Handler: listSessions,
}

type answerOut struct {
	Actor         string   `json:"actor"`
	EventID       string   `json:"event_id"`
	AcceptedMedia []string `json:"accepted_media,omitempty"`
}

type sessionOut struct {
	SessionID    string      `json:"session_id"`
	State        string      `json:"state"`
	OfferEventID string      `json:"offer_event_id"`
	Offerer      string      `json:"offerer"`
	To           []string    `json:"to,omitempty"`
	Media        []string    `json:"media"`
	Topology     string      `json:"topology,omitempty"`
	Transfers    []transfer  `json:"transfers,omitempty"`
	ExpiresAt    *int64      `json:"expires_at,omitempty"`
	Seq          int64       `json:"seq"`
	Answers      []answerOut `json:"answers"`
	ClosedBy     []string    `json:"closed_by"`
}

type sessionsOut struct {
	RoomID   string       `json:"room_id"`
	Complete bool         `json:"complete"`
	Sessions []sessionOut `json:"sessions"`
	Ended    int          `json:"ended"`
}

func listSessions(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
	room, err := req.NamedRoom()
	if err != nil {
		return nil, err
	}
	only, _ := req.Arguments.Get("session_id").AsString()
	withEnded, _ := req.Arguments.Get("include_ended").AsBool()
	out := &sessionsOut{RoomID: room.RoomID, Complete: !room.RecordsTruncated, Sessions: []sessionOut{}}
	_, order := sessions(room)
	for i := len(order) - 1; i >= 0; i-- {
		s := order[i]
		o := s.offer
		if only != "" && o.sessionID != only {
			continue
		}
		state := s.state(req.NowMS)
		if ended := state == "closed" || state == "declined" || state == "expired"; ended && !withEnded && only == "" {
			out.Ended++
			continue
		}
		so := sessionOut{
			SessionID: text.Clean(o.sessionID, 120), State: state, OfferEventID: o.rec.EventID, Offerer: o.rec.Actor,
			To: o.to, Media: o.media, Topology: o.topology, Seq: o.rec.Seq, Answers: []answerOut{}, ClosedBy: []string{},
		}
		for _, t := range o.transfers {
			t.ID, t.FileName, t.MIMEType = text.Clean(t.ID, 120), text.Clean(t.FileName, 200), text.Clean(t.MIMEType, 100)
			so.Transfers = append(so.Transfers, t)
		}
		if o.expires {
			e := o.expiresAt
			so.ExpiresAt = &e
		}
		for _, a := range s.answers {
			media, _ := a.Payload.Get("accepted_media").AsStrings()
			so.Answers = append(so.Answers, answerOut{Actor: a.Actor, EventID: a.EventID, AcceptedMedia: media})
		}
		for _, c := range s.closes {
			so.ClosedBy = append(so.ClosedBy, c.Actor)
		}
		out.Sessions = append(out.Sessions, so)
	}
	if only != "" && len(out.Sessions) == 0 {
		return nil, errString("no session " + text.Quote(only, 64) + " among the records of room " + room.RoomID + " that apconnect holds")
	}
	self := ""
	if req.Self != nil {
		self = req.Self.AgentID
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: sessionsText(out, room, self, withEnded || only != "")}}, Structured: out}, nil
}

func sessionsText(out *sessionsOut, room *plugin.Room, self string, all bool) string {
	who := func(id string) string {
		if id == self {
			return "you"
		}
		return id
	}
	var b strings.Builder
	if len(out.Sessions) == 0 {
		b.WriteString("No sessions in room " + out.RoomID + ".")
	} else {
		b.WriteString("Sessions in room " + out.RoomID + ", newest first:")
	}
	for _, s := range out.Sessions {
		b.WriteString("\n- " + `"` + s.SessionID + `" (` + strings.Join(s.Media, "+") + ", " + s.State + ") offered by " + who(s.Offerer))
		if len(s.To) > 0 {
			var to []string
			for _, t := range s.To {
				to = append(to, who(t))
			}
			b.WriteString(" to " + strings.Join(to, ", "))
		} else {
			b.WriteString(" to the room")
		}
		b.WriteString(" (offer " + s.OfferEventID + ")")
		if len(s.Answers) > 0 {
			var by []string
			for _, a := range s.Answers {
				by = append(by, who(a.Actor))
			}
			b.WriteString("; answered by " + strings.Join(by, ", "))
		}
		if len(s.Transfers) > 0 {
			var names []string
			for _, t := range s.Transfers {
				name := t.ID
				if t.FileName != "" {
					name = t.FileName
				}
				names = append(names, name)
			}
			b.WriteString("; files: " + strings.Join(names, ", "))
		}
		if len(s.ClosedBy) > 0 {
			var by []string
			for _, c := range s.ClosedBy {
				by = append(by, who(c))
			}
			b.WriteString("; closed by " + strings.Join(by, ", "))
		}
	}
	if out.Ended > 0 && !all {
		b.WriteString("\n(" + text.Plural(out.Ended, "ended session") + " not shown; include_ended lists them)")
	}
	b.WriteString(room.PartialNote())
	return b.String()
}

// errString is an error with a fixed text (no fmt inside the sandbox).
type errString string

func (e errString) Error() string { return string(e) }
