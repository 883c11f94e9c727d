// Package hubtest starts a real local hub inside a test: HTTPS on an
// ephemeral loopback port, a temporary data directory, and an *http.Client
// that trusts only the hub's ca.pem. The connector's tests and the hub's own
// run against it, so every test talks to the same strict peer a user runs.
//
//	h := hubtest.Start(t, hubtest.WithClock(clock))
//	resp := h.Do(http.MethodGet, "/.well-known/agent-profile", nil, nil)
package hubtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/tlsca"
	"apconnect/host/internal/readall"
)

// Hub is a started hub with a client that trusts it.
type Hub struct {
	*hub.Hub
	// Client trusts only the hub's CA and follows no redirects.
	Client *http.Client
	// Clock is the hub's clock when the hub was started WithClock.
	Clock *Clock

	t    testing.TB
	cfg  config
	stop context.CancelFunc
}

type config struct {
	dir    string
	clock  *Clock
	logger *slog.Logger
	edit   []func(*hub.Options)
}

// Option configures Start.
type Option func(*config)

// WithDir uses dir as the data directory (a restart test passes the same
// directory twice). By default each Start gets a fresh t.TempDir().
func WithDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithClock drives the hub's protocol clock from c.
func WithClock(c *Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithLogger sends the hub's logs to l (by default warnings and errors go
// to t.Log).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithOptions edits the hub.Options before the hub is created.
func WithOptions(edit func(*hub.Options)) Option {
	return func(c *config) { c.edit = append(c.edit, edit) }
}

// Start creates and starts a hub and registers its shutdown with t.Cleanup.
// It fails the test if the hub cannot start.
func Start(t testing.TB, opts ...Option) *Hub {
	t.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.dir == "" {
		cfg.dir = t.TempDir()
	}
	return start(t, cfg)
}

func start(t testing.TB, cfg config) *Hub {
	t.Helper()
	logger := cfg.logger
	var tw *testWriter
	if logger == nil {
		tw = &testWriter{t: t}
		logger = slog.New(slog.NewTextHandler(tw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	o := hub.Options{Listen: "127.0.0.1:0", DataDir: cfg.dir, Logger: logger}
	if cfg.clock != nil {
		o.Clock = cfg.clock.Now
	}
	for _, e := range cfg.edit {
		e(&o)
	}
	h, err := hub.New(o)
	if err != nil {
		t.Fatalf("hubtest: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.Start(ctx); err != nil {
		cancel()
		h.Close()
		t.Fatalf("hubtest: %v", err)
	}
	pool, err := tlsca.LoadPool(h.CAFile())
	if err != nil {
		cancel()
		h.Close()
		t.Fatalf("hubtest: %v", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.RootCAs = pool
	tr.Proxy = nil
	client := &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	th := &Hub{Hub: h, Client: client, Clock: cfg.clock, t: t, cfg: cfg, stop: cancel}
	t.Cleanup(func() {
		th.Close()
		if tw != nil {
			tw.done()
		}
	})
	return th
}

// Close closes the client's idle connections (so HTTP/2 shutdown does not
// wait for them) and stops the hub.
func (h *Hub) Close() {
	h.Client.CloseIdleConnections()
	h.stop()
	if err := h.Hub.Close(); err != nil {
		h.t.Errorf("hubtest: close: %v", err)
	}
}

// Restart closes the hub and starts a new one on the same data directory,
// clock and options (on a new port). Use the returned Hub afterwards.
func (h *Hub) Restart() *Hub {
	h.t.Helper()
	h.Close()
	return start(h.t, h.cfg)
}

// URL returns the absolute URL of a path on the hub.
func (h *Hub) URL(path string) string { return h.Origin() + path }

// Response is a read HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request to path. A []byte or string body is sent as is; any
// other non-nil body is JSON-encoded. JSON bodies get Content-Type
// application/json unless header sets one. Do may be called from any
// goroutine: a transport failure is reported with t.Errorf and returned as
// a Response with Status 0.
func (h *Hub) Do(method, path string, body any, header http.Header) *Response {
	h.t.Helper()
	failed := &Response{Header: http.Header{}}
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			h.t.Errorf("hubtest: encode body: %v", err)
			return failed
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, h.URL(path), r)
	if err != nil {
		h.t.Errorf("hubtest: %v", err)
		return failed
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		h.t.Errorf("hubtest: %s %s: %v", method, path, err)
		return failed
	}
	defer resp.Body.Close()
	b, err := readall.Sized(resp.Body, resp.ContentLength)
	if err != nil {
		h.t.Errorf("hubtest: read %s %s: %v", method, path, err)
		return failed
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Bearer returns a header carrying "Authorization: Bearer token".
func Bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// ErrorCode returns the error.code of an Agent Identity error body, or "".
func (r *Response) ErrorCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

// Decode unmarshals the body into v, failing the test on error.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("hubtest: decode %s: %v", r.Body, err)
	}
}

// testWriter forwards log lines to t.Log until the test is done.
type testWriter struct {
	mu     sync.Mutex
	t      testing.TB
	closed bool
}

// Write logs p through t.Log, or drops it once the test is done.
func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) done() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
