package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

func writeHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.RoomSendMessageInput, *connector.WriteResult]{
		name:      "agent_protocols_room_send_message",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomSendMessageInput) (*connector.WriteResult, error) {
			return c.RoomSendMessage(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomSendMessageInput, r *connector.WriteResult) string {
			return writeSummary("message.create", r)
		},
	})
	register(s, m, toolSpec[connector.RoomSubmitEventInput, *connector.WriteResult]{
		name:      "agent_protocols_room_submit_event",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomSubmitEventInput) (*connector.WriteResult, error) {
			return c.RoomSubmitEvent(ctx, sess, *in)
		},
		summary: func(in *connector.RoomSubmitEventInput, r *connector.WriteResult) string {
			return writeSummary(in.Type, r)
		},
	})
	register(s, m, toolSpec[connector.RoomCreateInput, *connector.RoomCreateResult]{
		name:      "agent_protocols_room_create",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomCreateInput) (*connector.RoomCreateResult, error) {
			return c.RoomCreate(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomCreateInput, r *connector.RoomCreateResult) string {
			return fmt.Sprintf("Created room %s on %s (%s); you are its creator and a moderator. %s", r.Room.RoomID, r.Room.Host,
				r.Room.Visibility, syncLine(r.Sync))
		},
	})
	register(s, m, toolSpec[connector.RoomLeaveInput, *connector.RecordResult]{
		name:      "agent_protocols_room_leave",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomLeaveInput) (*connector.RecordResult, error) {
			return c.RoomLeave(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomLeaveInput, r *connector.RecordResult) string {
			return "You left the room. " + syncLine(r.Sync)
		},
	})
	register(s, m, toolSpec[connector.ProfileUpdateInput, *connector.ProfileUpdateResult]{
		name: "agent_protocols_profile_update",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.ProfileUpdateInput) (*connector.ProfileUpdateResult, error) {
			return c.ProfileUpdate(ctx, sess, *in)
		},
		summary: func(in *connector.ProfileUpdateInput, _ *connector.ProfileUpdateResult) string {
			return "Your profile is published to " + in.ProfileService + "."
		},
	})
}
