package main

import (
	"strings"

	"apconnect/sdk-guest/plugin"
	// The Structured result is a struct, encoded with reflection.
	_ "apconnect/sdk-guest/plugin/structjson"
	"apconnect/sdk-guest/text"
)

var activeClaimsTool = plugin.Tool{
	Name:  "active_claims",
	Title: "Active claims",
	Description: "Lists the claims (adp:moderation/1.0) of a room whose latest state is \"claimed\" or \"handoff\": who owns " +
		"each task or resource, who it is being handed to and when the lease ends. Claims whose lease has lapsed are " +
		"counted, and listed with include_lapsed.",
	InputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id"],
	"properties": {
	` + plugin.RoomProperties + `,
	"owner": {"type": "string", "pattern": "^did:agent:[A-Za-z0-9_-]{43}$", "description": "Only claims this agent owns or is being handed."},
	"include_lapsed": {"type": "boolean", "default": false, "description": "Also list claims whose lease has ended."}
	},
	"additionalProperties": false
}`),
	OutputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id", "complete", "claims", "lapsed"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every record of the room: older claims may be missing."},
		"claims": {"type": "array", "items": {
			"type": "object",
			"required": ["claim_id", "state", "owner", "scope", "lapsed", "event_id", "seq", "updated_at", "updates"],
			"properties": {
				"claim_id": {"type": "string"},
				"state": {"enum": ["claimed", "handoff"]},
				"owner": {"type": "string"},
				"scope": {"type": "string"},
				"handoff_to": {"type": "string"},
				"expires_at": {"type": "integer"},
				"lapsed": {"type": "boolean"},
				"intent": {"type": "string"},
				"event_id": {"type": "string", "description": "The claim's latest update."},
				"seq": {"type": "integer"},
				"updated_at": {"type": "integer"},
				"updates": {"type": "integer"}
			},
			"additionalProperties": false
		}},
		"lapsed": {"type": "integer", "description": "Active claims whose lease has ended."}
	},
	"additionalProperties": false
}`),
	Handler: activeClaims,
}

type claimOut struct {
	ClaimID   string `json:"claim_id"`
	State     string `json:"state"`
	Owner     string `json:"owner"`
	Scope     string `json:"scope"`
	HandoffTo string `json:"handoff_to,omitempty"`
	ExpiresAt *int64 `json:"expires_at,omitempty"`
	Lapsed    bool   `json:"lapsed"`
	Intent    string `json:"intent,omitempty"`
	EventID   string `json:"event_id"`
	Seq       int64  `json:"seq"`
	UpdatedAt int64  `json:"updated_at"`
	Updates   int    `json:"updates"`
}

type claimsOut struct {
	RoomID   string     `json:"room_id"`
	Complete bool       `json:"complete"`
	Claims   []claimOut `json:"claims"`
	Lapsed   int        `json:"lapsed"`
}

func activeClaims(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
	room, err := req.NamedRoom()
	if err != nil {
		return nil, err
	}
	owner, _ := req.Arguments.Get("owner").AsString()
	withLapsed, _ := req.Arguments.Get("include_lapsed").AsBool()
	out := &claimsOut{RoomID: room.RoomID, Complete: !room.RecordsTruncated, Claims: []claimOut{}}
	_, order := claims(room)
	for i := len(order) - 1; i >= 0; i-- { // most recently updated first
		c := order[i]
		if !c.active() || owner != "" && c.owner != owner && c.handoffTo != owner {
			continue
		}
		lapsed := c.lapsed(req.NowMS)
		if lapsed {
			out.Lapsed++
			if !withLapsed {
				continue
			}
		}
		co := claimOut{
			ClaimID: text.Clean(c.id, 120), State: c.state, Owner: c.owner, Scope: text.Clean(c.scope, 20), HandoffTo: c.handoffTo,
			Lapsed: lapsed, Intent: text.Clean(c.intent, 300), EventID: c.rec.EventID, Seq: c.rec.Seq,
			UpdatedAt: c.rec.AcceptedAt, Updates: c.updates,
		}
		if c.expires {
			e := c.expiresAt
			co.ExpiresAt = &e
		}
		out.Claims = append(out.Claims, co)
	}
	self := ""
	if req.Self != nil {
		self = req.Self.AgentID
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: claimsText(out, room, self, req.NowMS, withLapsed)}}, Structured: out}, nil
}

func claimsText(out *claimsOut, room *plugin.Room, self string, now int64, withLapsed bool) string {
	var b strings.Builder
	if len(out.Claims) == 0 {
		b.WriteString("No active claims in room " + out.RoomID + ".")
	} else {
		b.WriteString("Active claims in room " + out.RoomID + ", most recently updated first:")
	}
	who := func(id string) string {
		if id == self {
			return "you"
		}
		return id
	}
	for _, c := range out.Claims {
		b.WriteString("\n- " + `"` + c.ClaimID + `" (` + c.Scope + ") ")
		if c.State == stateHandoff {
			b.WriteString("held by " + who(c.Owner) + ", being handed to " + who(c.HandoffTo))
		} else {
			b.WriteString("claimed by " + who(c.Owner))
		}
		switch {
		case c.Lapsed:
			b.WriteString("; lease lapsed")
		case c.ExpiresAt != nil:
			b.WriteString("; lease ends in " + text.Until(*c.ExpiresAt-now))
		}
		if c.Intent != "" {
			b.WriteString(": " + c.Intent)
		}
		b.WriteString(" (event " + c.EventID + ")")
	}
	if out.Lapsed > 0 && !withLapsed {
		b.WriteString("\n(" + text.Plural(out.Lapsed, "claim") + " with a lapsed lease not shown; include_lapsed lists them)")
	}
	b.WriteString(room.PartialNote())
	return b.String()
}
