package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

func draftHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.DraftsListInput, *connector.DraftsListResult]{
		name: "agent_protocols_drafts_list",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.DraftsListInput) (*connector.DraftsListResult, error) {
			return c.DraftsList(ctx, sess, *in)
		},
		summary: func(_ *connector.DraftsListInput, r *connector.DraftsListResult) string {
			s := plural(int64(len(r.Drafts)), "held draft", "held drafts")
			if r.NextCursor != "" {
				s += "; more with cursor " + r.NextCursor
			}
			return s + "."
		},
	})
	register(s, m, toolSpec[connector.DraftGetInput, *connector.DraftGetResult]{
		name:      "agent_protocols_draft_get",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.DraftGetInput) (*connector.DraftGetResult, error) {
			return c.DraftGet(ctx, sess, *in)
		},
		summary: func(_ *connector.DraftGetInput, r *connector.DraftGetResult) string {
			return fmt.Sprintf("Draft %s (%s) was based on seq %d; %s since. Decide with agent_protocols_draft_commit. %s",
				r.Draft.ID, r.Draft.Kind, r.Draft.BaseSeq, plural(int64(len(r.Changes)), "change", "changes"), syncLine(r.Sync))
		},
	})
	register(s, m, toolSpec[connector.DraftCommitInput, *connector.WriteResult]{
		name:      "agent_protocols_draft_commit",
		serialize: true,
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.DraftCommitInput) (*connector.WriteResult, error) {
			return c.DraftCommit(ctx, sess, *in)
		},
		summary: func(in *connector.DraftCommitInput, r *connector.WriteResult) string {
			return writeSummary("draft "+in.DraftID, r)
		},
	})
	register(s, m, toolSpec[connector.DraftDropInput, *connector.DraftDropResult]{
		name: "agent_protocols_draft_drop",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.DraftDropInput) (*connector.DraftDropResult, error) {
			return c.DraftDrop(ctx, sess, *in)
		},
		summary: func(_ *connector.DraftDropInput, r *connector.DraftDropResult) string {
			return fmt.Sprintf("Draft %s dropped; nothing was sent. %s.", r.DraftID, plural(r.PendingCount, "held draft remains", "held drafts remain"))
		},
	})
}
