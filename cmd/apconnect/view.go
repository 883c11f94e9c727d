package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"

	"apconnect/host/mcpserver"
	"apconnect/host/opview"
)

func init() {
	register(&command{
		name:    "view",
		summary: "print a login URL for the operator's live view of a running serve",
		usage:   "view [--home DIR] [--agent NAME] [--open]",
		detail: `Prints, on stderr, a fresh "operator view: URL" line for the apconnect serve
of the identity running from this home (--agent, else the default identity):
the URL of its read-only live view, with a one-time login token in its query.
Opening it logs the browser in (an HttpOnly, SameSite=Strict cookie) and
removes the token from the address bar; the token then opens nothing a
second time, and an unused one expires after an hour.

serve records its address and pid in the home's state directory, one file
per identity (state/serve/<identity>.json); view reads it and asks that serve
for the URL with the home's bearer token ([http] token_file). With --open it
also opens the URL in the desktop's browser.`,
		example: `apconnect view --home ~/.config/apconnect --agent default --open`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			agent := agentFlag(fs)
			open := fs.Bool("open", false, "also open the URL in the desktop's browser")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"view takes no arguments"}
				}
				return runView(ctx, e, *home, *agent, *open)
			}
		},
	})
}

// runView finds the identity's running serve and prints a login URL.
func runView(ctx context.Context, e *env, home, agent string, open bool) error {
	cfg, err := loadConfig(home)
	if err != nil {
		return err
	}
	ident, err := cfg.Identity(agent)
	if err != nil {
		return err
	}
	rec, err := opview.ReadRecord(cfg.StateDir(), ident.Name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no apconnect serve is running for identity %s in %s (start one with `apconnect serve --agent %s`)", ident.Name, cfg.Home(), ident.Name)
	}
	if err != nil {
		return err
	}
	token, _, err := mcpserver.LoadToken(cfg.TokenFile(), false)
	if err != nil {
		return err
	}
	ans, err := opview.RequestLogin(ctx, rec.Addr, token)
	if errors.Is(err, opview.ErrNotRunning) {
		return fmt.Errorf("the apconnect serve of identity %s recorded at %s (pid %d) does not answer; start it again: %w", ident.Name, rec.Addr, rec.PID, err)
	}
	if err != nil {
		return err
	}
	if ans.Identity != ident.Name {
		return fmt.Errorf("the process at %s serves identity %q, not %s: its serve record is out of date", rec.Addr, ans.Identity, ident.Name)
	}
	fmt.Fprintf(e.stderr, "operator view: %s\n", ans.URL)
	if open {
		if err := openBrowser(ans.URL); err != nil {
			return fmt.Errorf("opening a browser: %w (open the URL above yourself)", err)
		}
	}
	return nil
}

// openBrowser opens url with the desktop's handler.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// operatorView is serve's view: its handler, with the MCP endpoint routed
// beside it, and the record that lets `apconnect view` find it.
type operatorView struct {
	view  *opview.Handler
	a     *agentProcess
	owned bool
}

// startView builds the view of a's identity for the listener ln, routes
// mcp beside it, records the listener in the home and prints the first
// login URL on stderr.
func startView(e *env, a *agentProcess, ln net.Listener, token, self string, mcpHandler http.Handler) (*operatorView, http.Handler, error) {
	v, err := opview.New(opview.FromConnector(a.conn, self), opview.Options{Addr: ln.Addr().String(), Bearer: token,
		Identity: a.ident.Name, AgentID: a.conn.AgentID(), Logger: a.log, OnAuthenticated: mcpserver.MarkAuthenticated})
	if err != nil {
		return nil, nil, err
	}
	ov := &operatorView{view: v, a: a}
	rec := opview.Record{PID: os.Getpid(), Addr: ln.Addr().String(), Identity: a.ident.Name, AgentID: a.conn.AgentID(),
		StartedAt: e.now().UnixMilli()}
	if err := opview.WriteRecord(a.cfg.StateDir(), rec); err != nil {
		a.log.Warn("recording the serve address for `apconnect view`", "err", err)
	} else {
		ov.owned = true
	}
	fmt.Fprintf(e.stderr, "operator view: %s\n", v.LoginURL())
	return ov, opview.Route(mcpserver.HTTPPath, mcpHandler, v), nil
}

// close removes the record when it is still this process's.
func (ov *operatorView) close() {
	if ov.owned {
		_ = opview.RemoveRecord(ov.a.cfg.StateDir(), ov.a.ident.Name, os.Getpid())
	}
}
