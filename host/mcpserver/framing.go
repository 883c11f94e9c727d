package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC framing shared by the stdio and HTTP transports.
//
// The go-sdk's transports treat one malformed message as the end of the
// connection (stdio) or answer it with a plain-text 400 (HTTP), and they
// drop a message that is neither a request nor a response. Every inbound
// message therefore goes through decodeMessage first: it either returns the
// SDK message, or the JSON-RPC error to answer with (-32700 for bytes that
// are not JSON, -32600 for JSON that is not a valid request object, with
// the message's id when it has a valid one), and the connection goes on.

// Limits of one inbound JSON-RPC message.
const (
	// DefaultMaxMessageBytes bounds one message: a stdio line or an HTTP
	// request body (the go-sdk's own HTTP default).
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxDepth bounds the nesting of arrays and objects in one
	// message: room content may nest 128 levels (the strict JSON parser's
	// limit), plus the envelope of a tools/call.
	DefaultMaxDepth = 160
)

// MCP error codes the transports answer with themselves, besides the
// standard JSON-RPC ones in package jsonrpc.
const (
	// codeResourceNotFound is MCP's "Resource not found" before
	// 2026-07-28; SEP-2164 moved it to -32602 from 2026-07-28 on.
	codeResourceNotFound = -32002
)

// The protocol version from which requests carry their own _meta and
// server/discover exists (SEP-2575).
const statelessProtocol = "2026-07-28"

// wireError is a JSON-RPC error response the transport writes itself. id is
// the raw JSON id of the offending message, nil when it has none (written
// as null).
type wireError struct {
	id      json.RawMessage
	code    int64
	message string
	data    any
}

func (e *wireError) Error() string { return e.message }

// encode renders the error response (without a trailing newline).
func (e *wireError) encode() []byte {
	id := e.id
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data,omitempty"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	body.Error.Code, body.Error.Message, body.Error.Data = e.code, e.message, e.data
	b, err := json.Marshal(body)
	if err != nil { // data is always plain JSON values; be safe anyway
		body.Error.Data = nil
		b, _ = json.Marshal(body)
	}
	return b
}

func errParse(msg string) *wireError {
	return &wireError{code: jsonrpc.CodeParseError, message: "parse error: " + msg}
}

func errInvalid(id json.RawMessage, msg string) *wireError {
	return &wireError{id: id, code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + msg}
}

// limits bound one message.
type limits struct {
	maxBytes int
	maxDepth int
}

func (l limits) orDefault() limits {
	if l.maxBytes <= 0 {
		l.maxBytes = DefaultMaxMessageBytes
	}
	if l.maxDepth <= 0 {
		l.maxDepth = DefaultMaxDepth
	}
	return l
}

// errTooLarge is the answer to a message over the byte limit. id is the
// message's id when its beginning or end still held one (recoverID): the
// message is never parsed whole.
func errTooLarge(max int, id json.RawMessage) *wireError {
	return &wireError{id: id, code: jsonrpc.CodeInvalidRequest,
		message: fmt.Sprintf("invalid request: the message exceeds %d bytes", max), data: map[string]any{"max_bytes": max}}
}

// decodeMessage checks one inbound message and decodes it. A JSON-RPC
// batch (a top-level array) is refused: MCP removed batching in
// 2025-06-18, and no client of this server sends them.
func decodeMessage(data []byte, l limits) (jsonrpc.Message, *wireError) {
	l = l.orDefault()
	data = bytes.TrimSpace(data)
	if len(data) > l.maxBytes {
		return nil, errTooLarge(l.maxBytes, recoverID(edges(data)))
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		msg := "the message is not JSON"
		if err != nil {
			msg = "the message is not JSON: " + err.Error()
		}
		// Only the beginning: read member by member, it shows the id is
		// a member of the object; the end of bytes that are not JSON
		// proves nothing.
		e := errParse(msg)
		e.id = headID(data[:min(len(data), idScanBytes)])
		return nil, e
	}
	if depth := nestingDepth(data, l.maxDepth); depth > l.maxDepth {
		return nil, &wireError{id: topLevelID(data), code: jsonrpc.CodeInvalidRequest,
			message: fmt.Sprintf("invalid request: the message nests deeper than %d levels", l.maxDepth), data: map[string]any{"max_depth": l.maxDepth}}
	}
	switch data[0] {
	case '{':
	case '[':
		return nil, errInvalid(nil, "JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send one message per line or request")
	default:
		return nil, errInvalid(nil, "a message must be a JSON object")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, errParse(err.Error())
	}
	rawID, hasID := members["id"]
	var id json.RawMessage
	if hasID {
		if !validID(rawID) {
			return nil, errInvalid(nil, "id must be a string or an integer")
		}
		id = rawID
	}
	if v, ok := members["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return nil, errInvalid(id, `"jsonrpc" must be "2.0"`)
	}
	method, hasMethod := members["method"]
	_, hasResult := members["result"]
	_, hasError := members["error"]
	if hasMethod {
		var name string
		if err := json.Unmarshal(method, &name); err != nil || name == "" {
			return nil, errInvalid(id, `"method" must be a non-empty string`)
		}
		if hasResult || hasError {
			return nil, errInvalid(id, `a request has no "result" or "error"`)
		}
		if p, ok := members["params"]; ok && !isStructured(p) {
			return nil, errInvalid(id, `"params" must be an object`)
		}
	} else {
		switch {
		case !hasID:
			return nil, errInvalid(nil, `a message needs "method" (a request or notification) or "id" with "result" or "error" (a response)`)
		case hasResult == hasError:
			return nil, errInvalid(id, `a message without "method" must be a response with exactly one of "result" and "error"`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, errInvalid(id, err.Error())
	}
	return msg, nil
}

// validID accepts a JSON string or an integer (MCP: "a string or integer";
// never null).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

func isStructured(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '{' || raw[0] == '[' || string(raw) == "null")
}

// topLevelID returns the id member of a JSON object, if it is a valid id.
// It does not decode nested values: member values are skipped by the
// standard library's iterative scanner.
func topLevelID(data []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if data[0] != '{' || json.Unmarshal(data, &m) != nil || !validID(m.ID) {
		return nil
	}
	// encoding/json matches member names case-insensitively: make sure the
	// member really is "id".
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if k == "id" {
			return m.ID
		}
	}
	return nil
}

// nestingDepth returns the deepest nesting of arrays and objects in valid
// JSON, stopping early once it passes limit.
func nestingDepth(data []byte, limit int) int {
	depth, max := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				max = depth
				if max > limit {
					return max
				}
			}
		case '}', ']':
			depth--
		}
	}
	return max
}

// requestMeta returns the _meta object of a request's params, if any.
func requestMeta(params json.RawMessage) map[string]json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta
}

// metaProtocolVersion returns the io.modelcontextprotocol/protocolVersion a
// request carries in its _meta ("" when it has none).
func metaProtocolVersion(params json.RawMessage) string {
	var v string
	if raw, ok := requestMeta(params)[mcp.MetaKeyProtocolVersion]; ok {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// statelessVersions are the versions that may carry their own _meta and
// answer server/discover.
func statelessVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v < statelessProtocol })
}

// checkDiscover answers a server/discover request the SDK would mis-answer:
// without _meta or its protocolVersion it is invalid params (-32602), and
// at a version that has no server/discover or that we do not speak it is
// UnsupportedProtocolVersionError (-32022) listing the versions we support.
// A request the SDK can serve returns nil.
func checkDiscover(req *jsonrpc.Request, id json.RawMessage) *wireError {
	if req.Method != "server/discover" || !req.IsCall() {
		return nil
	}
	meta := requestMeta(req.Params)
	raw, ok := meta[mcp.MetaKeyProtocolVersion]
	var version string
	if !ok || json.Unmarshal(raw, &version) != nil || version == "" {
		return &wireError{id: id, code: jsonrpc.CodeInvalidParams,
			message: fmt.Sprintf("server/discover needs params._meta[%q]", mcp.MetaKeyProtocolVersion)}
	}
	if slices.Contains(statelessVersions(), version) {
		return nil
	}
	return &wireError{id: id, code: mcp.CodeUnsupportedProtocolVersion,
		message: fmt.Sprintf("unsupported protocol version %q: server/discover is served at %s", version, strings.Join(statelessVersions(), ", ")),
		data:    mcp.UnsupportedProtocolVersionData{Supported: mcp.SupportedProtocolVersions(), Requested: version}}
}

// rawID renders an SDK id as raw JSON (nil for no id).
func rawID(id jsonrpc.ID) json.RawMessage {
	if !id.IsValid() {
		return nil
	}
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return nil
	}
	return b
}

// idKey is a comparable form of an id, for maps.
func idKey(id jsonrpc.ID) string {
	return fmt.Sprintf("%T:%v", id.Raw(), id.Raw())
}
