package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"apconnect/host/store"
)

// Process heartbeats (host/store ops.go): every process that runs the
// connector of the Agent ID keeps a row saying it is alive, what serves it
// and what it last did, so that the operator's view lists them and shows a
// process that stopped beating as stale rather than online.

// DefaultHeartbeatInterval is how often a heartbeat is rewritten when
// nothing else changes.
const DefaultHeartbeatInterval = 5 * time.Second

// How long heartbeat rows are kept: a day for processes that vanished
// without a clean exit (the view shows them stale), an hour for those that
// exited (the view lists the recent ones).
const (
	stalePrune   = 24 * time.Hour
	stoppedPrune = time.Hour
)

// ProcessInfo describes a connector process for its heartbeat.
type ProcessInfo struct {
	// Command is the apconnect command: serve, mcp or call.
	Command string
	// Transport is how its MCP clients reach it: http, stdio or cli.
	Transport string
	// Addr is serve's loopback listener ("" for the others).
	Addr string
	// Interval paces the heartbeat (DefaultHeartbeatInterval when 0).
	Interval time.Duration
}

// Heartbeat keeps this process's row current. Its methods are safe for
// concurrent use; Client and Called only mark the row for the next write
// (at most a second later), so a busy client does not write on every call.
type Heartbeat struct {
	c     *Connector
	mu    sync.Mutex
	row   store.Heartbeat
	dirty bool

	cancel context.CancelFunc
	done   chan struct{}
}

// StartHeartbeat writes the process's first heartbeat (pruning the rows of
// processes gone for a day, or exited for an hour) and keeps it current
// until Stop. A failed write
// is logged and tried again at the next beat; it never stops the process.
func (c *Connector) StartHeartbeat(ctx context.Context, p ProcessInfo) *Heartbeat {
	if p.Interval <= 0 {
		p.Interval = DefaultHeartbeatInterval
	}
	host, _ := os.Hostname()
	now := c.engine.NowMS()
	pid := os.Getpid()
	hb := &Heartbeat{c: c, row: store.Heartbeat{
		ID: fmt.Sprintf("%s/%d/%d", host, pid, now), PID: int64(pid), Hostname: host, Command: p.Command,
		Transport: p.Transport, Identity: c.engine.Ident.Name, Addr: p.Addr, StartedAt: now,
		IntervalMS: p.Interval.Milliseconds(),
	}, done: make(chan struct{})}
	_ = c.engine.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.PruneHeartbeats(ctx, now-stalePrune.Milliseconds(), now-stoppedPrune.Milliseconds())
		return err
	})
	hb.write(ctx, false)
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	hb.cancel = cancel
	go hb.run(bctx, p.Interval)
	return hb
}

// ID is the heartbeat row's id (the process's).
func (h *Heartbeat) ID() string { return h.row.ID }

// Client records the MCP client's name and version (its clientInfo).
func (h *Heartbeat) Client(name, version string) {
	h.mu.Lock()
	if h.row.ClientName != name || h.row.ClientVersion != version {
		h.row.ClientName, h.row.ClientVersion = name, version
		h.dirty = true
	}
	h.mu.Unlock()
}

// Called records a tool call.
func (h *Heartbeat) Called(tool string) {
	h.mu.Lock()
	h.row.LastCall, h.row.LastCallAt = tool, h.c.engine.NowMS()
	h.row.Calls++
	h.dirty = true
	h.mu.Unlock()
}

// Stop ends the heartbeat and records a clean exit.
func (h *Heartbeat) Stop() {
	h.cancel()
	<-h.done
	h.write(context.Background(), true)
}

func (h *Heartbeat) run(ctx context.Context, interval time.Duration) {
	defer close(h.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := time.Now()
	var streams []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s := h.streams()
		h.mu.Lock()
		due := h.dirty || string(s) != string(streams) || time.Since(last) >= interval-500*time.Millisecond
		h.mu.Unlock()
		if due {
			streams = s
			h.write(ctx, false)
			last = time.Now()
		}
	}
}

// streams returns this process's live-stream states as JSON.
func (h *Heartbeat) streams() []byte {
	states := h.c.discourse.StreamStates()
	if len(states) == 0 {
		return nil
	}
	b, _ := json.Marshal(states)
	return b
}

// write stores the row (stopped: with the exit time).
func (h *Heartbeat) write(ctx context.Context, stopped bool) {
	streams := h.streams()
	h.mu.Lock()
	h.row.BeatAt = h.c.engine.NowMS()
	h.row.Streams = streams
	if stopped {
		h.row.StoppedAt, h.row.Streams = h.row.BeatAt, nil
	}
	h.dirty = false
	row := h.row
	h.mu.Unlock()
	if err := h.c.engine.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutHeartbeat(ctx, &row) }); err != nil && ctx.Err() == nil {
		h.c.engine.Log.Warn("writing the process heartbeat", "err", err)
	}
}
