package discourse_test

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

// proxy is a TLS reverse proxy between a connector and the hub that can
// tamper with what the hub serves: history pages rewritten, live streams
// cut, write responses lost, writes delayed behind another agent's.
type proxy struct {
	t      testing.TB
	hub    *hubtest.Hub
	srv    *httptest.Server
	rp     *httputil.ReverseProxy
	mu     sync.Mutex
	tamper func(recs []map[string]any) []map[string]any // history pages
	// dropPosts answers room writes with a cut connection after the hub
	// accepted them (the response is lost).
	dropPosts atomic.Bool
	// blackholePosts cuts room writes without forwarding them.
	blackholePosts atomic.Bool
	// refusePosts answers room writes with timestamp_out_of_window without
	// forwarding them (a host that no longer remembers the envelope).
	refusePosts atomic.Bool
	// blockLive refuses live streams (503).
	blockLive atomic.Bool
	// cutLiveAfter cuts each live stream after this many room.event items
	// (0: never).
	cutLiveAfter atomic.Int64
	// rewrite, when set, may replace the body of any successful response
	// other than a live stream.
	rewrite func(path string, body []byte) []byte
	// beforePost runs before a room write is forwarded.
	beforePost func()
	posts      atomic.Int64
}

func newProxy(t testing.TB, h *hubtest.Hub) *proxy {
	target, _ := url.Parse(h.Origin())
	p := &proxy{t: t, hub: h}
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

// client is the connector's HTTPClient option: every request to the hub's
// origin goes to the proxy, which presents its own certificate.
func (p *proxy) client(origin string, _ *x509.CertPool) (*http.Client, error) {
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

func (p *proxy) setTamper(f func(recs []map[string]any) []map[string]any) {
	p.mu.Lock()
	p.tamper = f
	p.mu.Unlock()
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	isLive := strings.HasSuffix(r.URL.Path, "/events/live")
	isPost := r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/rooms/") && strings.Count(r.URL.Path, "/") == 3
	if isLive && p.blockLive.Load() {
		http.Error(w, `{"error":{"code":"unavailable","message":"blocked by test proxy"}}`, http.StatusServiceUnavailable)
		return
	}
	if isPost {
		p.posts.Add(1)
		p.mu.Lock()
		before := p.beforePost
		p.mu.Unlock()
		if before != nil {
			before()
		}
		if p.blackholePosts.Load() {
			panic(http.ErrAbortHandler)
		}
		if p.refusePosts.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"timestamp_out_of_window","message":"created_at is outside the live-write window"}}`))
			return
		}
		if p.dropPosts.Load() {
			rec := httptest.NewRecorder()
			p.rp.ServeHTTP(rec, r)
			panic(http.ErrAbortHandler) // the hub accepted it; the client never hears
		}
	}
	p.rp.ServeHTTP(w, r)
}

// modify rewrites history pages and wraps live streams.
func (p *proxy) modify(resp *http.Response) error {
	path := resp.Request.URL.Path
	if strings.HasSuffix(path, "/events/live") {
		if n := p.cutLiveAfter.Load(); n > 0 {
			resp.Body = &cutStream{r: resp.Body, after: int(n)}
		}
		return nil
	}
	p.mu.Lock()
	tamper, rewrite := p.tamper, p.rewrite
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
func seqOf(r map[string]any) int64 {
	n, _ := r["seq"].(json.Number).Int64()
	return n
}

// rehash recomputes a record map's hash from its fields.
func rehash(t testing.TB, r map[string]any) {
	t.Helper()
	pre, _ := r["pre_hash"].(string)
	env, _ := r["envelope"].(map[string]any)
	envHash, _ := env["hash"].(string)
	acc, _ := r["accepted_at"].(json.Number).Int64()
	h, err := adp.RecordHash(r["room_id"].(string), seqOf(r), pre, envHash, acc)
	if err != nil {
		t.Fatal(err)
	}
	r["hash"] = h
}
