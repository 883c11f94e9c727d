package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Kinds of StreamItem: the SSE event names of ADP 16.
const (
	KindRoomEvent   = "room.event"
	KindAgentStatus = "room.agent_status"
	KindJoinRequest = "room.join_request"
)

// StreamItem is one item of a live stream. Exactly one of Record,
// AgentStatus and JoinRequest is set, by Kind; none for KindResubscribed.
type StreamItem struct {
	// Kind is the SSE event name: KindRoomEvent, KindAgentStatus or
	// KindJoinRequest; or KindResubscribed (no SSE event).
	Kind string
	// ID is the SSE id in force ("" when none was sent).
	ID string
	// Record is a room.event server record of the stream's room (shape and
	// record hash checked, not verified).
	Record *adp.Record
	// AgentStatus is a room.agent_status notice (not a record).
	AgentStatus *AgentStatus
	// JoinRequest is a room.join_request notice (not a record).
	JoinRequest *JoinRequestNotice
}

// KindResubscribed is the StreamItem a Stream returns after it replaced a
// connection the host closed cleanly (its request JWT expired, D-26) with
// a new subscription under a fresh JWT. Records accepted between the two
// connections were not delivered: read history after the last verified
// seq (ADP 16.3), as after any subscription.
const KindResubscribed = "resubscribed"

// minResubscribeAge is how long a connection must have lasted for a clean
// close to be taken as "reconnect with a fresh JWT": a host that closes a
// stream sooner is not expiring a token, and reconnecting at once would
// spin, so Next reports io.EOF and the caller backs off.
const minResubscribeAge = time.Second

// Stream is an open live SSE subscription (ADP 16). Next is meant for one
// goroutine; Close may be called from any goroutine, at any time.
type Stream struct {
	host   *Host
	roomID string
	path   string
	parent context.Context
	logger *slog.Logger

	mu     sync.Mutex // guards conn against Close and the idle timer
	conn   *liveConn
	parser *sseParser // conn's parser (Next's goroutine only)

	idleTimeout time.Duration
	idle        *time.Timer
	idleFired   atomic.Bool
	closed      atomic.Bool
	closeOnce   sync.Once

	err   error        // the error that ended the stream (Next's goroutine only)
	retry atomic.Int64 // last retry hint, in nanoseconds
}

// liveConn is one HTTP response of a stream.
type liveConn struct {
	cancel context.CancelFunc
	body   io.ReadCloser
	opened time.Time
}

// Live opens the live stream of a room (GET /v1/rooms/{room_id}/events/live)
// with a fresh request JWT (valid for Options.StreamTokenLifetime); it
// needs a signer. It makes one attempt, bounded by Options.Timeout until
// the response headers arrive. When the host later closes the stream
// cleanly — as hosts do when the subscription's JWT expires — Next
// subscribes again with a fresh JWT and returns a KindResubscribed item;
// any other end is the caller's to handle: reconnecting (Backoff) and
// recovering the gap from history (ADP 16.3: subscribe first, then read
// Events after the last verified seq). A refusal is an *Error
// (membership_required for a non-member). The stream ends when ctx is done
// or Close is called.
func (h *Host) Live(ctx context.Context, roomID string) (*Stream, error) {
	if h.signer == nil {
		return nil, ErrNoSigner
	}
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	s := &Stream{
		host: h, roomID: roomID, path: (&call{url: room + "/events/live"}).path(), parent: ctx,
		logger: h.svc.opts.Logger, idleTimeout: h.svc.opts.StreamIdleTimeout,
	}
	conn, err := h.openLive(ctx, room+"/events/live")
	if err != nil {
		return nil, err
	}
	s.idle = time.AfterFunc(time.Hour, func() {
		s.idleFired.Store(true)
		s.mu.Lock()
		s.conn.cancel()
		s.mu.Unlock()
	})
	s.idle.Stop()
	s.use(conn)
	return s, nil
}

// use makes conn the stream's connection, unless the stream was closed
// meanwhile (Close sets closed before it takes mu, so either it sees conn
// or use sees closed).
func (s *Stream) use(conn *liveConn) bool {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return false
	}
	s.conn = conn
	s.mu.Unlock()
	s.parser = newSSEParser(activityReader{r: conn.body, s: s}, s.host.svc.opts.MaxStreamEventBytes)
	return true
}

// openLive makes one subscription attempt at u.
func (h *Host) openLive(ctx context.Context, u string) (*liveConn, error) {
	c := call{method: http.MethodGet, url: u, auth: authRequired, signer: h.signer}
	path := c.path()
	if g := h.svc.opts.Gate; g != nil {
		if err := g(ctx, h.svc.origin); err != nil {
			return nil, err
		}
	}
	tok, err := mintToken(h.signer, h.svc.origin, h.svc.opts.Clock(), h.svc.opts.StreamTokenLifetime)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set("Authorization", "Bearer "+tok)

	var headerTimedOut atomic.Bool
	headerTimer := time.AfterFunc(h.svc.opts.Timeout, func() { headerTimedOut.Store(true); cancel() })
	resp, err := h.svc.hc.Do(req)
	stopped := headerTimer.Stop()
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("GET %s: %w", path, ctx.Err())
		}
		if errors.Is(err, ErrRedirect) {
			return nil, &ResponseError{Method: http.MethodGet, Path: path, Err: ErrRedirect}
		}
		h.svc.invalidate()
		if headerTimedOut.Load() {
			err = fmt.Errorf("no response headers within %s: %w", h.svc.opts.Timeout, err)
		}
		return nil, &NetworkError{Method: http.MethodGet, Path: path, Attempts: 1, Err: err}
	}
	if !stopped {
		// The header timer fired just as the headers arrived: the request
		// context is cancelled, the stream unusable.
		resp.Body.Close()
		cancel()
		h.svc.invalidate()
		return nil, &NetworkError{Method: http.MethodGet, Path: path, Attempts: 1, Err: context.DeadlineExceeded}
	}
	h.svc.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "live stream",
		slog.String("origin", h.svc.origin), slog.String("path", path), slog.Int("status", resp.StatusCode))
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			return nil, &ResponseError{Method: http.MethodGet, Path: path, Status: resp.StatusCode, Err: ErrRedirect}
		}
		data, rerr := readBounded(resp.Body, h.svc.opts.MaxResourceBytes, resp.ContentLength)
		if rerr != nil && !errors.Is(rerr, ErrResponseTooLarge) {
			h.svc.invalidate()
			return nil, &NetworkError{Method: http.MethodGet, Path: path, Attempts: 1, Err: rerr}
		}
		se := h.svc.serviceError(&c, resp, data, rerr)
		if se.Retryable() {
			h.svc.invalidate()
		}
		return nil, se
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "text/event-stream" {
		resp.Body.Close()
		cancel()
		return nil, &ResponseError{Method: http.MethodGet, Path: path, Status: resp.StatusCode,
			Err: fmt.Errorf("content type %q is not text/event-stream", resp.Header.Get("Content-Type"))}
	}
	return &liveConn{cancel: cancel, body: resp.Body, opened: time.Now()}, nil
}

// activityReader restarts the idle timer whenever bytes arrive.
type activityReader struct {
	r io.Reader
	s *Stream
}

// Read reads from the body and restarts the idle timer on data.
func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.idle.Reset(a.s.idleTimeout)
	}
	return n, err
}

// Next blocks until the next item. Heartbeat comments are consumed (any
// byte received restarts the idle timer, which runs only while Next waits)
// and never returned; unknown event names are skipped, as are
// room.agent_status and room.join_request items that are malformed (hints
// only, logged). When the host closes the stream cleanly after it has been
// open for a while (its request JWT expired), Next subscribes again with a
// fresh JWT and returns a KindResubscribed item; that is not an error. Any
// error ends the stream and is returned again by later calls: io.EOF when
// the host closed it at once, ErrStreamIdle when it went silent, the
// context's error when ctx was cancelled, ErrStreamClosed after Close, the
// refusal of the new subscription (an *Error such as membership_required),
// a *ResponseError for a malformed room.event or an oversized line or
// event, or a *NetworkError.
func (s *Stream) Next() (*StreamItem, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.closed.Load() {
		s.err = ErrStreamClosed
		return nil, s.err
	}
	s.idle.Reset(s.idleTimeout)
	item, err := s.next()
	s.idle.Stop()
	if err == nil {
		return item, nil
	}
	err = s.classify(err)
	if errors.Is(err, io.EOF) && time.Since(s.current().opened) >= minResubscribeAge {
		item, rerr := s.resubscribe()
		if rerr == nil {
			return item, nil
		}
		err = rerr
	}
	s.err = err
	s.release()
	return nil, s.err
}

// current returns the stream's connection.
func (s *Stream) current() *liveConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// resubscribe replaces a cleanly closed connection with a new subscription
// under a fresh request JWT.
func (s *Stream) resubscribe() (*StreamItem, error) {
	old := s.current()
	old.cancel()
	_ = old.body.Close()
	room, err := s.host.roomURL(s.parent, s.roomID)
	if err != nil {
		return nil, err
	}
	conn, err := s.host.openLive(s.parent, room+"/events/live")
	if err != nil {
		return nil, err
	}
	if !s.use(conn) {
		conn.cancel()
		_ = conn.body.Close()
		return nil, ErrStreamClosed
	}
	s.logger.LogAttrs(s.parent, slog.LevelDebug, "live stream resubscribed", slog.String("path", s.path))
	return &StreamItem{Kind: KindResubscribed}, nil
}

// next reads events until one yields an item.
func (s *Stream) next() (*StreamItem, error) {
	for {
		ev, err := s.parser.next(nil)
		if r := s.parser.retry; r > 0 {
			s.retry.Store(int64(r))
		}
		if err != nil {
			return nil, err
		}
		switch ev.name {
		case KindRoomEvent:
			v, err := identity.ParseStrict([]byte(ev.data))
			if err != nil {
				return nil, &ResponseError{Method: http.MethodGet, Path: s.path, Status: http.StatusOK, Err: fmt.Errorf("room.event: %w", err)}
			}
			rec, err := recordFromValue(v, s.roomID, "")
			if err != nil {
				return nil, &ResponseError{Method: http.MethodGet, Path: s.path, Status: http.StatusOK, Err: fmt.Errorf("room.event: %w", err)}
			}
			return &StreamItem{Kind: ev.name, ID: ev.id, Record: rec}, nil
		case KindAgentStatus:
			v, err := identity.ParseStrict([]byte(ev.data))
			if err == nil {
				var st *AgentStatus
				if st, err = agentStatusFromValue(v, s.roomID, "", true); err == nil {
					return &StreamItem{Kind: ev.name, ID: ev.id, AgentStatus: st}, nil
				}
			}
			s.skip(ev.name, err)
		case KindJoinRequest:
			v, err := identity.ParseStrict([]byte(ev.data))
			if err == nil {
				var n *JoinRequestNotice
				if n, err = joinNoticeFromValue(v, s.roomID); err == nil {
					return &StreamItem{Kind: ev.name, ID: ev.id, JoinRequest: n}, nil
				}
			}
			s.skip(ev.name, err)
		}
	}
}

// skip logs a malformed hint item, rate-limited per host: the host decides
// how many it sends (the line that follows a held-back run says how many).
func (s *Stream) skip(kind string, err error) {
	s.host.svc.skipLog.Log(context.Background(), s.logger, slog.LevelWarn, "skipping malformed live item",
		slog.String("path", s.path), slog.String("kind", kind), slog.String("err", err.Error()))
}

// classify turns a read error into the error Next reports.
func (s *Stream) classify(err error) error {
	var re *ResponseError
	switch {
	case s.closed.Load():
		return ErrStreamClosed
	case s.idleFired.Load():
		return ErrStreamIdle
	case s.parent.Err() != nil:
		return s.parent.Err()
	case errors.As(err, &re):
		return err
	case errors.Is(err, errSSETooLarge):
		return &ResponseError{Method: http.MethodGet, Path: s.path, Status: http.StatusOK, Err: sizeError(s.parser.maxEvent)}
	case errors.Is(err, io.EOF):
		return io.EOF
	}
	return &NetworkError{Method: http.MethodGet, Path: s.path, Attempts: 1, Err: err}
}

// release frees the connection.
func (s *Stream) release() {
	s.idle.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn.cancel()
	_ = s.conn.body.Close()
}

// Close ends the stream and releases its connection. It is idempotent and
// safe to call concurrently with Next.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.release()
	})
	return nil
}

// RetryHint returns the last SSE retry field the host sent (0 when none): a
// hint for the caller's reconnect delay.
func (s *Stream) RetryHint() time.Duration { return time.Duration(s.retry.Load()) }
