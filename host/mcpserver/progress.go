package mcpserver

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/engine"
)

// Progress of long syncs.
//
// room_open, room_state with refresh and room_timeline with refresh may
// read a room's whole history from its host. When the client sent a
// progress token with such a call, the server reports how far the local
// verified copy has come while the call runs: progress is the room's latest
// verified seq, total the latest seq the host advertised. The connector
// applies history a page at a time, each page in one transaction, so the
// figures come from the local state the sync is writing; nothing is asked of
// the engine. A final notification is sent before the result when the
// last one did not already report the final position.

// withProgress runs fn, reporting its progress to the client when the
// request carries a progress token.
func (s *server) withProgress(ctx context.Context, req *mcp.CallToolRequest, pos engine.ProgressFunc, fn func() error) error {
	if req == nil || req.Params == nil || req.Session == nil {
		return fn()
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return fn()
	}
	notify := func(ctx context.Context, p *mcp.ProgressNotificationParams) error {
		p.ProgressToken = token
		return req.Session.NotifyProgress(ctx, p)
	}
	return reportProgress(ctx, s.opts.ProgressPoll, pos, notify, fn)
}

// reportProgress polls pos every interval while fn runs and sends a
// notification each time the position advanced, then a last one when fn is
// done. Progress values only ever increase.
func reportProgress(ctx context.Context, interval time.Duration, pos engine.ProgressFunc,
	notify func(context.Context, *mcp.ProgressNotificationParams) error, fn func() error) error {
	var mu sync.Mutex
	last := int64(-1)
	send := func(final bool) {
		done, total, msg, ok := pos(ctx, final)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if done <= last {
			return
		}
		if err := notify(ctx, &mcp.ProgressNotificationParams{Progress: float64(done), Total: float64(total), Message: msg}); err == nil {
			last = done
		}
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				send(false)
			}
		}
	}()
	err := fn()
	close(stop)
	<-finished
	if err == nil {
		send(true)
	}
	return err
}
