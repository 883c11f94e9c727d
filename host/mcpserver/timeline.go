package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

func timelineHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.RoomTimelineInput, *connector.RoomTimelineResult]{
		name:      "agent_protocols_room_timeline",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomTimelineInput) (*connector.RoomTimelineResult, error) {
			return c.RoomTimeline(ctx, sess, *in)
		},
		summary: func(in *connector.RoomTimelineInput, r *connector.RoomTimelineResult) string {
			s := plural(int64(len(r.Items)), "timeline item", "timeline items")
			if n := len(r.Items); n > 0 {
				s += fmt.Sprintf(" (seq %d to %d)", r.Items[0].Seq, r.Items[n-1].Seq)
			}
			if r.NextAfterSeq != nil {
				s += fmt.Sprintf("; more after seq %d", *r.NextAfterSeq)
			}
			if in.MarkRead && len(r.Items) > 0 {
				s += "; marked read"
			}
			return s + ". " + syncLine(r.Sync)
		},
		syncs: func(in *connector.RoomTimelineInput) (string, string, bool) {
			return in.Host, in.RoomID, in.Refresh
		},
	})
	register(s, m, toolSpec[connector.RoomMarkReadInput, *connector.RoomMarkReadResult]{
		name: "agent_protocols_room_mark_read",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.RoomMarkReadInput) (*connector.RoomMarkReadResult, error) {
			return c.RoomMarkRead(ctx, sess, *in)
		},
		summary: func(_ *connector.RoomMarkReadInput, r *connector.RoomMarkReadResult) string {
			return fmt.Sprintf("Room %s is read through seq %d; %s.", r.RoomID, r.ReadSeq, plural(r.UnreadCount, "unread record remains", "unread records remain"))
		},
	})
}
