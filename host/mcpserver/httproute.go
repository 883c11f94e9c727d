package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP endpoint behind the guards: one URL, two protocols.
//
// MCP 2025-11-25 (and the versions before it) is stateful over HTTP: the
// client initializes, gets an Mcp-Session-Id and sends it on every request.
// MCP 2026-07-28 is stateless: no handshake, no session, every request
// carries its version, client info and capabilities in _meta and its
// version in the MCP-Protocol-Version header. The go-sdk serves one or the
// other per handler, so the router keeps one of each and sends every
// request to its own: a request without a session that is at 2026-07-28
// (by header or _meta) or is server/discover goes to the stateless
// handler, everything else to the stateful one.
//
// Before either sees a POST, the router reads the body (bounded) and
// answers what the SDK would answer badly, with the Streamable HTTP status
// and a JSON-RPC error body: 413 for a body over the limit (with the
// request's id when the body's beginning holds it), 400 with -32700
// or -32600 for a malformed message (decodeMessage), 400 with -32600 for a
// request without a session other than initialize (the SDK would open a
// session and answer code 0 with HTTP 200), and server/discover whose
// MCP-Protocol-Version header and _meta disagree (400, -32020) or at a
// version it does not serve (400, -32022, checkDiscover).
//
// Cancellation. In a 2025-11-25 session notifications/cancelled arrives on
// a POST of its own while the cancelled call's POST is still streaming; the
// SDK cancels the call's context but still sends its response. The router
// keeps the calls in flight per session and filters the event stream of a
// cancelled call, so its response is not sent and the stream just ends. At
// 2026-07-28 a client cancels by closing the request: the stateless handler
// propagates that to the call's context (PropagateRequestCancellation) and
// nothing can be answered any more.

const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerSessionID       = "Mcp-Session-Id"
)

type router struct {
	stateful  http.Handler
	stateless http.Handler
	lim       limits
	log       *slog.Logger
	calls     *inflightCalls
}

func newRouter(srv *mcp.Server, o HTTPOptions) *router {
	getServer := func(*http.Request) *mcp.Server { return srv }
	logger := slog.New(minLevel{h: o.Logger.Handler(), min: slog.LevelWarn})
	lim := limits{maxBytes: o.MaxBodyBytes, maxDepth: o.MaxDepth}.orDefault()
	return &router{
		stateful: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Logger:              logger,
			SessionTimeout:      o.SessionTimeout,
			MaxRequestBodyBytes: int64(lim.maxBytes),
		}),
		stateless: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Logger:                       logger,
			Stateless:                    true,
			PropagateRequestCancellation: true,
			MaxRequestBodyBytes:          int64(lim.maxBytes),
		}),
		lim:   lim,
		log:   o.Logger,
		calls: &inflightCalls{m: map[string]*inflight{}},
	}
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	session := r.Header.Get(headerSessionID)
	version := r.Header.Get(headerProtocolVersion)
	if r.Method != http.MethodPost {
		if session == "" && version >= statelessProtocol {
			rt.stateless.ServeHTTP(w, r)
			return
		}
		rt.stateful.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(rt.lim.maxBytes)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			// The id when the body's beginning holds it (the rest of the
			// body is not read: the 413 itself fails the client's POST).
			head, _ := edges(body)
			writeRPCError(w, http.StatusRequestEntityTooLarge, errTooLarge(rt.lim.maxBytes, headID(head)))
			return
		}
		writeRPCError(w, http.StatusBadRequest, errInvalid(nil, "the request body could not be read"))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	msg, werr := decodeMessage(body, rt.lim)
	if werr != nil {
		rt.log.Debug("refused a malformed message", "code", werr.code, "reason", werr.message, "remote", r.RemoteAddr)
		writeRPCError(w, http.StatusBadRequest, werr)
		return
	}
	req, isRequest := msg.(*jsonrpc.Request)
	var id json.RawMessage
	if isRequest {
		id = rawID(req.ID)
	}
	if version != "" && version < statelessProtocol && !slices.Contains(mcp.SupportedProtocolVersions(), version) {
		writeRPCError(w, http.StatusBadRequest, errInvalid(id, "unsupported "+headerProtocolVersion+" "+version+"; supported: "+strings.Join(mcp.SupportedProtocolVersions(), ", ")))
		return
	}
	if isRequest {
		if mv := metaProtocolVersion(req.Params); version != "" && mv != "" && mv != version && req.Method == "server/discover" {
			writeRPCError(w, http.StatusBadRequest, &wireError{id: id, code: mcp.CodeHeaderMismatch,
				message: fmt.Sprintf("the %s header %q does not match the request's _meta protocol version %q", headerProtocolVersion, version, mv)})
			return
		}
		if werr := checkDiscover(req, id); werr != nil {
			writeRPCError(w, http.StatusBadRequest, werr)
			return
		}
	}
	if session == "" {
		switch {
		case isRequest && (version >= statelessProtocol || metaProtocolVersion(req.Params) >= statelessProtocol || req.Method == "server/discover"):
			rt.stateless.ServeHTTP(w, r)
		case isRequest && req.Method == "initialize":
			rt.stateful.ServeHTTP(w, r)
		default:
			writeRPCError(w, http.StatusBadRequest, errInvalid(id,
				"no "+headerSessionID+": send initialize first to open a session, or speak MCP 2026-07-28 (per-request _meta, no session)"))
		}
		return
	}
	if isRequest && req.Method == "notifications/cancelled" {
		rt.calls.cancel(session, req.Params)
	}
	if isRequest && req.IsCall() {
		key := session + "\x00" + idKey(req.ID)
		fl, ok := rt.calls.start(key)
		if !ok {
			writeRPCError(w, http.StatusBadRequest, errInvalid(id, "the id of a request still in flight in this session was reused"))
			return
		}
		defer rt.calls.end(key)
		w = &cancelFilter{ResponseWriter: w, fl: fl, id: req.ID}
	}
	rt.stateful.ServeHTTP(w, r)
}

// writeRPCError answers with a JSON-RPC error body and status.
func writeRPCError(w http.ResponseWriter, status int, e *wireError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(e.encode())
}

// inflightCalls are the calls of 2025-11-25 sessions being answered, by
// session and id.
type inflightCalls struct {
	mu sync.Mutex
	m  map[string]*inflight
}

type inflight struct {
	mu        sync.Mutex
	cancelled bool
}

func (c *inflightCalls) start(key string) (*inflight, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, busy := c.m[key]; busy {
		return nil, false
	}
	fl := &inflight{}
	c.m[key] = fl
	return fl, true
}

func (c *inflightCalls) end(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

func (c *inflightCalls) cancel(session string, params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	c.mu.Lock()
	fl := c.m[session+"\x00"+idKey(id)]
	c.mu.Unlock()
	if fl != nil {
		fl.mu.Lock()
		fl.cancelled = true
		fl.mu.Unlock()
	}
}

// cancelFilter passes a call's event stream through, except the response
// to the call once it has been cancelled.
type cancelFilter struct {
	http.ResponseWriter
	fl  *inflight
	id  jsonrpc.ID
	buf []byte
}

func (f *cancelFilter) Write(p []byte) (int, error) {
	if !strings.HasPrefix(f.Header().Get("Content-Type"), "text/event-stream") {
		return f.ResponseWriter.Write(p)
	}
	f.buf = append(f.buf, p...)
	for {
		i := bytes.Index(f.buf, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		event := f.buf[:i+2]
		if !f.drop(event) {
			if _, err := f.ResponseWriter.Write(event); err != nil {
				return 0, err
			}
		}
		f.buf = f.buf[i+2:]
	}
}

// drop reports whether an event is the response to the call, cancelled.
func (f *cancelFilter) drop(event []byte) bool {
	f.fl.mu.Lock()
	cancelled := f.fl.cancelled
	f.fl.mu.Unlock()
	if !cancelled {
		return false
	}
	for _, line := range bytes.Split(event, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data))
		if err != nil {
			continue
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == f.id {
			return true
		}
	}
	return false
}

// Flush passes flushes on (the SDK flushes after every event).
func (f *cancelFilter) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (f *cancelFilter) Unwrap() http.ResponseWriter { return f.ResponseWriter }
