package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/engine"
	"apconnect/host/toolcatalog"
)

// ToolHandler handles one call of a catalog tool whose arguments have already
// passed the tool's input schema. args is the call's arguments as JSON ({}
// when the call had none); decode it with json.Unmarshal into the tool's
// input struct. Return ErrorResult for failures the agent should see.
type ToolHandler func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, error)

// AddCatalogTool registers the catalog tool name on s with h, using the
// catalog's own definition (schemas, description, hints) through the SDK's
// raw Server.AddTool. The typed mcp.AddTool is not used because it would
// infer schemas from Go types instead of serving ours.
//
// Every call's arguments are validated against the tool's input schema
// before h runs; invalid arguments never reach h and produce an
// ErrorResult with code invalid_input and one issue per problem. Before
// validation a declared top-level member that is null, or "" (except
// content, text and subject), counts as omitted, as in the reference SDK
// 0.12.6 (see normalizeArgs).
func AddCatalogTool(s *mcp.Server, name string, h ToolHandler) error {
	tool, ok := Tool(name)
	if !ok {
		return fmt.Errorf("mcpserver: %q is not a catalog tool", name)
	}
	if h == nil {
		return fmt.Errorf("mcpserver: nil handler for %s", name)
	}
	in, _ := toolcatalog.InputSchema(name)
	s.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		raw = in.Normalize(raw)
		if err := in.ValidateJSON(raw); err != nil {
			var ve *toolcatalog.ValidationError
			if errors.As(err, &ve) {
				return ErrorResult(ve.Code(), ve.Error(), ve.Data()), nil
			}
			// Only a schema that does not compile gets here: a catalog bug
			// (the catalog's tests compile every schema), not the caller's.
			return ErrorResult(engine.CodeInternal, err.Error(), nil), nil
		}
		if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
			raw = json.RawMessage("{}")
		}
		return h(ctx, req, raw)
	})
	return nil
}

// AddCatalog registers every catalog tool on s. handlers must hold exactly
// one handler per catalog tool: a missing or unknown name is an error and
// nothing is registered.
func AddCatalog(s *mcp.Server, handlers map[string]ToolHandler) error {
	names := toolcatalog.Names()
	var missing, unknown []string
	for _, n := range names {
		if handlers[n] == nil {
			missing = append(missing, n)
		}
	}
	for n := range handlers {
		if !slices.Contains(names, n) {
			unknown = append(unknown, n)
		}
	}
	if len(missing) > 0 || len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("mcpserver: catalog handlers: missing %v, unknown %v", missing, unknown)
	}
	for _, n := range names {
		if err := AddCatalogTool(s, n, handlers[n]); err != nil {
			return err
		}
	}
	return nil
}

// ToolErrorBody is the JSON body of a failed tool call:
// {"error": {"code", "message", "data"}}.
type ToolErrorBody struct {
	// Error is the failure.
	Error ToolError `json:"error"`
}

// ToolError is a failure reported to the agent. Code is stable and
// machine-readable: an ADP code (permission_denied, room_head_mismatch, …)
// or one of apconnect's own (invalid_input, ambiguous_room, …).
type ToolError struct {
	// Code is the stable error code.
	Code string `json:"code"`
	// Message explains the failure in English.
	Message string `json:"message"`
	// Data carries details, such as ADP error data or validation issues.
	Data any `json:"data,omitempty"`
}

// ErrorResult builds the result of a failed tool call: isError set and the
// ToolErrorBody as JSON text content. The body is deliberately not put in
// StructuredContent: that field must match the tool's output schema, and
// some clients reject a call whose structured content does not, even on an
// error result.
func ErrorResult(code, msg string, data any) *mcp.CallToolResult {
	body, err := json.Marshal(ToolErrorBody{Error: ToolError{Code: code, Message: msg, Data: data}})
	if err != nil {
		body, _ = json.Marshal(ToolErrorBody{Error: ToolError{Code: code, Message: msg}})
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: string(body)}},
	}
}
