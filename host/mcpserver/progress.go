package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// syncPosition is where a room's local copy stands.
type syncPosition struct {
	synced, remote int64
}

// positionFunc reads a room's sync position (ok false while the room is not
// known locally yet).
type positionFunc func(ctx context.Context) (pos syncPosition, ok bool, err error)

// withProgress runs fn, reporting the room's sync progress to the client
// when the request carries a progress token.
func (s *server) withProgress(ctx context.Context, req *mcp.CallToolRequest, host, roomID string, fn func() error) error {
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
	return reportProgress(ctx, s.opts.ProgressPoll, s.roomPosition(host, roomID), roomID, notify, fn)
}

// reportProgress polls pos every interval while fn runs and sends a
// notification each time the position advanced, then a last one when fn is
// done. Progress values only ever increase.
func reportProgress(ctx context.Context, interval time.Duration, pos positionFunc, roomID string,
	notify func(context.Context, *mcp.ProgressNotificationParams) error, fn func() error) error {
	var mu sync.Mutex
	last := int64(-1)
	send := func(final bool) {
		p, ok, err := pos(ctx)
		if err != nil || !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if p.synced <= last {
			return
		}
		total := max(p.remote, p.synced)
		msg := fmt.Sprintf("verified %d of %d records of room %s", p.synced, total, roomID)
		if final {
			msg = fmt.Sprintf("room %s synced: %d records verified", roomID, p.synced)
		}
		if err := notify(ctx, &mcp.ProgressNotificationParams{Progress: float64(p.synced), Total: float64(total), Message: msg}); err == nil {
			last = p.synced
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
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
	<-done
	if err == nil {
		send(true)
	}
	return err
}

// roomPosition reads a room's position from local state: by host and id,
// or by id alone when exactly one configured host knows the room.
func (s *server) roomPosition(host, roomID string) positionFunc {
	return func(ctx context.Context) (syncPosition, bool, error) {
		synced, remote, ok, err := s.conn.SyncPosition(ctx, host, roomID)
		return syncPosition{synced: synced, remote: remote}, ok, err
	}
}
