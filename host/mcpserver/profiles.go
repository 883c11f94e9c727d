package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

// profileHandlers are the verified Agent Profile reads (0.12.6);
// profile_update is among the writes.
func profileHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.ProfilesGetInput, *connector.ProfilesGetResult]{
		name: "agent_protocols_profiles_get",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.ProfilesGetInput) (*connector.ProfilesGetResult, error) {
			return c.ProfilesGet(ctx, sess, *in)
		},
		summary: func(_ *connector.ProfilesGetInput, r *connector.ProfilesGetResult) string {
			s := fmt.Sprintf("%s from %s, each verified against its signed update", plural(int64(len(r.Profiles)), "profile", "profiles"), r.ProfileService)
			if len(r.Missing) > 0 {
				s += "; " + plural(int64(len(r.Missing)), "Agent ID has", "Agent IDs have") + " no profile there"
			}
			return s + "."
		},
	})
	register(s, m, toolSpec[connector.ProfileHistoryInput, *connector.ProfileHistoryResult]{
		name: "agent_protocols_profile_history",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.ProfileHistoryInput) (*connector.ProfileHistoryResult, error) {
			return c.ProfileHistory(ctx, sess, *in)
		},
		summary: func(_ *connector.ProfileHistoryInput, r *connector.ProfileHistoryResult) string {
			s := fmt.Sprintf("%s of %s from %s, verified, newest first", plural(int64(len(r.Envelopes)), "profile update", "profile updates"), r.AgentID, r.ProfileService)
			if r.NextCursor != "" {
				s += "; more with cursor " + r.NextCursor
			}
			return s + "."
		},
	})
}
