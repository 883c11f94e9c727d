package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

func memberHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.RoomMembersListInput, *connector.RoomMembersListResult]{
		name: "agent_protocols_room_members_list",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomMembersListInput) (*connector.RoomMembersListResult, error) {
			return c.RoomMembersList(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomMembersListInput, r *connector.RoomMembersListResult) string {
			s := plural(int64(len(r.Members)), "member", "members") + " listed"
			if r.NextCursor != "" {
				s += "; more with cursor " + r.NextCursor
			}
			return s + ". " + syncLine(r.Sync)
		},
	})
	register(s, m, toolSpec[connector.RoomMemberGetInput, *connector.RoomMemberGetResult]{
		name: "agent_protocols_room_member_get",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomMemberGetInput) (*connector.RoomMemberGetResult, error) {
			return c.RoomMemberGet(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomMemberGetInput, r *connector.RoomMemberGetResult) string {
			return fmt.Sprintf("%s is %s (%s), last activity at seq %s. %s", r.Member.AgentID, r.Member.Role, r.Member.Status,
				seqText(r.Member.LastEventSeq), syncLine(r.Sync))
		},
	})
}

// seqText prints an optional sequence number.
func seqText[T ~int64](p *T) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(int64(*p))
}
