package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Connection limits of the loopback HTTP listener.
//
// Any local process can connect to the listener, token or not. Without
// limits, idle connections are kept forever and each holds a file
// descriptor, so a few hundred of them exhaust the process's descriptors
// and the token holder's connection is never accepted. The listener
// therefore caps the connections it keeps open, and when it is full it
// makes room for a new connection by closing, oldest first:
//
//  1. a connection that has never carried a request with the right bearer
//     token (idle, or stalled in the middle of its headers), then
//  2. an idle keep-alive connection of the token holder.
//
// A connection that is serving the token holder (a call in flight, an
// event stream) is never closed to make room; when every connection is
// one, the new connection is refused. Unauthenticated clients cannot hold
// a connection against that order, and a refused request closes its
// connection (Connection: close), so the token holder always gets in while
// the cap is below the descriptor limit. Headers must arrive within
// ReadHeaderTimeout, and idle keep-alive connections close after
// IdleTimeout.

// Defaults of ServeLimits.
const (
	DefaultMaxConns          = 64
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

// ServeLimits bound the HTTP server of NewHTTPServer.
type ServeLimits struct {
	// MaxConns caps open connections (DefaultMaxConns when 0, lowered to
	// fit the process's file descriptor limit).
	MaxConns int
	// ReadHeaderTimeout bounds how long a request's headers may take
	// (DefaultReadHeaderTimeout when 0).
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long
	// (DefaultIdleTimeout when 0).
	IdleTimeout time.Duration
	// Logger receives evictions and refusals at debug level.
	Logger *slog.Logger
}

// NewHTTPServer returns an http.Server for h with the limits applied, and
// the listener to serve it on (ln, capped).
func NewHTTPServer(ln net.Listener, h http.Handler, lim ServeLimits) (*http.Server, net.Listener) {
	if lim.MaxConns <= 0 {
		lim.MaxConns = fitDescriptors(DefaultMaxConns)
	}
	if lim.ReadHeaderTimeout <= 0 {
		lim.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if lim.IdleTimeout <= 0 {
		lim.IdleTimeout = DefaultIdleTimeout
	}
	if lim.Logger == nil {
		lim.Logger = slog.New(slog.DiscardHandler)
	}
	cl := &capListener{Listener: ln, max: lim.MaxConns, log: lim.Logger, conns: map[*trackedConn]struct{}{}}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*trackedConn); ok {
				return context.WithValue(ctx, connKey{}, tc)
			}
			return ctx
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			if tc, ok := c.(*trackedConn); ok {
				tc.state.Store(int32(st))
				if st == http.StateClosed || st == http.StateHijacked {
					cl.forget(tc)
				}
			}
		},
	}
	return hs, cl
}

type connKey struct{}

// markAuthenticated records that the connection of a request carried the
// bearer token.
func markAuthenticated(ctx context.Context) {
	if tc, ok := ctx.Value(connKey{}).(*trackedConn); ok {
		tc.authed.Store(true)
	}
}

// capListener caps the connections it has accepted and not yet seen
// closed.
type capListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu    sync.Mutex
	seq   uint64
	conns map[*trackedConn]struct{}
}

type trackedConn struct {
	net.Conn
	l      *capListener
	seq    uint64 // accept order
	authed atomic.Bool
	state  atomic.Int32 // http.ConnState
	once   sync.Once
}

func (c *trackedConn) Close() error {
	c.l.forget(c)
	return c.Conn.Close()
}

func (l *capListener) forget(c *trackedConn) {
	c.once.Do(func() {
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
	})
}

// Accept accepts the next connection, making room for it or refusing it
// when the cap is reached.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim *trackedConn
		if len(l.conns) >= l.max {
			victim = l.victimLocked()
			if victim == nil {
				l.mu.Unlock()
				l.log.Debug("refused a connection: every connection is serving the token holder", "max_conns", l.max, "remote", c.RemoteAddr().String())
				c.Close()
				continue
			}
			delete(l.conns, victim)
		}
		l.seq++
		tc := &trackedConn{Conn: c, l: l, seq: l.seq}
		tc.state.Store(int32(http.StateNew))
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		if victim != nil {
			l.log.Debug("closed a connection to make room", "authenticated", victim.authed.Load(), "remote", victim.RemoteAddr().String())
			victim.Conn.Close()
		}
		return tc, nil
	}
}

// victimLocked picks the connection to close: the oldest unauthenticated
// one, else the oldest idle authenticated one, else none.
func (l *capListener) victimLocked() *trackedConn {
	var unauth, idle *trackedConn
	for c := range l.conns {
		switch {
		case !c.authed.Load():
			if unauth == nil || c.seq < unauth.seq {
				unauth = c
			}
		case http.ConnState(c.state.Load()) == http.StateIdle:
			if idle == nil || c.seq < idle.seq {
				idle = c
			}
		}
	}
	if unauth != nil {
		return unauth
	}
	return idle
}

// Close closes the listener (open connections are the server's to close).
func (l *capListener) Close() error {
	err := l.Listener.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
