package main

import (
	"context"

	"apconnect/host/wake"
)

// startWake starts the process's background waking (host/wake): the
// [[wake.command]] runners and the modules' periodic syncs, shared with
// the identity's other processes through leases in its store. Close the
// service before the connector.
func (a *agentProcess) startWake(ctx context.Context, process string) *wake.Service {
	w := wake.New(a.conn, wake.Options{Process: process, Logger: a.log})
	w.Start(ctx)
	if n := len(a.cfg.Wake.Commands); n > 0 || a.cfg.Wake.ClaudeChannel {
		a.log.Info("waking the agent", "commands", n, "claude_channel", a.cfg.Wake.ClaudeChannel, "kinds", a.cfg.Wake.Kinds, "holder", w.Holder())
	}
	return w
}
