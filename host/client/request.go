package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"apconnect/host/identity"
	"apconnect/host/internal/logthrottle"
	"apconnect/host/internal/readall"
)

// newService checks the origin and prepares the HTTP client: a copy of hc
// that follows no redirect and leaves deadlines to each attempt.
func newService(origin string, hc *http.Client, discName, protocol string, opts Options) (*service, error) {
	o, err := identity.NormalizeOrigin(origin)
	if err != nil {
		return nil, fmt.Errorf("client: origin %q: %w", origin, err)
	}
	if opts.Timeout <= 0 && hc != nil && hc.Timeout > 0 {
		opts.Timeout = hc.Timeout
	}
	opts = opts.withDefaults()
	if hc == nil {
		hc = NewHTTPClient(nil, opts.Timeout)
	}
	// Each attempt has its own deadline (Options.Timeout); live streams
	// have none beyond the header wait and the idle timer.
	c := *hc
	c.Timeout = 0
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return ErrRedirect }
	return &service{origin: o, hc: &c, opts: opts, discName: discName, protocol: protocol,
		skipLog: logthrottle.New(logthrottle.DefaultInterval, logthrottle.DefaultBurst)}, nil
}

// authMode says whether a request carries a request JWT.
type authMode int

const (
	authNone     authMode = iota // never
	authIfSigner                 // when the client has a signer
	authRequired                 // always; ErrNoSigner without a signer
)

// call is one logical request (possibly several attempts).
type call struct {
	method string
	url    string     // absolute URL without query
	query  url.Values // optional
	body   []byte     // JSON body, nil for none
	auth   authMode
	signer identity.Signer
	write  bool // a POSTed envelope: never retried, Write on NetworkError
	// discovery marks the read of a discovery document, which needs no
	// grant (Options.Gate is not asked).
	discovery bool
	maxBytes  int64 // bound of a success body
	accept    string
	// status, when set, is the one success status the call takes (Agent
	// Mail: 200, 202 or 204); another 2xx is a *ResponseError.
	status int
	// strict checks a success response as Agent Mail's clients do: from
	// the request's origin, with a body (other than a 204's, which must be
	// empty) of type application/json.
	strict bool
	// sink, when set, reads a 2xx body as it arrives (at most maxBytes)
	// instead of buffering it; it runs anew on every attempt, so it must
	// start from scratch each time.
	sink func(r io.Reader) error
	// reuse reads a 2xx body into the service's page buffer (see
	// pageBuffer); the caller hands it back with response.release once it
	// no longer reads the body.
	reuse bool
}

// response is a read 2xx response.
type response struct {
	status int
	header http.Header
	body   []byte

	// buf holds body when it was read into a reused buffer (call.reuse).
	buf *bytes.Buffer
	svc *service
}

// release hands a reused body buffer back to the service: body must not be
// read afterwards. A no-op for any other response.
func (r *response) release() {
	if r == nil || r.buf == nil {
		return
	}
	r.svc.putPageBuffer(r.buf)
	r.buf, r.body = nil, nil
}

// maxPageBuffer bounds the buffer a service keeps between history reads
// (a page of 1,000 records is well under it).
const maxPageBuffer = 4 << 20

// getPageBuffer returns the service's kept buffer, emptied, or a new one.
// A history page is read into one buffer that is reused from page to page:
// reading each page into a fresh one (growing by copying as it arrives)
// was a fifth of everything a catch-up sync allocated. Concurrent reads get
// fresh buffers.
func (s *service) getPageBuffer() *bytes.Buffer {
	if b := s.pageBuf.Swap(nil); b != nil {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

// putPageBuffer keeps b for the next read unless it grew past
// maxPageBuffer.
func (s *service) putPageBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPageBuffer {
		s.pageBuf.Store(b)
	}
}

// path returns the request path for errors and logs (never the query).
func (c *call) path() string {
	if u, err := url.Parse(c.url); err == nil {
		return u.Path
	}
	return "?"
}

// token mints a fresh request JWT for one attempt, or returns "" when the
// call is anonymous.
func (s *service) token(c *call) (string, error) {
	switch {
	case c.auth == authNone:
		return "", nil
	case c.signer == nil && c.auth == authRequired:
		return "", ErrNoSigner
	case c.signer == nil:
		return "", nil
	}
	return mintToken(c.signer, s.origin, s.opts.Clock(), s.opts.TokenLifetime)
}

// mintToken issues a request JWT whose iat is TokenBackdate before now and
// whose exp is now + lifetime (D-19): SDK 0.12.6 hosts verify with no
// clock skew, so a host whose clock runs a little behind ours would refuse
// iat = now. exp - iat stays within identity.MaxTokenLifetime (Options caps
// lifetime at MaxTokenLifetime - TokenBackdate) and exp is in the future.
func mintToken(signer identity.Signer, origin string, now time.Time, lifetime time.Duration) (string, error) {
	return identity.IssueToken(signer, origin, now.Add(-TokenBackdate), lifetime+TokenBackdate)
}

// do runs a call: one attempt for writes; for the others retries on network
// errors, 429 and 5xx within the retry policy. It returns the 2xx response,
// or an *Error, *ResponseError, *NetworkError or the context's error.
func (s *service) do(ctx context.Context, c call) (*response, error) {
	if c.maxBytes <= 0 {
		c.maxBytes = s.opts.MaxResourceBytes
	}
	p := s.opts.Retry
	start := time.Now()
	backoff := p.NewBackoff()
	path := c.path()
	for attempt := 1; ; attempt++ {
		resp, err := s.attempt(ctx, &c, attempt)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", c.method, path, ctx.Err())
		}
		var (
			ne   *NetworkError
			se   *Error
			wait time.Duration
		)
		switch {
		case errors.As(err, &ne):
			s.invalidate()
			ne.Attempts = attempt
			wait = backoff.Next()
		case errors.As(err, &se) && se.Retryable():
			s.invalidate()
			wait = backoff.Next()
			if se.RetryAfter > 0 {
				if se.RetryAfter > p.MaxRetryAfter {
					return nil, err
				}
				wait = se.RetryAfter
			}
		default:
			return nil, err
		}
		if c.write || attempt >= p.MaxAttempts || time.Since(start)+wait > p.MaxElapsed {
			return nil, err
		}
		s.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "retrying request",
			slog.String("method", c.method), slog.String("origin", s.origin), slog.String("path", path),
			slog.Int("attempt", attempt), slog.Duration("wait", wait), slog.String("err", err.Error()))
		if err := Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.method, path, err)
		}
	}
}

// attempt sends one request with its own timeout and reads the response.
func (s *service) attempt(ctx context.Context, c *call, attempt int) (*response, error) {
	path := c.path()
	if s.opts.Gate != nil && !c.discovery {
		if err := s.opts.Gate(ctx, s.origin); err != nil {
			return nil, err
		}
	}
	actx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	u := c.url
	if len(c.query) > 0 {
		u += "?" + c.query.Encode()
	}
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(actx, c.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.method, path, err)
	}
	accept := c.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	tok, err := s.token(c)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.method, path, err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	began := time.Now()
	resp, err := s.hc.Do(req)
	if err != nil {
		if errors.Is(err, ErrRedirect) {
			return nil, &ResponseError{Method: c.method, Path: path, Err: ErrRedirect}
		}
		return nil, &NetworkError{Method: c.method, Path: path, Write: c.write, Err: err}
	}
	defer resp.Body.Close()
	s.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "request",
		slog.String("method", c.method), slog.String("origin", s.origin), slog.String("path", path),
		slog.Int("status", resp.StatusCode), slog.Int("attempt", attempt), slog.Duration("took", time.Since(began)))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, &ResponseError{Method: c.method, Path: path, Status: resp.StatusCode, Err: ErrRedirect}
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ok {
		if err := c.checkSuccess(resp, s.origin); err != nil {
			return nil, &ResponseError{Method: c.method, Path: path, Status: resp.StatusCode, Err: err}
		}
	}
	if ok && c.sink != nil {
		br := &boundedReader{r: resp.Body, left: c.maxBytes}
		err := c.sink(br)
		switch {
		case err == nil:
			return &response{status: resp.StatusCode, header: resp.Header}, nil
		case br.tooLarge:
			return nil, &ResponseError{Method: c.method, Path: path, Status: resp.StatusCode, Err: fmt.Errorf("%w (%d bytes)", ErrResponseTooLarge, c.maxBytes)}
		case br.readErr != nil:
			return nil, &NetworkError{Method: c.method, Path: path, Err: br.readErr}
		}
		return nil, &ResponseError{Method: c.method, Path: path, Status: resp.StatusCode, Err: err}
	}
	limit := s.opts.MaxResourceBytes
	if ok {
		limit = c.maxBytes
	}
	var buf *bytes.Buffer
	if ok && c.reuse {
		buf = s.getPageBuffer()
	}
	data, err := readBoundedInto(buf, resp.Body, limit, resp.ContentLength)
	read := &response{status: resp.StatusCode, header: resp.Header, body: data, buf: buf, svc: s}
	if err != nil && !errors.Is(err, ErrResponseTooLarge) {
		read.release()
		return nil, &NetworkError{Method: c.method, Path: path, Write: c.write, Err: err}
	}
	// The transport may deliver a response that raced the attempt's
	// deadline (a starved goroutine sees both ready): past the deadline the
	// attempt has timed out, whatever arrived.
	if err := actx.Err(); err != nil && ctx.Err() == nil {
		read.release()
		return nil, &NetworkError{Method: c.method, Path: path, Write: c.write, Err: err}
	}
	if !ok {
		return nil, s.serviceError(c, resp, data, err)
	}
	if err != nil {
		read.release()
		return nil, &ResponseError{Method: c.method, Path: path, Status: resp.StatusCode, Err: err}
	}
	return read, nil
}

// checkSuccess checks a 2xx response against what the call takes: its
// origin (the request's: no redirect was followed), its status and its
// content type.
func (c *call) checkSuccess(resp *http.Response, origin string) error {
	if c.strict && resp.Request != nil && resp.Request.URL != nil {
		if o, err := identity.NormalizeOrigin(resp.Request.URL.Scheme + "://" + resp.Request.URL.Host); err != nil || o != origin {
			return fmt.Errorf("%w: the response came from another origin", ErrOtherOrigin)
		}
	}
	if c.status != 0 && resp.StatusCode != c.status {
		return fmt.Errorf("HTTP %d where %d was expected", resp.StatusCode, c.status)
	}
	if c.strict && resp.StatusCode != http.StatusNoContent {
		if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			return fmt.Errorf("content type %q is not application/json", resp.Header.Get("Content-Type"))
		}
	}
	return nil
}

// boundedReader passes at most left bytes through and remembers why a read
// failed: the bound, or the connection.
type boundedReader struct {
	r        io.Reader
	left     int64
	tooLarge bool
	readErr  error
}

// Read reads from the body, failing with ErrResponseTooLarge past the bound.
func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Probe one byte: a body of exactly the bound is fine.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.tooLarge = true
			return 0, ErrResponseTooLarge
		}
		if err != nil && !errors.Is(err, io.EOF) {
			b.readErr = err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		b.readErr = err
	}
	return n, err
}

// readBounded reads at most limit bytes, failing with ErrResponseTooLarge
// beyond them; size is the length the response announced (-1 when none).
func readBounded(r io.Reader, limit, size int64) ([]byte, error) {
	return readBoundedInto(nil, r, limit, size)
}

// readBoundedInto is readBounded reading into buf (its bytes are returned)
// when buf is not nil.
func readBoundedInto(buf *bytes.Buffer, r io.Reader, limit, size int64) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	if buf != nil {
		if _, err := buf.ReadFrom(lr); err != nil {
			return nil, err
		}
		return checkBounded(buf.Bytes(), limit)
	}
	if size > limit {
		size = -1 // cut at limit anyway; read as it arrives
	}
	data, err := readall.Sized(lr, size)
	if err != nil {
		return nil, err
	}
	return checkBounded(data, limit)
}

// checkBounded fails with ErrResponseTooLarge when data is past limit.
func checkBounded(data []byte, limit int64) ([]byte, error) {
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrResponseTooLarge, limit)
	}
	return data, nil
}

// serviceError builds the *Error of a non-2xx response. readErr is
// ErrResponseTooLarge when the body was cut.
func (s *service) serviceError(c *call, resp *http.Response, body []byte, readErr error) *Error {
	e := &Error{
		Status:       resp.StatusCode,
		Method:       c.method,
		Path:         c.path(),
		MaxSeenNonce: resp.Header.Get(HeaderMaxSeenNonce),
		RetryAfter:   parseRetryAfter(resp.Header.Get("Retry-After"), s.opts.Clock()),
	}
	if readErr != nil {
		e.Message = "error body too large"
		return e
	}
	code, msg, data, ok := parseErrorBody(body)
	if !ok {
		e.Message = fmt.Sprintf("%s (body is not an Agent Identity error)", http.StatusText(resp.StatusCode))
		return e
	}
	e.Code, e.Message, e.Data = code, msg, data
	return e
}

// parseErrorBody reads the Agent Identity 8.1 error shape strictly.
func parseErrorBody(body []byte) (code, message string, data map[string]any, ok bool) {
	v, err := identity.ParseStrict(body)
	if err != nil {
		return "", "", nil, false
	}
	top, _ := v.(map[string]any)
	obj, _ := top["error"].(map[string]any)
	if obj == nil {
		return "", "", nil, false
	}
	code, _ = obj["code"].(string)
	if code == "" {
		return "", "", nil, false
	}
	message, _ = obj["message"].(string)
	if d, present := obj["data"]; present {
		data, ok = d.(map[string]any)
		if !ok {
			return "", "", nil, false
		}
	}
	return code, message, data, true
}

// parseRetryAfter reads Retry-After: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > 86400 {
			n = 86400
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
