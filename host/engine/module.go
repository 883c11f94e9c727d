package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
)

// SessionID identifies the MCP session a call comes from. Presented heads
// are kept per session and room; held drafts and inbox items belong to the
// Agent ID. The MCP layer picks it (a Streamable HTTP session id, or one
// stable id for a stdio connection).
type SessionID string

// Module is one protocol's part of the connector (host/connector/discourse,
// …/profile, …): its engine part, its tools and its IO types, built on the
// Engine. A module never imports a sibling; the engine imports none.
//
// A module may also implement Background (background work), Discoverer
// (services_list), SchemaSource (schema_get) and Instructor (its part of
// the server instructions).
type Module interface {
	// Name is the module's short name: discourse, profile, mail, ….
	Name() string
	// Protocol is the protocol it speaks, as services_list and schema_get
	// name it (agent-discourse/1.0, …).
	Protocol() string
	// Tools are the standard tools it serves.
	Tools() []Tool
}

// Background is a module with background work of its own: StartBackground
// begins it and returns at once; StopBackground stops it and releases what
// the module holds, before the engine closes.
//
// The names differ from the engine's Start and Close on purpose: a module
// embeds *Engine, whose promoted Start and Close would satisfy an
// interface of those names, and the connector would close the engine (and
// the state under it) once per module, before the modules after it had
// stopped.
type Background interface {
	StartBackground(ctx context.Context)
	StopBackground() error
}

// Discoverer is a module whose services publish a discovery document:
// Discover reads the one at a configured origin (nil, nil when the origin
// offers none). Reading discovery needs no grant.
type Discoverer interface {
	Discover(ctx context.Context, origin string) (map[string]any, error)
}

// Instructor is a module with a part of the MCP server instructions.
type Instructor interface {
	Instructions() string
}

// Tool is one standard tool a module serves, declared once beside its
// handler: its catalog name (its schemas, description, annotations and the
// capability it needs are data, schemas/tools/<name>.json), how the MCP
// layer runs it, and the call. Build it with ToolSpec.
type Tool struct {
	// Name is the catalog name (agent_protocols_…).
	Name string
	// Serialize runs the call under its MCP session's lock: tools that
	// present a room head or write against one.
	Serialize bool
	// In and Out are the Go input and result types (checked against the
	// catalog schemas by the MCP layer's tests).
	In, Out reflect.Type
	// Call decodes validated arguments (JSON, {} when none) and runs the
	// tool. A decoding failure is ErrBadArguments.
	Call func(ctx context.Context, sess SessionID, args json.RawMessage) (result any, summary string, err error)
	// Progress, when set, reports how far a call with these arguments has
	// come while it runs (nil: nothing to report for them).
	Progress func(args json.RawMessage) ProgressFunc
}

// ProgressFunc reports a long call's progress: done of total, and a
// message (ok false while there is nothing to report). final is true for
// the report sent after the call returned.
type ProgressFunc func(ctx context.Context, final bool) (done, total int64, message string, ok bool)

// ToolSpec declares a tool with its Go input and result types.
type ToolSpec[In, Out any] struct {
	Name      string
	Serialize bool
	Call      func(ctx context.Context, sess SessionID, in *In) (Out, error)
	// Summary is the short readable text put before the JSON result.
	Summary func(in *In, out Out) string
	// Progress, when set, reports the progress of a call with in.
	Progress func(in *In) ProgressFunc
}

// BadArgumentsError is a call whose arguments the engine cannot decode
// although they passed the input schema: the schema allowed a member the
// tool's Go input has no field for (never dropped), or a value of another
// type. It is the connector's bug, reported as internal.
type BadArgumentsError struct{ Err error }

func (e *BadArgumentsError) Error() string {
	return "the connector cannot read these arguments: " + e.Err.Error()
}
func (e *BadArgumentsError) Unwrap() error { return e.Err }

// Tool erases the types.
func (s ToolSpec[In, Out]) Tool() Tool {
	t := Tool{Name: s.Name, Serialize: s.Serialize, In: reflect.TypeFor[In](), Out: reflect.TypeFor[Out]()}
	t.Call = func(ctx context.Context, sess SessionID, args json.RawMessage) (any, string, error) {
		var in In
		if err := decodeArgs(args, &in); err != nil {
			return nil, "", &BadArgumentsError{Err: err}
		}
		out, err := s.Call(ctx, sess, &in)
		if err != nil {
			return nil, "", err
		}
		summary := ""
		if s.Summary != nil {
			summary = s.Summary(&in, out)
		}
		return out, summary, nil
	}
	if s.Progress != nil {
		t.Progress = func(args json.RawMessage) ProgressFunc {
			var in In
			if decodeArgs(args, &in) != nil {
				return nil
			}
			return s.Progress(&in)
		}
	}
	return t
}

// decodeArgs decodes validated arguments into a tool's input struct. An
// argument the struct has no field for is an error, never dropped.
func decodeArgs(args json.RawMessage, into any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// SchemaSource is a module whose protocol's payload schemas schema_get
// returns.
type SchemaSource interface {
	// Schemas returns the payload schemas of the protocol's event types
	// (of q.Type only when set: type_not_defined when it has none), and for
	// a room-scoped protocol those of q.RoomID's custom types.
	Schemas(ctx context.Context, q SchemaQuery) (*Schemas, error)
}

// SchemaQuery is what schema_get asks a module.
type SchemaQuery struct {
	Type   string
	RoomID string
	Host   string
}

// Schemas is a module's answer to schema_get.
type Schemas struct {
	Entries []SchemaEntry
	// RegisteredPacks are registered type packs (Discourse), nil for none.
	RegisteredPacks []json.RawMessage
}

// SchemaEntry is the payload schema of one event type.
type SchemaEntry struct {
	Type   string         `json:"type"`
	Schema map[string]any `json:"schema"`
}

// ProtocolSchemas is SchemaSource.Schemas for a protocol whose event types
// are all in its bundled schema document doc (defs as for PayloadSchemas):
// the payload schemas, of typ only when it is not "", and
// type_not_defined when typ names none of them.
func ProtocolSchemas(protocol string, doc []byte, defs [][2]string, typ string) (*Schemas, error) {
	entries, err := PayloadSchemas(doc, defs, typ)
	if err != nil {
		return nil, Wrap(err)
	}
	if typ != "" && len(entries) == 0 {
		return nil, &Error{Code: CodeTypeNotDefined, Message: "event type " + typ + " is not a " + protocol + " event",
			Data: map[string]any{"type": typ}}
	}
	return &Schemas{Entries: entries}, nil
}

// PayloadSchemas picks from a protocol's bundled schema document the
// payload schema of each (event type, $defs name) pair of defs, of typ only
// when it is not "". Each schema stands alone: {"$ref": "#/$defs/<name>",
// "$defs": {…}} with every definition the named one reaches.
func PayloadSchemas(doc []byte, defs [][2]string, typ string) ([]SchemaEntry, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	all, _ := d["$defs"].(map[string]any)
	out := []SchemaEntry{}
	for _, def := range defs {
		if typ == "" || typ == def[0] {
			out = append(out, SchemaEntry{Type: def[0], Schema: payloadSchema(all, def[1])})
		}
	}
	return out, nil
}

// payloadSchema returns {"$ref": "#/$defs/<name>", "$defs": {...}} with
// every definition the named one reaches through local references.
func payloadSchema(all map[string]any, name string) map[string]any {
	reached := map[string]any{}
	var visit func(v any)
	visit = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if ref, ok := t["$ref"].(string); ok {
				if n, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
					if _, done := reached[n]; !done {
						if def, ok := all[n]; ok {
							reached[n] = def
							visit(def)
						}
					}
				}
			}
			for _, e := range t {
				visit(e)
			}
		case []any:
			for _, e := range t {
				visit(e)
			}
		}
	}
	root := map[string]any{"$ref": "#/$defs/" + name}
	visit(root)
	root["$defs"] = reached
	return root
}
