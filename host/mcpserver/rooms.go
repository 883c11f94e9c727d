package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

func roomHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.RoomsSearchInput, *connector.RoomsResult]{
		name: "agent_protocols_rooms_search",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomsSearchInput) (*connector.RoomsResult, error) {
			return c.RoomsSearch(ctx, sess, *in)
		},
		summary: func(in *connector.RoomsSearchInput, r *connector.RoomsResult) string {
			return roomsSummary(r, "found on "+in.Host)
		},
	})
	register(s, m, toolSpec[connector.RoomsListInput, *connector.RoomsResult]{
		name: "agent_protocols_rooms_list",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomsListInput) (*connector.RoomsResult, error) {
			return c.RoomsList(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomsListInput, r *connector.RoomsResult) string {
			return roomsSummary(r, "known locally")
		},
	})
	register(s, m, toolSpec[connector.RoomOpenInput, *connector.RoomOpenResult]{
		name:      "agent_protocols_room_open",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomOpenInput) (*connector.RoomOpenResult, error) {
			return c.RoomOpen(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomOpenInput, r *connector.RoomOpenResult) string {
			return roomStateSummary("Opened", &r.Room, r.Sync)
		},
		syncs: func(in *connector.RoomOpenInput) (string, string, bool) { return roomOf(in.Host, in.RoomID) },
	})
	register(s, m, toolSpec[connector.RoomStateInput, *connector.RoomStateResult]{
		name:      "agent_protocols_room_state",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomStateInput) (*connector.RoomStateResult, error) {
			return c.RoomState(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomStateInput, r *connector.RoomStateResult) string {
			return roomStateSummary("State of", &r.Room, r.Sync)
		},
		syncs: func(in *connector.RoomStateInput) (string, string, bool) {
			return in.Host, in.RoomID, in.Refresh
		},
	})
}

func roomStateSummary(verb string, v *connector.RoomStateView, s connector.SyncState) string {
	role := "not a member"
	if v.SelfMember != nil {
		role = fmt.Sprintf("your membership: %s %s", v.SelfMember.Status, v.SelfMember.Role)
	}
	return fmt.Sprintf("%s room %s (%s, %s): %s, %s. %s", verb, v.RoomID, v.Status, v.Visibility,
		plural(int64(v.ActiveMembersCount), "active member", "active members"), role, syncLine(s))
}
