package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/engine"
	"apconnect/host/toolcatalog"
)

// handler turns a module's tool declaration into a catalog ToolHandler.
// Arguments have passed the input schema when it runs. A tool that needs a
// grant on an origin its input names is refused here, before the module
// runs (the engine checks again wherever a request or a signature is made).
func (s *server) handler(t engine.Tool) ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (res *mcp.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic in tool handler", "tool", t.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, err = internalErrorResult(), nil
			}
		}()
		var ss *mcp.ServerSession
		if req != nil {
			ss = req.Session
		}
		st := s.session(ss)
		if t.Serialize {
			st.mu.Lock()
			defer st.mu.Unlock()
		}
		// Whatever the call changed, subscribers hear about it now rather
		// than at the next poll.
		defer s.watch.poke()
		if err := s.conn.Preflight(t.Name, args); err != nil {
			return s.toolError(t.Name, err), nil
		}
		var out any
		var summary string
		run := func() error {
			var err error
			out, summary, err = t.Call(ctx, st.id, args)
			return err
		}
		var progress engine.ProgressFunc
		if t.Progress != nil {
			progress = t.Progress(args)
		}
		if progress != nil {
			err = s.withProgress(ctx, req, progress, run)
		} else {
			err = run()
		}
		if err != nil {
			var bad *engine.BadArgumentsError
			if errors.As(err, &bad) {
				s.log.Error("tool arguments the engine cannot decode", "tool", t.Name, "err", err)
				return ErrorResult(engine.CodeInternal, bad.Error(), nil), nil
			}
			return s.toolError(t.Name, err), nil
		}
		return s.toolResult(t.Name, out, summary), nil
	}
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
	ce := engine.AsError(err)
	if ce.Code == engine.CodeInternal {
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

// handlers is the handler table of the standard tools: every module's
// and the connector's own.
func (s *server) handlers() map[string]ToolHandler {
	m := map[string]ToolHandler{}
	for _, t := range s.conn.StandardTools() {
		if _, dup := m[t.Name]; dup {
			panic("mcpserver: two handlers for " + t.Name)
		}
		m[t.Name] = s.handler(t)
		if s.toolIO != nil {
			s.toolIO[t.Name] = toolIO{in: t.In, out: t.Out}
		}
	}
	return m
}

// toolIO is the Go input and result types of one tool.
type toolIO struct{ in, out reflect.Type }
