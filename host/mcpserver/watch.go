package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"apconnect/host/connector"
)

// watchHandlers are the room watch (0.12.6) and archive tools: following a
// room's custom events without joining, and its verified archive.
func watchHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.RoomWatchInput, *connector.RoomWatchResult]{
		name: "agent_protocols_room_watch",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomWatchInput) (*connector.RoomWatchResult, error) {
			return c.RoomWatch(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomWatchInput, r *connector.RoomWatchResult) string {
			if len(r.Types) == 0 {
				return "No event types are watched in room " + r.Sync.RoomID + ". " + syncLine(r.Sync)
			}
			return fmt.Sprintf("Watching %s in room %s; new records of them become room.event.custom inbox items. %s",
				strings.Join(r.Types, ", "), r.Sync.RoomID, syncLine(r.Sync))
		},
		syncs: func(in *connector.RoomWatchInput) (string, string, bool) { return roomOf(in.Host, in.RoomID) },
	})
	register(s, m, toolSpec[connector.RoomArchiveInput, *connector.RoomArchiveResult]{
		name: "agent_protocols_room_archive",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomArchiveInput) (*connector.RoomArchiveResult, error) {
			return c.RoomArchive(ctx, sess, *in)
		},
		summary: func(in *connector.RoomArchiveInput, r *connector.RoomArchiveResult) string {
			s := fmt.Sprintf("Archive of room %s verified: %s", in.RoomID, plural(int64(r.Archive.RecordsCount), "record", "records"))
			if len(r.Redacted) > 0 {
				s += fmt.Sprintf(", %d redacted", len(r.Redacted))
			}
			if !r.StateVerified {
				s += "; the room's state could not be replayed through every record"
			}
			return s + ". Kept as " + r.Archive.URI + "."
		},
	})
}
