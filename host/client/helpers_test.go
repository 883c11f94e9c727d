package client

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// testSigner returns a deterministic signer for a name.
func testSigner(name string) *identity.KeySigner {
	seed := sha256.Sum256([]byte("client-test/" + name))
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(seed[:]))
}

// fastRetry keeps retry tests quick.
var fastRetry = RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxElapsed: 5 * time.Second, MaxRetryAfter: 2 * time.Second}

// logBuffer collects log output, safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// fake is an httptest TLS server standing in for an ADP host where the
// behaviour under test (faults, malformed data) cannot be produced by the
// real hub. Handlers are set per path pattern; it counts requests per path
// and serves a discovery document unless one is set.
type fake struct {
	t      *testing.T
	srv    *httptest.Server
	mux    *http.ServeMux
	mu     sync.Mutex
	hits   map[string]int
	auths  []string // Authorization headers seen, in order
	origin string
	logs   *logBuffer
}

func newFake(t *testing.T) *fake {
	t.Helper()
	f := &fake{t: t, mux: http.NewServeMux(), hits: map[string]int{}, logs: &logBuffer{}}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits[r.URL.Path]++
		if a := r.Header.Get("Authorization"); a != "" {
			f.auths = append(f.auths, a)
		}
		f.mu.Unlock()
		f.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	o, err := identity.NormalizeOrigin(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f.origin = o
	return f
}

// discovery installs an ADP discovery document with the given endpoints.
func (f *fake) discovery(endpoints map[string]string) {
	f.handle("GET /.well-known/agent-discourse", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"protocol": "agent-discourse/1.0", "service": f.origin, "endpoints": endpoints})
	})
}

func (f *fake) handle(pattern string, h http.HandlerFunc) { f.mux.HandleFunc(pattern, h) }

func (f *fake) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

func (f *fake) authorizations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auths...)
}

// httpClient returns NewHTTPClient trusting only the fake's certificate.
func (f *fake) httpClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(f.srv.Certificate())
	hc := NewHTTPClient(pool, 5*time.Second)
	f.t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// host returns a Host for the fake, authenticated as "alice", logging at
// debug level into f.logs.
func (f *fake) host(edit ...func(*Options)) *Host {
	f.t.Helper()
	opts := Options{Retry: fastRetry, Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, e := range edit {
		e(&opts)
	}
	h, err := NewHost(f.origin, f.httpClient(), testSigner("alice"), opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string, data map[string]any) {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// counter returns a handler that answers with fail(n) for the n-th call
// (1-based) while fail returns true, then with ok.
func counter(fail func(n int, w http.ResponseWriter) bool, ok http.HandlerFunc) http.HandlerFunc {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		if fail(int(n.Add(1)), w) {
			return
		}
		ok(w, r)
	}
}

const (
	fixtureRoom = "room0001"
	fixtureT0   = int64(1_800_000_000_000)
)

// chain builds a small valid record chain of fixtureRoom: room.create by
// alice, then n message.create records. Records are well-formed (shape and
// hashes) and signed; the fake serves them.
func chain(t *testing.T, origin string, n int) []*adp.Record {
	t.Helper()
	alice := testSigner("alice")
	create := signEv(t, alice, identity.Event{
		Type: adp.TypeRoomCreate, CreatedAt: fixtureT0, Nonce: fixtureT0,
		Payload: jsonValue(t, map[string]any{"host": origin, "topic": "t", "visibility": "public",
			"start_time": fixtureT0, "end_time": fixtureT0 + 7_200_000}),
	})
	rec, err := adp.NewRecord(fixtureRoom, adp.Link{}, fixtureT0+1, create)
	if err != nil {
		t.Fatal(err)
	}
	out := []*adp.Record{rec}
	for i := 1; i <= n; i++ {
		prev := out[len(out)-1]
		room := fixtureRoom
		seq, hash := prev.Seq, prev.Hash
		env := signEv(t, alice, identity.Event{
			Type: adp.TypeMessageCreate, CreatedAt: fixtureT0 + int64(i)*1000, Nonce: fixtureT0 + int64(i)*1000,
			Payload: jsonValue(t, map[string]any{"content_type": "text/plain", "content": strings.Repeat("x", i)}), Fields: adp.Fields{RoomID: room, Base: &adp.Link{Seq: seq, Hash: hash}}.Map()})
		r, err := adp.NewRecord(fixtureRoom, prev.Link(), fixtureT0+int64(i)*1000+1, env)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func signEv(t *testing.T, s identity.Signer, ev identity.Event) *identity.Envelope {
	t.Helper()
	ev.Protocol = adp.Protocol
	ev.Actor = s.AgentID()
	env, err := identity.SignEvent(s, ev)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := identity.ParseStrict(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recordsList renders records as an Agent Identity list body.
func recordsList(recs []*adp.Record, next string) map[string]any {
	items := make([]any, len(recs))
	for i, r := range recs {
		items[i] = r.Value()
	}
	m := map[string]any{"result": items}
	if next != "" {
		m["next_cursor"] = next
	}
	return m
}

// ctxT returns a context bounded for a test.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// contextWithCancel returns a cancellable test context.
func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctxT(t))
	return ctx, cancel
}
