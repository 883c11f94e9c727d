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

	"apconnect/host/adp"
	"apconnect/host/identity"
	"apconnect/host/internal/logthrottle"
)

// Kinds of StreamItem: the SSE event names of ADP 16.
const (
	KindRoomEvent   = "room.event"
	KindAgentStatus = "room.agent_status"
	KindJoinRequest = "room.join_request"
)

// StreamItem is one item of a live stream. Exactly one of Record,
// AgentStatus and JoinRequest is set, by Kind.
type StreamItem struct {
	// Kind is the SSE event name: KindRoomEvent, KindAgentStatus or
	// KindJoinRequest.
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

// Stream is an open live SSE subscription (ADP 16). Next is meant for one
// goroutine; Close may be called from any goroutine, at any time.
type Stream struct {
	roomID string
	path   string
	parent context.Context
	cancel context.CancelFunc
	body   io.ReadCloser
	parser *sseParser
	logger *slog.Logger
	// skipLog is the host's throttle for skip's warnings.
	skipLog *logthrottle.Throttle

	idleTimeout time.Duration
	idle        *time.Timer
	idleFired   atomic.Bool
	closed      atomic.Bool
	closeOnce   sync.Once

	err   error        // the error that ended the stream (Next's goroutine only)
	retry atomic.Int64 // last retry hint, in nanoseconds
}

// Live opens the live stream of a room (GET /v1/rooms/{room_id}/events/live)
// with a fresh request JWT; it needs a signer. It makes one attempt, bounded
// by Options.Timeout until the response headers arrive: the caller owns
// reconnecting (Backoff) and recovering the gap from history (ADP 16.3:
// subscribe first, then read Events after the last verified seq). A refusal
// is an *Error (membership_required for a non-member). The stream ends when
// ctx is done or Close is called.
func (h *Host) Live(ctx context.Context, roomID string) (*Stream, error) {
	if h.signer == nil {
		return nil, ErrNoSigner
	}
	room, err := h.roomURL(ctx, roomID)
	if err != nil {
		return nil, err
	}
	u := room + "/events/live"
	c := call{method: http.MethodGet, url: u, auth: authRequired, signer: h.signer}
	path := c.path()
	tok, err := h.svc.token(&c)
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
		data, rerr := readBounded(resp.Body, h.svc.opts.MaxResourceBytes)
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
	s := &Stream{
		roomID: roomID, path: path, parent: ctx, cancel: cancel, body: resp.Body,
		logger: h.svc.opts.Logger, skipLog: h.svc.skipLog, idleTimeout: h.svc.opts.StreamIdleTimeout,
	}
	s.idle = time.AfterFunc(time.Hour, func() { s.idleFired.Store(true); cancel() })
	s.idle.Stop()
	s.parser = newSSEParser(activityReader{r: resp.Body, s: s}, h.svc.opts.MaxStreamEventBytes)
	return s, nil
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
// only, logged). Any error ends the stream and is returned again by later
// calls: io.EOF when the host closed it, ErrStreamIdle when it went silent,
// the context's error when ctx was cancelled, ErrStreamClosed after Close,
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
	if err != nil {
		s.err = s.classify(err)
		s.release()
		return nil, s.err
	}
	return item, nil
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

// skip logs a malformed hint item, rate-limited: the host decides how many
// it sends (the line that follows a held-back run says how many).
func (s *Stream) skip(kind string, err error) {
	s.skipLog.Log(context.Background(), s.logger, slog.LevelWarn, "skipping malformed live item",
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
	s.cancel()
	_ = s.body.Close()
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
