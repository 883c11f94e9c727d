// Package connectortest holds what the protocol modules' tests share: a
// real hub to run against, a connector built on a fresh home, a TLS proxy
// in front of the hub that can tamper with what it serves, and result
// checks against the catalog's output schemas.
package connectortest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/adp"
)

// Proxy is a TLS reverse proxy between a connector and the hub that can
// tamper with what the hub serves: history pages rewritten, live streams
// cut, write responses lost, writes delayed behind another agent's.
type Proxy struct {
	t        testing.TB
	hub      *hubtest.Hub
	srv      *httptest.Server
	rp       *httputil.ReverseProxy
	mu       sync.Mutex
	tamperFn func(recs []map[string]any) []map[string]any // history pages
	// DropPosts answers room writes with a cut connection after the hub
	// accepted them (the response is lost).
	DropPosts atomic.Bool
	// BlackholePosts cuts room writes without forwarding them.
	BlackholePosts atomic.Bool
	// RefusePosts answers room writes with timestamp_out_of_window without
	// forwarding them (a host that no longer remembers the envelope).
	RefusePosts atomic.Bool
	// BlockLive refuses live streams (503).
	BlockLive atomic.Bool
	// CutLiveAfter cuts each live stream after this many room.event items
	// (0: never).
	CutLiveAfter atomic.Int64
	// rewrite, when set, may replace the body of any successful response
	// other than a live stream.
	Rewrite func(path string, body []byte) []byte
	// BeforePost runs before a room write is forwarded.
	BeforePost func()
	Posts      atomic.Int64
	// Requests counts every request that reached the proxy.
	Requests atomic.Int64
	// Intercept, when set, sees every request first and may answer it
	// itself (returning true); otherwise the request goes on.
	Intercept func(w http.ResponseWriter, r *http.Request) bool
}

func NewProxy(t testing.TB, h *hubtest.Hub) *Proxy {
	target, _ := url.Parse(h.Origin())
	p := &Proxy{t: t, hub: h}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = r.In.Host },
		Transport:      h.Client.Transport,
		FlushInterval:  -1,
		ModifyResponse: p.modify,
		ErrorLog:       nil,
	}
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.EnableHTTP2 = true
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	return p
}

// Client is the connector's HTTPClient option: every request to the hub's
// origin goes to the proxy, which presents its own certificate.
func (p *Proxy) Client(origin string, _ *x509.CertPool) (*http.Client, error) {
	pool := x509.NewCertPool()
	pool.AddCert(p.srv.Certificate())
	addr := p.srv.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
	}
	return &http.Client{Transport: tr}, nil
}

// SetIntercept sets Intercept (nil: none).
func (p *Proxy) SetIntercept(f func(w http.ResponseWriter, r *http.Request) bool) {
	p.mu.Lock()
	p.Intercept = f
	p.mu.Unlock()
}

// SetRewrite sets Rewrite (nil: none).
func (p *Proxy) SetRewrite(f func(path string, body []byte) []byte) {
	p.mu.Lock()
	p.Rewrite = f
	p.mu.Unlock()
}

func (p *Proxy) SetTamper(f func(recs []map[string]any) []map[string]any) {
	p.mu.Lock()
	p.tamperFn = f
	p.mu.Unlock()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.Requests.Add(1)
	p.mu.Lock()
	intercept := p.Intercept
	p.mu.Unlock()
	if intercept != nil && intercept(w, r) {
		return
	}
	isLive := strings.HasSuffix(r.URL.Path, "/events/live")
	isPost := r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/rooms/") && strings.Count(r.URL.Path, "/") == 3
	if isLive && p.BlockLive.Load() {
		http.Error(w, `{"error":{"code":"unavailable","message":"blocked by test proxy"}}`, http.StatusServiceUnavailable)
		return
	}
	if isPost {
		p.Posts.Add(1)
		p.mu.Lock()
		before := p.BeforePost
		p.mu.Unlock()
		if before != nil {
			before()
		}
		if p.BlackholePosts.Load() {
			panic(http.ErrAbortHandler)
		}
		if p.RefusePosts.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"timestamp_out_of_window","message":"created_at is outside the live-write window"}}`))
			return
		}
		if p.DropPosts.Load() {
			rec := httptest.NewRecorder()
			p.rp.ServeHTTP(rec, r)
			panic(http.ErrAbortHandler) // the hub accepted it; the client never hears
		}
	}
	p.rp.ServeHTTP(w, r)
}

// modify rewrites history pages and wraps live streams.
func (p *Proxy) modify(resp *http.Response) error {
	path := resp.Request.URL.Path
	if strings.HasSuffix(path, "/events/live") {
		if n := p.CutLiveAfter.Load(); n > 0 {
			resp.Body = &cutStream{r: resp.Body, after: int(n)}
		}
		return nil
	}
	p.mu.Lock()
	tamper, rewrite := p.tamperFn, p.Rewrite
	p.mu.Unlock()
	if rewrite != nil && resp.StatusCode == http.StatusOK {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		nb := rewrite(path, body)
		resp.Body = io.NopCloser(bytes.NewReader(nb))
		resp.ContentLength = int64(len(nb))
		resp.Header.Set("Content-Length", strconv.Itoa(len(nb)))
	}
	if !strings.HasPrefix(path, "/v1/rooms/") || !strings.HasSuffix(path, "/events") || resp.StatusCode != http.StatusOK {
		return nil
	}
	if tamper == nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	var page map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&page); err != nil {
		return err
	}
	list, _ := page["result"].([]any)
	recs := make([]map[string]any, len(list))
	for i, v := range list {
		recs[i] = v.(map[string]any)
	}
	recs = tamper(recs)
	out := make([]any, len(recs))
	for i, r := range recs {
		out[i] = r
	}
	page["result"] = out
	nb, err := json.Marshal(page)
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(nb))
	resp.ContentLength = int64(len(nb))
	resp.Header.Set("Content-Length", strconv.Itoa(len(nb)))
	return nil
}

// cutStream passes a live stream through and fails it after a number of
// room.event items.
type cutStream struct {
	r     io.ReadCloser
	after int
	seen  int
	buf   bytes.Buffer
	done  bool
}

func (c *cutStream) Read(b []byte) (int, error) {
	if c.done {
		return 0, io.ErrUnexpectedEOF
	}
	n, err := c.r.Read(b)
	c.buf.Write(b[:n])
	c.seen = strings.Count(c.buf.String(), "event: room.event")
	if c.seen >= c.after && strings.HasSuffix(c.buf.String(), "\n\n") {
		c.done = true
	}
	return n, err
}

func (c *cutStream) Close() error { return c.r.Close() }

// seqOf returns a record map's seq.
func SeqOf(r map[string]any) int64 {
	n, _ := r["seq"].(json.Number).Int64()
	return n
}

// rehash recomputes a record map's hash from its fields.
func Rehash(t testing.TB, r map[string]any) {
	t.Helper()
	pre, _ := r["pre_hash"].(string)
	env, _ := r["envelope"].(map[string]any)
	envHash, _ := env["hash"].(string)
	acc, _ := r["accepted_at"].(json.Number).Int64()
	h, err := adp.RecordHash(r["room_id"].(string), SeqOf(r), pre, envHash, acc)
	if err != nil {
		t.Fatal(err)
	}
	r["hash"] = h
}

// Lock and Unlock guard Rewrite and BeforePost, which a test may set while
// the proxy serves.
func (p *Proxy) Lock()   { p.mu.Lock() }
func (p *Proxy) Unlock() { p.mu.Unlock() }
