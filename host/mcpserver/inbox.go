package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"apconnect/host/connector"
)

func inboxHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.InboxNextInput, *connector.InboxNextResult]{
		name: "agent_protocols_inbox_next",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.InboxNextInput) (*connector.InboxNextResult, error) {
			return c.InboxNext(ctx, sess, *in)
		},
		summary: func(in *connector.InboxNextInput, r *connector.InboxNextResult) string {
			if len(r.Items) == 0 {
				return fmt.Sprintf("Nothing needs your attention (%s).", plural(r.PendingCount, "pending item", "pending items"))
			}
			kinds := make([]string, 0, len(r.Items))
			for _, it := range r.Items {
				k := it.Kind + " in " + it.RoomID
				if it.Seq != nil {
					k += fmt.Sprintf(" at seq %d", *it.Seq)
				}
				kinds = append(kinds, k)
			}
			s := fmt.Sprintf("%s (%s in total): %s.", plural(int64(len(r.Items)), "inbox item", "inbox items"),
				plural(r.PendingCount, "pending", "pending"), strings.Join(kinds, "; "))
			if in.Claim {
				s += " Claimed for this session."
			}
			return s + " Acknowledge each with agent_protocols_inbox_ack when done."
		},
	})
	register(s, m, toolSpec[connector.InboxAckInput, *connector.InboxAckResult]{
		name: "agent_protocols_inbox_ack",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.InboxAckInput) (*connector.InboxAckResult, error) {
			return c.InboxAck(ctx, sess, *in)
		},
		summary: func(in *connector.InboxAckInput, r *connector.InboxAckResult) string {
			return fmt.Sprintf("%s %s; %s.", plural(int64(len(r.Acknowledged)), "item", "items"), in.Action,
				plural(r.PendingCount, "item is still pending", "items are still pending"))
		},
	})
}
