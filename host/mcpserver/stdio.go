package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio: newline-delimited JSON-RPC that never falls over.
//
// The go-sdk's IOTransport decodes stdin as one JSON stream: the first
// malformed line ends the session (and `apconnect mcp` with it) without an
// answer, and a message that is neither a request nor a response is
// dropped. StdioTransport frames by line instead, checks each line with
// decodeMessage and answers a bad one itself, bounds a line's length (the
// rest of an over-long line is read and discarded, never buffered; the
// answer carries the request's id when the line's beginning or end holds
// it, recoverid.go) and nesting, and keeps serving.
//
// It also finishes two jobs the SDK leaves half done on this transport:
//
//   - Cancellation. On notifications/cancelled the SDK cancels the
//     handler's context, but then still writes whatever the handler
//     returns. The connection remembers the cancelled ids of calls in
//     flight and drops their responses (MCP: the receiver SHOULD NOT
//     respond to a cancelled request).
//   - Error codes. An error the SDK raises as a plain Go error goes out
//     with code 0 (a request before initialize, a second initialize). The
//     connection gives each a standard code: -32600 for a request the
//     session's state does not allow, -32603 for anything else.

// StdioOptions configure StdioTransport.
type StdioOptions struct {
	// MaxLineBytes bounds one line (DefaultMaxMessageBytes when 0).
	MaxLineBytes int
	// MaxDepth bounds the nesting of one message (DefaultMaxDepth when 0).
	MaxDepth int
	// Logger receives what the transport refused, at debug level
	// (discarded when nil).
	Logger *slog.Logger
}

// StdioTransport is an mcp.Transport over a reader (stdin) and a writer
// (stdout), one JSON-RPC message per line.
type StdioTransport struct {
	r    io.ReadCloser
	w    io.WriteCloser
	opts StdioOptions
}

// NewStdioTransport frames MCP over r and w by line.
func NewStdioTransport(r io.ReadCloser, w io.WriteCloser, opts StdioOptions) *StdioTransport {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &StdioTransport{r: r, w: w, opts: opts}
}

// Connect implements mcp.Transport. A StdioTransport connects once.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{
		r:         t.r,
		w:         t.w,
		lim:       limits{maxBytes: t.opts.MaxLineBytes, maxDepth: t.opts.MaxDepth}.orDefault(),
		log:       t.opts.Logger,
		incoming:  make(chan readResult),
		closed:    make(chan struct{}),
		inflight:  map[string]call{},
		cancelled: map[string]bool{},
	}
	go c.readLoop()
	return c, nil
}

// call is a request in flight.
type call struct {
	method string
	// stateless is set for a 2026-07-28 request, which carries its own
	// _meta instead of relying on initialize.
	stateless bool
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// lineConn is the mcp.Connection of a StdioTransport.
type lineConn struct {
	r   io.ReadCloser
	w   io.WriteCloser
	lim limits
	log *slog.Logger

	incoming  chan readResult
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error

	writeMu sync.Mutex // one line at a time on stdout

	mu sync.Mutex
	// inflight holds every call read and not yet answered, by id.
	inflight map[string]call
	// cancelled holds the in-flight calls the client cancelled.
	cancelled map[string]bool
	// initialized is set once an initialize call was answered with a
	// result.
	initialized bool
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *lineConn) SessionID() string { return "" }

// readLoop reads lines until EOF, answers the bad ones and hands the good
// ones to Read.
func (c *lineConn) readLoop() {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, long, err := readLine(br, c.lim.maxBytes)
		switch {
		case long != nil:
			id := recoverID(long.head, long.tail)
			c.log.Debug("refused an over-long line", "max_bytes", c.lim.maxBytes, "bytes", long.n, "id", string(id))
			c.reply(errTooLarge(c.lim.maxBytes, id))
		case len(line) > 0:
			c.handleLine(line)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			select {
			case c.incoming <- readResult{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine reads one line without its newline. A line longer than max is
// read to its end without being kept: only its edges are (overlong), to
// answer it with its id.
func readLine(br *bufio.Reader, max int) (line []byte, long *overlong, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case long != nil:
			long.add(chunk)
		case len(line)+len(chunk) > max+2: // room for "\r\n"
			long = &overlong{}
			long.add(line)
			long.add(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long != nil {
			return nil, long, err
		}
		return trimEOL(line), nil, err
	}
}

// overlong is what is kept of a line over the limit: its length and its
// first and last idScanBytes.
type overlong struct {
	n          int
	head, tail []byte
}

func (o *overlong) add(b []byte) {
	o.n += len(b)
	if room := idScanBytes - len(o.head); room > 0 {
		o.head = append(o.head, b[:min(room, len(b))]...)
	}
	if len(b) > idScanBytes {
		b = b[len(b)-idScanBytes:]
	}
	o.tail = append(o.tail, b...)
	if over := len(o.tail) - idScanBytes; over > 0 {
		o.tail = o.tail[:copy(o.tail, o.tail[over:])]
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// handleLine checks one line and either answers it or passes it on.
func (c *lineConn) handleLine(line []byte) {
	if isBlank(line) {
		return
	}
	msg, werr := decodeMessage(line, c.lim)
	if werr != nil {
		c.log.Debug("refused a malformed message", "code", werr.code, "reason", werr.message)
		c.reply(werr)
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		if werr := c.track(req); werr != nil {
			c.reply(werr)
			return
		}
	}
	select {
	case c.incoming <- readResult{msg: msg}:
	case <-c.closed:
	}
}

// track records a call in flight (and refuses an id already in flight),
// notes cancellations, and answers what the SDK would mis-answer.
func (c *lineConn) track(req *jsonrpc.Request) *wireError {
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			c.noteCancel(req.Params)
		}
		return nil
	}
	id := rawID(req.ID)
	if werr := checkDiscover(req, id); werr != nil {
		return werr
	}
	key := idKey(req.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, busy := c.inflight[key]; busy {
		return errInvalid(id, "the id of a request still in flight was reused")
	}
	c.inflight[key] = call{method: req.Method, stateless: metaProtocolVersion(req.Params) >= statelessProtocol}
	return nil
}

func (c *lineConn) noteCancel(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	key := idKey(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.inflight[key]; ok {
		c.cancelled[key] = true
	}
}

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.incoming:
		return r.msg, r.err
	}
}

// Write implements mcp.Connection: responses to cancelled calls are
// dropped, and an error without a code gets one.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		var drop bool
		resp, drop = c.settle(resp)
		if drop {
			c.log.Debug("dropped the response to a cancelled request", "id", resp.ID.Raw())
			return nil
		}
		msg = resp
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

// settle retires the call a response answers, reports whether it was
// cancelled, and codes an uncoded error.
func (c *lineConn) settle(resp *jsonrpc.Response) (_ *jsonrpc.Response, drop bool) {
	key := idKey(resp.ID)
	c.mu.Lock()
	cl, known := c.inflight[key]
	delete(c.inflight, key)
	cancelled := c.cancelled[key]
	delete(c.cancelled, key)
	initialized := c.initialized || cl.stateless
	if known && cl.method == "initialize" && resp.Error == nil {
		c.initialized = true
	}
	c.mu.Unlock()
	if cancelled {
		return resp, true
	}
	if resp.Error != nil {
		if code := errorCode(resp.Error); code == 0 {
			out := *resp
			out.Error = &jsonrpc.Error{Code: uncodedCode(cl.method, initialized), Message: resp.Error.Error()}
			return &out, false
		}
	}
	return resp, false
}

// errorCode is the JSON-RPC code an error goes out with (0 for none).
func errorCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// uncodedCode picks the code of an error the SDK raised without one: the
// handshake's state errors (a request before initialize, a repeated
// initialize) are invalid requests; anything else is internal.
func uncodedCode(method string, initialized bool) int64 {
	if method == "initialize" || !initialized {
		return jsonrpc.CodeInvalidRequest
	}
	return jsonrpc.CodeInternalError
}

// reply writes an error response of the transport's own.
func (c *lineConn) reply(e *wireError) {
	if err := c.writeLine(e.encode()); err != nil {
		c.log.Debug("writing an error response", "err", err)
	}
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	buf := make([]byte, 0, len(data)+1)
	buf = append(append(buf, data...), '\n')
	_, err := c.w.Write(buf)
	return err
}

// Close implements mcp.Connection.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}
