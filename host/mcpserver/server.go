package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/connector"
	"apconnect/host/engine"
	"apconnect/host/wake"
)

// Defaults of Options.
const (
	// DefaultChangePoll is how often subscribed resources are checked for
	// changes (they are also checked right after every tool call).
	DefaultChangePoll = 250 * time.Millisecond
	// DefaultProgressPoll is how often a long sync reports its progress to
	// a client that asked for it with a progress token.
	DefaultProgressPoll = 100 * time.Millisecond
)

// Options configure New.
type Options struct {
	// Version is the server version announced in serverInfo ("dev" when
	// empty).
	Version string
	// Logger receives the server's diagnostics (discarded when nil). The
	// go-sdk's own logs are passed through at warning level and above only.
	// Nothing is ever logged to the MCP client: the deprecated MCP logging
	// capability is not offered (SEP-2577).
	Logger *slog.Logger
	// SessionID names the connector session of an MCP session: presented
	// heads and inbox claims are kept per connector session. By default a
	// Streamable HTTP session is "http:<Mcp-Session-Id>" and any other
	// session (stdio, in-memory) gets a random "mcp:<hex>" id of its own.
	SessionID func(ss *mcp.ServerSession) connector.SessionID
	// ChangePoll paces resource change checks (DefaultChangePoll when 0).
	ChangePoll time.Duration
	// ProgressPoll paces sync progress notifications (DefaultProgressPoll
	// when 0).
	ProgressPoll time.Duration
	// StrictOutput turns a tool result that does not match the tool's
	// output schema into an invalid_output error result. It is for tests:
	// by default such a result is logged and returned as it is, because the
	// call may already have signed and submitted a write.
	StrictOutput bool
	// Wake is the process's waking service: with Claude Code channel mode
	// on, the server declares experimental["claude/channel"] and the
	// connections of a ChannelTransport carry its notifications.
	Wake *wake.Service
}

// server is the state behind one *mcp.Server.
type server struct {
	conn *connector.Connector
	srv  *mcp.Server
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*sessionState
	// perClient holds the state of stateless (2026-07-28) HTTP clients,
	// which outlives the one-request SDK sessions that share it.
	perClient map[connector.SessionID]*sessionState

	watch *watcher

	// toolIO, when not nil, receives each tool's Go input and result types
	// as the handler table is built (the schema consistency test sets it).
	toolIO map[string]toolIO
}

// sessionState is what the server keeps per MCP session.
type sessionState struct {
	id connector.SessionID
	// mu serializes the calls of one session that present a room head or
	// write on one: a write's default base is the head most recently
	// presented to the session, so the two must not interleave.
	mu sync.Mutex
}

// New builds the MCP server of a connector: the instructions, the
// catalog tools (plus the connector's plugin tools, named <plugin>_<tool>),
// fourteen agent-protocols:// resources with subscriptions, and progress
// notifications for long syncs. Capabilities are explicit: tools and
// resources (with subscribe) only — no logging, sampling, roots or prompts.
//
// The server may serve any number of sessions at once (one over stdio,
// many over Streamable HTTP); each session gets its own connector
// SessionID, so presented heads are never shared between sessions.
func New(conn *connector.Connector, opts Options) *mcp.Server {
	return newServer(conn, opts).srv
}

func newServer(conn *connector.Connector, opts Options) *server {
	if conn == nil {
		panic("mcpserver: New needs a connector")
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ChangePoll <= 0 {
		opts.ChangePoll = DefaultChangePoll
	}
	if opts.ProgressPoll <= 0 {
		opts.ProgressPoll = DefaultProgressPoll
	}
	s := &server{conn: conn, opts: opts, log: opts.Logger, sessions: map[*mcp.ServerSession]*sessionState{},
		perClient: map[connector.SessionID]*sessionState{}}
	s.watch = newWatcher(s)
	s.srv = mcp.NewServer(&mcp.Implementation{
		Name:    "apconnect",
		Title:   "apconnect: Agent Protocols connector",
		Version: opts.Version,
	}, &mcp.ServerOptions{
		Instructions: conn.Instructions(),
		Logger:       slog.New(minLevel{h: opts.Logger.Handler(), min: slog.LevelWarn}),
		Capabilities: &mcp.ServerCapabilities{
			Tools:        &mcp.ToolCapabilities{},
			Resources:    &mcp.ResourceCapabilities{Subscribe: true},
			Experimental: channelCapabilities(opts.Wake),
		},
		SubscribeHandler:   s.watch.subscribe,
		UnsubscribeHandler: s.watch.unsubscribe,
	})
	s.srv.AddReceivingMiddleware(s.codeMiddleware, s.statelessMiddleware, s.recoverMiddleware)
	if err := AddCatalog(s.srv, s.handlers()); err != nil {
		panic(err) // a handler table that misses a catalog tool is a build bug
	}
	s.addPluginTools()
	s.addResources()
	return s
}

// session returns the state of an MCP session, creating it on first use.
func (s *server) session(ss *mcp.ServerSession) *sessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.sessions[ss]; ok {
		return st
	}
	// Forget sessions that are gone before adding one.
	if len(s.sessions) > 0 {
		live := map[*mcp.ServerSession]bool{}
		for l := range s.srv.Sessions() {
			live[l] = true
		}
		for k := range s.sessions {
			if !live[k] {
				delete(s.sessions, k)
			}
		}
	}
	st := &sessionState{id: s.sessionID(ss)}
	s.sessions[ss] = st
	return st
}

// Presented heads without a session.
//
// Over stateless (2026-07-28) HTTP every request is a session of its own
// in the SDK, and the protocol gives the server nothing that names one
// client instance: no session id, only what the request's _meta says
// (io.modelcontextprotocol/clientInfo: name and version) and the bearer
// token, which every local client shares. The connector session of such a
// request is therefore the client program: "http-stateless:" and a hash of
// clientInfo's name and version (a request without clientInfo counts as
// one anonymous client). Heads presented to a request are the base of the
// next write of the same client, across requests; clients with another
// name or version never see them. Two running instances of one client
// program share them — a client that must keep them apart speaks
// 2025-11-25 (one session each) or uses `apconnect mcp` over stdio.

// statelessMiddleware binds a stateless HTTP request's SDK session to its
// client's connector session before any handler asks for it.
func (s *server) statelessMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() == "" {
			if ex := req.GetExtra(); ex != nil && ex.Header != nil {
				s.bindClient(ss)
			}
		}
		return next(ctx, method, req)
	}
}

// statelessClientID is the connector session of a stateless HTTP client.
func statelessClientID(info *mcp.Implementation) connector.SessionID {
	name, version := "", ""
	if info != nil {
		name, version = info.Name, info.Version
	}
	sum := sha256.Sum256([]byte(name + "\x00" + version))
	return connector.SessionID("http-stateless:" + hex.EncodeToString(sum[:12]))
}

func (s *server) bindClient(ss *mcp.ServerSession) {
	var info *mcp.Implementation
	if ip := ss.InitializeParams(); ip != nil {
		info = ip.ClientInfo
	}
	id := statelessClientID(info)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[ss]; ok {
		return
	}
	st, ok := s.perClient[id]
	if !ok {
		st = &sessionState{id: id}
		s.perClient[id] = st
	}
	s.sessions[ss] = st
}

func (s *server) sessionID(ss *mcp.ServerSession) connector.SessionID {
	if s.opts.SessionID != nil {
		if id := s.opts.SessionID(ss); id != "" {
			return id
		}
	}
	if ss != nil {
		if id := ss.ID(); id != "" {
			return connector.SessionID("http:" + id)
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return connector.SessionID("mcp:" + hex.EncodeToString(b[:]))
}

// recoverMiddleware turns a panic anywhere below into an error the client
// sees (a tool error result for tools/call), so no input can crash the
// process.
func (s *server) recoverMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic while handling an MCP request", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				if method == "tools/call" {
					res, err = internalErrorResult(), nil
					return
				}
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error while handling " + method}
			}
		}()
		return next(ctx, method, req)
	}
}

// notOffered are the methods of capabilities the server does not declare:
// they are answered -32601, so what a client is told in initialize or
// server/discover matches what it gets (the SDK would serve empty prompt
// lists).
var notOffered = map[string]bool{"prompts/list": true, "prompts/get": true, "completion/complete": true}

// codeMiddleware gives every error a standard JSON-RPC or MCP code: a
// method of a capability not offered is -32601, a missing resource is
// -32002 up to 2025-11-25 and -32602 from 2026-07-28 on (SEP-2164), both
// with the URI in data, and an error a handler returned without a code is
// -32600 for initialize (a repeated handshake) and -32603 otherwise.
func (s *server) codeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if notOffered[method] {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q (apconnect offers no prompts or completions)", method)}
		}
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		var we *jsonrpc.Error
		switch {
		case errors.As(err, &we) && isResourceNotFound(we):
			code := int64(codeResourceNotFound)
			if requestVersion(req) >= statelessProtocol {
				code = jsonrpc.CodeInvalidParams
			}
			return nil, &jsonrpc.Error{Code: code, Message: we.Message, Data: we.Data}
		case we != nil && we.Code != 0:
			return nil, err
		case method == "initialize":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the request was cancelled: " + err.Error()}
		default:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
	}
}

// isResourceNotFound recognizes mcp.ResourceNotFoundError (the SDK gives it
// -32602 at every version).
func isResourceNotFound(we *jsonrpc.Error) bool {
	return (we.Code == jsonrpc.CodeInvalidParams || we.Code == codeResourceNotFound) && we.Message == "Resource not found"
}

// requestVersion is the protocol version a request follows: its own _meta
// (2026-07-28), else its session's negotiated version.
func requestVersion(req mcp.Request) string {
	if p := req.GetParams(); p != nil {
		if v, ok := p.GetMeta()[mcp.MetaKeyProtocolVersion].(string); ok && v != "" {
			return v
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			return ip.ProtocolVersion
		}
	}
	return ""
}

func internalErrorResult() *mcp.CallToolResult {
	return ErrorResult(engine.CodeInternal, "the connector failed while handling this call; the failure was logged", nil)
}

// minLevel drops records below min (the go-sdk logs every session and
// notification at info level).
type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h: m.h.WithAttrs(a), min: m.min}
}
func (m minLevel) WithGroup(g string) slog.Handler { return minLevel{h: m.h.WithGroup(g), min: m.min} }
