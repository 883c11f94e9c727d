package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"apconnect/host/connector"
	"apconnect/host/mcpserver"
)

// serveHelp is serve's long help text.
const serveHelp = `Serves the same MCP connector as "apconnect mcp" over Streamable HTTP at
http://ADDR/mcp, for clients that connect to a URL rather than start a
process. It binds 127.0.0.1 or ::1 only (anything else is refused): --listen,
else [http] listen in config.toml (default 127.0.0.1:8765).

Binding loopback is not authentication, so every request must present the
bearer token of the home's token file ([http] token_file, default
http.token): "Authorization: Bearer <token>". The token is generated (256
random bits, mode 0600) the first time serve runs, and its path is printed;
it is compared in constant time. Requests whose Host header is not the
loopback listener (DNS rebinding) and browser requests from a non-loopback
Origin are refused with 403.

It speaks MCP 2025-11-25 (and earlier) in stateful sessions, each with its
own presented room heads (Mcp-Session-Id), and MCP 2026-07-28 statelessly:
no session, and presented heads kept per client program (the clientInfo
name and version each request carries). Malformed requests get a JSON-RPC
error with the Streamable HTTP status (400, 404, 413).

Connections are limited: headers must arrive within 5 s, idle keep-alive
connections close after 60 s, and at most 64 connections are kept (fewer
under a low file descriptor limit); when full, the oldest connection that
never presented the token is closed first, so idle connections of other
local processes cannot lock the token holder out.

While it runs, whether or not a client is connected, it keeps the rooms the
agent is in live and runs the [wake] background work: the [[wake.command]]s
for new inbox items and the periodic syncs ([mail] sync_interval). It stops
cleanly on SIGINT or SIGTERM.`

func init() {
	register(&command{
		name:    "serve",
		summary: "serve the tools over Streamable HTTP on loopback, behind a bearer token",
		usage:   "serve [--home DIR] [--agent NAME] [--listen 127.0.0.1:PORT] [--log-level LEVEL]",
		detail:  serveHelp,
		example: `apconnect serve --home ~/.config/apconnect --listen 127.0.0.1:8765
claude mcp add --transport http apconnect http://127.0.0.1:8765/mcp \
    --header "Authorization: Bearer $(cat ~/.config/apconnect/http.token)"`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			agent := agentFlag(fs)
			listen := fs.String("listen", "", "loopback address to listen on: 127.0.0.1:PORT or [::1]:PORT (default: [http] listen of the config)")
			level := logLevelFlag(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"serve takes no arguments"}
				}
				logger, err := newLogger(e.stderr, *level)
				if err != nil {
					return err
				}
				if *listen != "" {
					if err := mcpserver.CheckListen(*listen); err != nil {
						return usageError{err.Error()}
					}
				}
				go mcpserver.Preload()
				a, err := openAgent(ctx, *home, *agent, logger, true)
				if err != nil {
					return err
				}
				defer a.close()
				addr := *listen
				if addr == "" {
					addr = a.cfg.HTTP.Listen
				}
				if err := mcpserver.CheckListen(addr); err != nil {
					return err
				}
				tokenFile := a.cfg.TokenFile()
				token, created, err := mcpserver.LoadToken(tokenFile, true)
				if err != nil {
					return err
				}
				ln, err := net.Listen("tcp", addr)
				if err != nil {
					return err
				}
				srv := mcpserver.New(a.conn, mcpserver.Options{Version: versionString(), Logger: logger})
				h, err := mcpserver.HTTPHandler(srv, mcpserver.HTTPOptions{Addr: ln.Addr().String(), Token: token, Logger: logger})
				if err != nil {
					ln.Close()
					return err
				}
				hb, stopBeat := a.beat(ctx, srv, connector.ProcessInfo{Command: "serve", Transport: "http", Addr: ln.Addr().String()})
				defer stopBeat()
				ov, h, err := startView(e, a, ln, token, hb.ID(), h)
				if err != nil {
					ln.Close()
					return err
				}
				defer ov.close()
				a.conn.Start(ctx)
				defer a.reportPlugins(ctx, "serve")()
				defer a.startWake(ctx, "serve").Close()
				hs, capped := mcpserver.NewHTTPServer(ln, h, mcpserver.ServeLimits{Logger: logger})
				hs.BaseContext = func(net.Listener) context.Context { return ctx }
				fmt.Fprintf(e.stdout, "apconnect serve listening on http://%s%s as %s (%s)\n", ln.Addr(), mcpserver.HTTPPath, a.ident.Name, a.conn.AgentID())
				note := ""
				if created {
					note = " (created now, mode 0600)"
				}
				fmt.Fprintf(e.stdout, "bearer token file: %s%s\n", tokenFile, note)
				logger.Info("serving MCP over loopback HTTP", "addr", ln.Addr().String(), "identity", a.ident.Name)
				errc := make(chan error, 1)
				go func() { errc <- hs.Serve(capped) }()
				select {
				case err := <-errc:
					return err
				case <-ctx.Done():
				}
				sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				if err := hs.Shutdown(sctx); err != nil {
					hs.Close() // open event streams do not end by themselves
				}
				if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
					return err
				}
				logger.Info("stopped")
				return nil
			}
		},
	})
}
