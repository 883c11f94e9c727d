package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/wake"
)

// Claude Code channel mode.
//
// With [wake] claude_channel on, the server declares the experimental
// capability claude/channel (Options.Wake) and sends each new inbox item of
// the [wake] kinds to its client as a notifications/claude/channel
// notification (wake.Service.Announce decides which, when and what it
// says: a pointer written by apconnect, string meta).
//
// The go-sdk sends only the notifications of the MCP specification through
// a session (its sending method table is closed), so a channel
// notification is written on the session's connection itself:
// ChannelTransport wraps the transport, and its connection, once the
// client has sent notifications/initialized, writes the notifications as
// JSON-RPC notifications beside the SDK's traffic (an mcp.Connection
// accepts concurrent writes). It is meant for stdio, where Claude Code
// runs channel servers: one connection, one session. A stateless
// (2026-07-28) client sends no notifications/initialized and gets no
// channel notifications.

// channelCapabilities is the experimental capability the server declares
// (nil when channel mode is off).
func channelCapabilities(w *wake.Service) map[string]any {
	if w == nil || !w.Channel() {
		return nil
	}
	return map[string]any{wake.ChannelCapability: map[string]any{}}
}

// ChannelTransport returns t, wrapped so that each of its connections
// carries the channel notifications of w once its client is initialized,
// until the connection closes; t itself when channel mode is off.
func ChannelTransport(t mcp.Transport, w *wake.Service, log *slog.Logger) mcp.Transport {
	if w == nil || !w.Channel() {
		return t
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &channelTransport{Transport: t, w: w, log: log}
}

type channelTransport struct {
	mcp.Transport
	w   *wake.Service
	log *slog.Logger
}

// Connect implements mcp.Transport.
func (t *channelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &channelConn{Connection: c, t: t, ctx: cctx, cancel: cancel}, nil
}

// channelConn is a connection that starts announcing when its client sends
// notifications/initialized.
type channelConn struct {
	mcp.Connection
	t      *channelTransport
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
}

// Read implements mcp.Connection.
func (c *channelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.cancel()
		return msg, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/initialized" {
		c.once.Do(func() { go c.announce() })
	}
	return msg, nil
}

// Close implements mcp.Connection.
func (c *channelConn) Close() error {
	c.cancel()
	return c.Connection.Close()
}

// announce writes the session's channel notifications until the connection
// closes.
func (c *channelConn) announce() {
	err := c.t.w.Announce(c.ctx, func(ctx context.Context, n wake.Notification) error {
		params, err := json.Marshal(n)
		if err != nil {
			return err
		}
		return c.Connection.Write(ctx, &jsonrpc.Request{Method: wake.ChannelMethod, Params: params})
	})
	if err != nil && c.ctx.Err() == nil {
		c.t.log.Debug("channel notifications stopped", "err", err)
	}
}
