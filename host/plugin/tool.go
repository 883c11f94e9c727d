package plugin

import (
	"context"
	"encoding/json"
	"slices"

	"apconnect/host/identity"
)

type toolInput struct {
	Op        string          `json:"op"`
	NowMS     int64           `json:"now_ms"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Context   *ToolContext    `json:"context"`
}

// Tools returns the plugin's tools as the MCP server should list them.
func (p *Plugin) Tools() []ToolDef { return slices.Clone(p.desc.Tools) }

// CanPropose reports whether the plugin may propose events of eventType:
// it described the type among those it proposes and holds
// propose:<eventType>. A plugin's propose grants cover all its tools, so
// tool is not consulted.
func (p *Plugin) CanPropose(_, eventType string) bool {
	return p.proposes[eventType] && p.grants.CanPropose(eventType)
}

// CallTool runs tool name (the plugin's short name, not the MCP name) with
// args, a JSON object that is checked against the tool's input schema
// first (nil means {}). tc is the read-only context the host built (nil
// means none). The result has passed the output schema, the tool's output
// schema and the content policy; its proposals name only types the plugin
// is granted, and must still go through the normal write path.
func (p *Plugin) CallTool(ctx context.Context, name string, args json.RawMessage, tc *ToolContext) (*ToolResult, error) {
	entry := p.tools[name]
	if entry == nil {
		return nil, p.err(CodeUnknown, OpTool, "the plugin has no tool %q", name)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := identity.ParseStrict(args)
	if err != nil {
		return nil, p.err(CodeInvalidArguments, OpTool, "tool %q: arguments are not strict I-JSON: %v", name, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, p.err(CodeInvalidArguments, OpTool, "tool %q: arguments must be a JSON object", name)
	}
	if err := entry.in.Validate(v); err != nil {
		return nil, p.err(CodeInvalidArguments, OpTool, "tool %q: %s", name, schemaMessage(err))
	}
	if tc == nil {
		tc = &ToolContext{}
	}
	var res ToolResult
	env := toolInput{Op: "tool", NowMS: p.nowMS(), Name: name, Arguments: args, Context: tc}
	err = p.roundTrip(ctx, OpTool, env, &res, func() error {
		if entry.out != nil && !res.IsError {
			if res.Structured == nil {
				return p.err(CodeInvalidOutput, OpTool, "tool %q has an output schema but returned no structured result", name)
			}
			if err := entry.out.Validate(res.Structured); err != nil {
				return p.err(CodeInvalidOutput, OpTool, "tool %q: structured result does not match its output schema: %s", name, schemaMessage(err))
			}
		}
		for i, pr := range res.Proposals {
			if !p.CanPropose(name, pr.Type) {
				return p.err(CodeNotGranted, OpTool, "tool %q: proposal %d is a %s event, which the plugin may not propose", name, i, pr.Type)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}
