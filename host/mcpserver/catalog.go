// Package mcpserver is apconnect's MCP surface: the standard
// agent_protocols_* tool catalog (host/toolcatalog) served through the MCP
// go-sdk, resources, notifications and transports.
package mcpserver

import (
	_ "embed"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/toolcatalog"
)

// Preload loads the tool catalog now (see toolcatalog.Preload), so that a
// server built later does not wait for it.
func Preload() { toolcatalog.Preload() }

// Catalog returns the standard tool definitions exactly as served, sorted by
// name. Each call returns fresh values the caller may keep or hand to
// mcp.Server.AddTool (which must not see them modified afterwards).
func Catalog() []*mcp.Tool {
	defs := toolcatalog.Definitions()
	out := make([]*mcp.Tool, len(defs))
	for i, d := range defs {
		out[i] = mcpTool(d)
	}
	return out
}

// Tool returns the definition of the catalog tool name as served.
func Tool(name string) (*mcp.Tool, bool) {
	d, ok := toolcatalog.Lookup(name)
	if !ok {
		return nil, false
	}
	return mcpTool(d), true
}

func mcpTool(d toolcatalog.Definition) *mcp.Tool {
	destructive, openWorld := d.Hints.Destructive, d.Hints.OpenWorld
	return &mcp.Tool{
		Name:        d.Name,
		Title:       d.Title,
		Description: d.Description,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    d.Hints.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  d.Hints.Idempotent,
			OpenWorldHint:   &openWorld,
		},
		InputSchema:  d.Input,
		OutputSchema: d.Output,
	}
}
