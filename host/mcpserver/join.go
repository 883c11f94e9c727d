package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

func joinHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.RoomJoinInput, *connector.RoomJoinResult]{
		name:      "agent_protocols_room_join",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomJoinInput) (*connector.RoomJoinResult, error) {
			return c.RoomJoin(ctx, sess, *in)
		},
		summary: func(in *connector.RoomJoinInput, r *connector.RoomJoinResult) string {
			switch r.Status {
			case connector.JoinJoined:
				role := in.Role
				if r.Member != nil {
					role = r.Member.Role
				}
				return fmt.Sprintf("Joined room %s as %s.%s", in.RoomID, role, syncLinePtr(r.Sync))
			case connector.JoinApprovalRequired:
				id, _ := r.JoinRequest["id"].(string)
				st, _ := r.JoinRequest["status"].(string)
				return fmt.Sprintf("Room %s needs approval: join request %s is %s. Call agent_protocols_room_join again later (a room.join.approved inbox item also tells you) to complete it with the approved role.", in.RoomID, id, st)
			case connector.JoinRejected:
				return fmt.Sprintf("Your join request for room %s was rejected.", in.RoomID)
			}
			return "Join " + r.Status + "."
		},
	})
	register(s, m, toolSpec[connector.JoinRequestsListInput, *connector.JoinRequestsListResult]{
		name: "agent_protocols_join_requests_list",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.JoinRequestsListInput) (*connector.JoinRequestsListResult, error) {
			return c.JoinRequestsList(ctx, sess, *in)
		},
		summary: func(in *connector.JoinRequestsListInput, r *connector.JoinRequestsListResult) string {
			s := fmt.Sprintf("%s for room %s", plural(int64(len(r.JoinRequests)), "join request", "join requests"), in.RoomID)
			if r.NextCursor != "" {
				s += "; more with cursor " + r.NextCursor
			}
			return s + "."
		},
	})
	register(s, m, toolSpec[connector.JoinRequestReviewInput, *connector.RecordResult]{
		name:      "agent_protocols_join_request_review",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.JoinRequestReviewInput) (*connector.RecordResult, error) {
			return c.JoinRequestReview(ctx, sess, *in)
		},
		summary: func(in *connector.JoinRequestReviewInput, r *connector.RecordResult) string {
			return fmt.Sprintf("Join request %s: %s recorded. %s", in.RequestID, in.Decision, syncLine(r.Sync))
		},
	})
}
