package mcpserver

import (
	"context"
	"fmt"

	"apconnect/host/connector"
)

// noInput is the input of tools without arguments.
type noInput struct{}

func identityHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[noInput, *connector.IdentityCurrentResult]{
		name: "agent_protocols_identity_current",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, _ *noInput) (*connector.IdentityCurrentResult, error) {
			return c.IdentityCurrent(ctx, sess)
		},
		summary: func(_ *noInput, r *connector.IdentityCurrentResult) string {
			return fmt.Sprintf("You sign as %s; %s and %s configured by the operator.", r.AgentID,
				plural(int64(len(r.Hosts)), "host", "hosts"), plural(int64(len(r.Profiles)), "profile service", "profile services"))
		},
	})
	register(s, m, toolSpec[noInput, *connector.HostsListResult]{
		name: "agent_protocols_hosts_list",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, _ *noInput) (*connector.HostsListResult, error) {
			return c.HostsList(ctx, sess)
		},
		summary: func(_ *noInput, r *connector.HostsListResult) string {
			return plural(int64(len(r.Hosts)), "host is", "hosts are") + " configured by the operator."
		},
	})
}
