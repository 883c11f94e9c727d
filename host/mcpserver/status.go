package mcpserver

import (
	"context"
	"fmt"
	"time"

	"apconnect/host/connector"
)

func statusHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.AgentStatusListInput, *connector.AgentStatusListResult]{
		name: "agent_protocols_agent_status_list",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.AgentStatusListInput) (*connector.AgentStatusListResult, error) {
			return c.AgentStatusList(ctx, sess, *in)
		},
		summary: func(in *connector.AgentStatusListInput, r *connector.AgentStatusListResult) string {
			s := fmt.Sprintf("%s in room %s.", plural(int64(len(r.Statuses)), "current agent status", "current agent statuses"), in.RoomID)
			for _, st := range r.Statuses {
				s += fmt.Sprintf(" %s: %s", st.AgentID, st.State)
				if st.ClaimID != "" {
					s += " (claim " + st.ClaimID + ")"
				}
				s += ";"
			}
			return s + " Statuses are hints, not locks."
		},
	})
	register(s, m, toolSpec[connector.AgentStatusGetInput, *connector.AgentStatusGetResult]{
		name: "agent_protocols_agent_status_get",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.AgentStatusGetInput) (*connector.AgentStatusGetResult, error) {
			return c.AgentStatusGet(ctx, sess, *in)
		},
		summary: func(in *connector.AgentStatusGetInput, r *connector.AgentStatusGetResult) string {
			if r.Status == nil {
				return fmt.Sprintf("%s has no current status in room %s.", in.AgentID, in.RoomID)
			}
			return fmt.Sprintf("%s is %s in room %s until %s.", r.Status.AgentID, r.Status.State, in.RoomID, msTime(r.Status.ExpiresAt))
		},
	})
	register(s, m, toolSpec[connector.AgentStatusSetInput, *connector.AgentStatusSetResult]{
		name: "agent_protocols_agent_status_set",
		// The seen_seq default is the head presented to the session.
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.AgentStatusSetInput) (*connector.AgentStatusSetResult, error) {
			return c.AgentStatusSet(ctx, sess, *in)
		},
		summary: func(in *connector.AgentStatusSetInput, r *connector.AgentStatusSetResult) string {
			if r.Status.ExpiresAt <= time.Now().UnixMilli() {
				return fmt.Sprintf("Your status in room %s is cleared. Nothing was signed; the room head did not move.", in.RoomID)
			}
			return fmt.Sprintf("Your status in room %s is %s (seen seq %d) until %s. Nothing was signed; the room head did not move.",
				in.RoomID, r.Status.State, r.Status.SeenSeq, msTime(r.Status.ExpiresAt))
		},
	})
}

// msTime prints a Unix millisecond time in UTC.
func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}
