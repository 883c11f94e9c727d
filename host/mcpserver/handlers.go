package mcpserver

import (
	"apconnect/host/toolcatalog"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/connector"
)

// toolSpec binds one catalog tool to its connector method. In is the
// connector's input struct (struct{} for tools without input), Out its
// result.
type toolSpec[In, Out any] struct {
	name string
	// serialize runs the call under the session's lock: tools that present
	// a room head or write against one.
	serialize bool
	call      func(ctx context.Context, c *connector.Connector, sess connector.SessionID, in *In) (Out, error)
	// summary is the short readable text put before the JSON result.
	summary func(in *In, out Out) string
	// syncs, when set, names the room a call may sync at length (host may
	// be ""); a client that sent a progress token gets progress
	// notifications while it does.
	syncs func(in *In) (host, roomID string, ok bool)
}

// handler turns the spec into a catalog ToolHandler. Arguments have
// passed the input schema when it runs.
func (sp toolSpec[In, Out]) handler(s *server) ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (res *mcp.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic in tool handler", "tool", sp.name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, err = internalErrorResult(), nil
			}
		}()
		var in In
		if err := decodeArgs(args, &in); err != nil {
			s.log.Error("tool arguments the engine cannot decode", "tool", sp.name, "err", err)
			return ErrorResult(connector.CodeInternal, "the connector cannot read these arguments: "+err.Error(), nil), nil
		}
		var ss *mcp.ServerSession
		if req != nil {
			ss = req.Session
		}
		st := s.session(ss)
		if sp.serialize {
			st.mu.Lock()
			defer st.mu.Unlock()
		}
		// Whatever the call changed, subscribers hear about it now rather
		// than at the next poll.
		defer s.watch.poke()

		var out Out
		run := func() error {
			var err error
			out, err = sp.call(ctx, s.conn, st.id, &in)
			return err
		}
		if sp.syncs != nil {
			if host, roomID, ok := sp.syncs(&in); ok {
				err = s.withProgress(ctx, req, host, roomID, run)
			} else {
				err = run()
			}
		} else {
			err = run()
		}
		if err != nil {
			return s.toolError(sp.name, err), nil
		}
		text := ""
		if sp.summary != nil {
			text = sp.summary(&in, out)
		}
		return s.toolResult(sp.name, out, text), nil
	}
}

// decodeArgs decodes validated arguments into the engine's input struct.
// An argument the struct has no field for is an error, never dropped: the
// schema allowed it, so the engine must take it.
func decodeArgs(args json.RawMessage, into any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return err
	}
	return nil
}

// toolResult is a successful call: the result as structuredContent, and as
// content a short summary followed by the same JSON (connector spec 5: the
// JSON item is the normative result for clients that do not read
// structuredContent).
func (s *server) toolResult(name string, out any, summary string) *mcp.CallToolResult {
	data, err := json.Marshal(out)
	if err != nil {
		s.log.Error("tool result does not encode", "tool", name, "err", err)
		return internalErrorResult()
	}
	if sch, ok := toolcatalog.OutputSchema(name); ok {
		if err := sch.ValidateJSON(data); err != nil {
			s.log.Error("tool result does not match its output schema", "tool", name, "err", err)
			if s.opts.StrictOutput {
				var ve *toolcatalog.ValidationError
				if errors.As(err, &ve) {
					return ErrorResult(ve.Code(), ve.Error(), ve.Data())
				}
				return ErrorResult(toolcatalog.ErrCodeInvalidOutput, err.Error(), nil)
			}
		}
	}
	content := make([]mcp.Content, 0, 2)
	if summary = strings.TrimSpace(summary); summary != "" {
		content = append(content, &mcp.TextContent{Text: summary})
	}
	content = append(content, &mcp.TextContent{Text: string(data)})
	return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(data)}
}

// toolError is a failed call: the connector error's stable code, message
// and data (ADP codes and data kept as the host sent them).
func (s *server) toolError(name string, err error) *mcp.CallToolResult {
	ce := connector.AsError(err)
	if ce.Code == connector.CodeInternal {
		s.log.Warn("tool failed", "tool", name, "err", err)
	} else {
		s.log.Debug("tool failed", "tool", name, "code", ce.Code, "err", err)
	}
	var data any
	if len(ce.Data) > 0 {
		data = ce.Data
	}
	msg := ce.Message
	if msg == "" {
		msg = ce.Code
	}
	return ErrorResult(ce.Code, msg, data)
}

// handlers is the handler table of the 33 catalog tools.
func (s *server) handlers() map[string]ToolHandler {
	m := map[string]ToolHandler{}
	for _, add := range []func(*server, map[string]ToolHandler){
		identityHandlers, roomHandlers, memberHandlers, statusHandlers, timelineHandlers,
		inboxHandlers, draftHandlers, writeHandlers, joinHandlers,
		serviceHandlers, profileHandlers, watchHandlers,
	} {
		add(s, m)
	}
	return m
}

// register adds one spec to a handler table.
func register[In, Out any](s *server, m map[string]ToolHandler, sp toolSpec[In, Out]) {
	if _, dup := m[sp.name]; dup {
		panic("mcpserver: two handlers for " + sp.name)
	}
	m[sp.name] = sp.handler(s)
	if s.toolIO != nil {
		s.toolIO[sp.name] = toolIO{in: reflect.TypeFor[In](), out: reflect.TypeFor[Out]()}
	}
}

// toolIO is the Go input and result types of one tool.
type toolIO struct{ in, out reflect.Type }

// roomOf is the syncs function of tools whose input names a room.
func roomOf(host, roomID string) (string, string, bool) {
	return host, roomID, roomID != ""
}
