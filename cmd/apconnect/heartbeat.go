package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/connector"
)

// beat starts this process's heartbeat in the identity's store (the
// operator's view lists every connector process from them) and makes srv,
// when given, report its MCP client and tool calls to it (watchCalls). The
// heartbeat stops, recording a clean exit, when the returned function is
// called.
func (a *agentProcess) beat(ctx context.Context, srv *mcp.Server, p connector.ProcessInfo) (*connector.Heartbeat, func()) {
	hb := a.conn.StartHeartbeat(ctx, p)
	watchCalls(srv, hb)
	return hb, hb.Stop
}

// watchCalls makes srv report its MCP client and tool calls to hb.
func watchCalls(srv *mcp.Server, hb *connector.Heartbeat) {
	if srv != nil && hb != nil {
		srv.AddReceivingMiddleware(heartbeatMiddleware(hb))
	}
}

// heartbeatMiddleware records the client's clientInfo and each tool call.
func heartbeatMiddleware(hb *connector.Heartbeat) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil && p.ClientInfo != nil {
				hb.Client(p.ClientInfo.Name, p.ClientInfo.Version)
			} else if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
				if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
					hb.Client(ip.ClientInfo.Name, ip.ClientInfo.Version)
				}
			}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil && method == "tools/call" {
				hb.Called(p.Name)
			}
			return next(ctx, method, req)
		}
	}
}
