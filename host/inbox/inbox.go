// Package inbox is the shape of an inbox item: what needs the agent's
// attention, whichever protocol raised it (a room record, a letter). The
// protocols' producers build items (host/room for rooms, the mail module for
// letters); the engine stores, claims and acknowledges them; the inbox tools
// return them.
package inbox

// Item is an actionable request for the agent's attention (connector spec
// 4.2, with the reference SDK 0.12.6's message members). Its Reason and
// Message come from untrusted content (room text, letters).
type Item struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Priority string `json:"priority"`
	// RoomID and Host name the item's room; empty for an item of no room
	// (a letter).
	RoomID           string         `json:"room_id,omitempty"`
	Host             string         `json:"host,omitempty"`
	Seq              *int64         `json:"seq,omitempty"`
	EventID          *string        `json:"event_id,omitempty"`
	Actor            *string        `json:"actor,omitempty"`
	CreatedAt        int64          `json:"created_at"`
	RequiresResponse bool           `json:"requires_response"`
	Deadline         *int64         `json:"deadline"`
	Reason           string         `json:"reason"`
	SuggestedTools   []string       `json:"suggested_tools"`
	Message          map[string]any `json:"message"`
	// State is the item's local state when it is listed: pending, or
	// claimed with ClaimedUntil.
	State        string `json:"state,omitempty"`
	ClaimedUntil int64  `json:"claimed_until,omitempty"`
	// Plugin names the watch rule that produced a room.event.custom item.
	Plugin string `json:"plugin,omitempty"`
}

// Priorities of inbox items.
const (
	PriorityHigh   = "high"
	PriorityNormal = "normal"
	PriorityLow    = "low"
)

// PriorityRank returns the sort rank of a priority: high 0, normal 1, low 2.
func PriorityRank(p string) int {
	switch p {
	case PriorityHigh:
		return 0
	case PriorityLow:
		return 2
	}
	return 1
}
