package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"apconnect/host/connector"
)

// serviceHandlers are the tools about the services and protocols
// themselves: discovery documents and payload schemas (0.12.6).
func serviceHandlers(s *server, m map[string]ToolHandler) {
	register(s, m, toolSpec[connector.ServicesListInput, *connector.ServicesListResult]{
		name: "agent_protocols_services_list",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.ServicesListInput) (*connector.ServicesListResult, error) {
			return c.ServicesList(ctx, sess, *in)
		},
		summary: func(_ *connector.ServicesListInput, r *connector.ServicesListResult) string {
			var names []string
			for _, d := range r.Services {
				svc, _ := d["service"].(string)
				proto, _ := d["protocol"].(string)
				names = append(names, proto+" at "+svc)
			}
			s := plural(int64(len(r.Services)), "service", "services")
			if len(names) > 0 {
				s += ": " + strings.Join(names, ", ")
			}
			if len(r.Errors) > 0 {
				s += "; " + plural(int64(len(r.Errors)), "discovery document", "discovery documents") + " could not be read"
			}
			return s + "."
		},
	})
	register(s, m, toolSpec[connector.SchemaGetInput, *connector.SchemaGetResult]{
		name: "agent_protocols_schema_get",
		call: func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *connector.SchemaGetInput) (*connector.SchemaGetResult, error) {
			return c.SchemaGet(ctx, sess, *in)
		},
		summary: func(_ *connector.SchemaGetInput, r *connector.SchemaGetResult) string {
			s := fmt.Sprintf("%s of %s", plural(int64(len(r.Schemas)), "payload schema", "payload schemas"), r.Protocol)
			if len(r.RegisteredPacks) > 0 {
				s += ", with " + plural(int64(len(r.RegisteredPacks)), "registered pack", "registered packs")
			}
			return s + "."
		},
	})
}
