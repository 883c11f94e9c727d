package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// These tests use an httptest TLS fake: the faults they need (5xx, 429,
// cut connections, oversized or malformed bodies, redirects, hostile
// discovery documents) cannot be provoked on the real hub.

func TestReadRetriesOn5xxThen200(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 2)
	f.handle("GET /v1/rooms/room0001/events", counter(func(n int, w http.ResponseWriter) bool {
		if n <= 2 {
			writeError(w, 503, "unavailable", "try again", nil)
			return true
		}
		return false
	}, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, recordsList(recs, "")) }))
	h := f.host()
	page, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 3 || page.Items[2].Seq != 3 {
		t.Fatalf("page %+v", page)
	}
	if got := f.count("/v1/rooms/room0001/events"); got != 3 {
		t.Fatalf("attempts %d, want 3", got)
	}
	// The discovery is read before the first attempt; the invalidation
	// by the 503s takes effect for the next call.
	if got := f.count("/.well-known/agent-discourse"); got != 1 {
		t.Fatalf("discovery reads %d, want 1", got)
	}
	if _, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{}); err != nil {
		t.Fatal(err)
	}
	if got := f.count("/.well-known/agent-discourse"); got != 2 {
		t.Fatalf("discovery reads after 5xx %d, want 2 (cache invalidated)", got)
	}
	if _, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{}); err != nil {
		t.Fatal(err)
	}
	if got := f.count("/.well-known/agent-discourse"); got != 2 {
		t.Fatalf("discovery reads after a success %d, want 2 (cached)", got)
	}
}

func TestReadGivesUpAfterMaxAttempts(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 500, "internal_error", "boom", map[string]any{"k": 1})
	})
	h := f.host()
	_, err := h.Room(ctxT(t), fixtureRoom)
	var se *Error
	if !errors.As(err, &se) || se.Status != 500 || se.Code != "internal_error" || se.Message != "boom" || !se.Retryable() {
		t.Fatalf("err %v", err)
	}
	if got := f.count("/v1/rooms/room0001"); got != fastRetry.MaxAttempts {
		t.Fatalf("attempts %d, want %d", got, fastRetry.MaxAttempts)
	}
}

func TestReadNotRetriedOn4xx(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Max-Seen-Nonce", "42")
		writeError(w, 404, "room_not_found", "no such room", map[string]any{"room_id": "room0001", "n": 9007199254740991})
	})
	_, err := f.host().Room(ctxT(t), fixtureRoom)
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("err %T %v", err, err)
	}
	if se.Status != 404 || se.Code != adp.CodeRoomNotFound || se.Data["room_id"] != "room0001" || se.MaxSeenNonce != "42" || se.Retryable() {
		t.Fatalf("error %+v", se)
	}
	if se.Data["n"].(interface{ String() string }).String() != "9007199254740991" {
		t.Fatalf("data number not exact: %#v", se.Data["n"])
	}
	if ErrorCode(err) != adp.CodeRoomNotFound {
		t.Fatalf("ErrorCode %q", ErrorCode(err))
	}
	if got := f.count("/v1/rooms/room0001"); got != 1 {
		t.Fatalf("attempts %d, want 1", got)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(403)
		_, _ = io.WriteString(w, "<html>nope</html>")
	})
	_, err := f.host().Room(ctxT(t), fixtureRoom)
	var se *Error
	if !errors.As(err, &se) || se.Status != 403 || se.Code != "" || !strings.Contains(se.Message, "not an Agent Identity error") {
		t.Fatalf("err %v", err)
	}
}

func Test429HonoursRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", counter(func(n int, w http.ResponseWriter) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			writeError(w, 429, "rate_limited", "slow down", map[string]any{"retry_after": 1})
			return true
		}
		return false
	}, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": "room0001", "status": "active"})
	}))
	start := time.Now()
	r, err := f.host().Room(ctxT(t), fixtureRoom)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("retried after %s; Retry-After asked for 1s", el)
	}
	if r.ID != fixtureRoom || r.Status != adp.RoomActive {
		t.Fatalf("room %+v", r)
	}
}

func Test429RetryAfterBeyondBoundReturned(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		writeError(w, 429, "rate_limited", "slow down", nil)
	})
	start := time.Now()
	_, err := f.host().Room(ctxT(t), fixtureRoom)
	var se *Error
	if !errors.As(err, &se) || se.Code != identity.CodeRateLimited || se.RetryAfter != 120*time.Second {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > time.Second || f.count("/v1/rooms/room0001") != 1 {
		t.Fatalf("a Retry-After beyond MaxRetryAfter must be returned at once")
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"Wed, 01 Jul 2026 12:00:10 GMT": 10 * time.Second,
		"Wed, 01 Jul 2026 11:00:00 GMT": 0,
		"99999999":                      86400 * time.Second,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestNetworkErrorRetriedForReads(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", counter(func(n int, w http.ResponseWriter) bool {
		if n == 1 {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return true
		}
		return false
	}, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": "room0001"})
	}))
	h := f.host()
	if _, err := h.Room(ctxT(t), fixtureRoom); err != nil {
		t.Fatal(err)
	}
	if got := f.count("/v1/rooms/room0001"); got != 2 {
		t.Fatalf("attempts %d, want 2", got)
	}
}

func TestNetworkErrorAfterRetries(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close()
	})
	_, err := f.host().Room(ctxT(t), fixtureRoom)
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Write || ne.Attempts != fastRetry.MaxAttempts || !IsNetwork(err) {
		t.Fatalf("err %T %v", err, err)
	}
}

func TestWriteNotRetried(t *testing.T) {
	recs := chain(t, "https://example.invalid", 1)
	env := recs[1].Envelope
	t.Run("5xx", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		f.handle("POST /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 503, "unavailable", "later", nil)
		})
		_, err := f.host().Submit(ctxT(t), fixtureRoom, env)
		var se *Error
		if !errors.As(err, &se) || se.Status != 503 || !se.Retryable() {
			t.Fatalf("err %v", err)
		}
		if got := f.count("/v1/rooms/room0001"); got != 1 {
			t.Fatalf("write attempts %d, want 1", got)
		}
	})
	t.Run("network", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		f.handle("POST /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
		})
		_, err := f.host().Submit(ctxT(t), fixtureRoom, env)
		var ne *NetworkError
		if !errors.As(err, &ne) || !ne.Write || ne.Attempts != 1 || !strings.Contains(err.Error(), "outcome unknown") {
			t.Fatalf("err %T %v", err, err)
		}
		if got := f.count("/v1/rooms/room0001"); got != 1 {
			t.Fatalf("write attempts %d, want 1", got)
		}
	})
	t.Run("429", func(t *testing.T) {
		f := newFake(t)
		f.discovery(nil)
		f.handle("POST /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			writeError(w, 429, "rate_limited", "quota", nil)
		})
		_, err := f.host().Submit(ctxT(t), fixtureRoom, env)
		var se *Error
		if !errors.As(err, &se) || se.RetryAfter != time.Second || f.count("/v1/rooms/room0001") != 1 {
			t.Fatalf("err %v, attempts %d", err, f.count("/v1/rooms/room0001"))
		}
	})
}

func TestNonceNotGreaterCarriesMaxSeenNonce(t *testing.T) {
	recs := chain(t, "https://example.invalid", 1)
	f := newFake(t)
	f.discovery(nil)
	f.handle("POST /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Max-Seen-Nonce", "1800000009999")
		writeError(w, 409, "nonce_not_greater", "nonce too small", map[string]any{"max_seen_nonce": 1800000009999})
	})
	_, err := f.host().Submit(ctxT(t), fixtureRoom, recs[1].Envelope)
	var se *Error
	if !errors.As(err, &se) || se.Code != identity.CodeNonceNotGreater || se.MaxSeenNonce != "1800000009999" {
		t.Fatalf("err %v", err)
	}
	next, err := identity.ApplyMaxSeenNonce(1, 1800000000000, se.MaxSeenNonce)
	if err != nil || next != 1800000010000 {
		t.Fatalf("ApplyMaxSeenNonce = %d, %v", next, err)
	}
}

func TestSubmitReturnsRecordAndMaxSeenNonce(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 2)
	f.handle("POST /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		env, err := identity.ParseEnvelope(mustRead(r.Body))
		if err != nil {
			writeError(w, 400, "invalid_event", err.Error(), nil)
			return
		}
		if r.Header.Get("Authorization") != "" {
			writeError(w, 400, "invalid_request", "a write carries no JWT", nil)
			return
		}
		w.Header().Set("Max-Seen-Nonce", "77")
		for _, rec := range recs {
			if rec.EnvelopeHash() == env.Hash {
				writeJSON(w, 200, rec.Value())
				return
			}
		}
		writeJSON(w, 200, recs[1].Value()) // a record of another envelope
	})
	h := f.host()
	res, err := h.Submit(ctxT(t), fixtureRoom, recs[2].Envelope)
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Seq != 3 || res.Record.Hash != recs[2].Hash || res.MaxSeenNonce != "77" {
		t.Fatalf("result %+v", res)
	}
	// A record committing to another envelope is refused.
	other := signEv(t, testSigner("alice"), identity.Event{Type: adp.TypeMessageCreate, CreatedAt: fixtureT0, Nonce: 5, Payload: jsonValue(t, map[string]any{"text": "other"}), Fields: adp.Fields{RoomID: fixtureRoom, Base: &adp.Link{Seq: int64(1), Hash: recs[0].Hash}}.Map()})
	_, err = h.Submit(ctxT(t), fixtureRoom, other)
	var re *ResponseError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "not the submitted") {
		t.Fatalf("err %v", err)
	}
	// Submit refuses the types that have their own endpoints, before any I/O.
	if _, err := h.Submit(ctxT(t), fixtureRoom, recs[0].Envelope); err == nil {
		t.Fatal("Submit accepted a room.create")
	}
	if _, err := h.Submit(ctxT(t), "../x", recs[1].Envelope); err == nil {
		t.Fatal("Submit accepted an invalid room id")
	}
}

func TestCreateRoom(t *testing.T) {
	f := newFake(t)
	genesis := chain(t, f.origin, 0)[0]
	f.discovery(map[string]string{"rooms": f.origin + "/api/v1/rooms"})
	f.handle("POST /api/v1/rooms", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Max-Seen-Nonce", itoa64(fixtureT0))
		writeJSON(w, 201, map[string]any{"id": fixtureRoom, "status": "scheduled", "url": f.origin + "/api/v1/rooms/" + fixtureRoom,
			"seq": 1, "pre_hash": nil, "hash": genesis.Hash, "accepted_at": genesis.AcceptedAt, "future": true})
	})
	res, err := f.host().CreateRoom(ctxT(t), genesis.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != fixtureRoom || res.Status != adp.RoomScheduled || res.MaxSeenNonce != itoa64(fixtureT0) || res.Raw["future"] != true {
		t.Fatalf("result %+v", res)
	}
	rec, err := res.Record(genesis.Envelope)
	if err != nil || rec.Hash != genesis.Hash || rec.Seq != 1 {
		t.Fatalf("record %+v %v", rec, err)
	}
	// acceptance fields that do not hash to the record hash are refused
	bad := *res
	bad.AcceptedAt++
	if _, err := bad.Record(genesis.Envelope); err == nil {
		t.Fatal("a wrong accepted_at was accepted")
	}
}

func TestOversizedBodies(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	big := strings.Repeat("x", 300<<10)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": "room0001", "topic": big})
	})
	f.handle("GET /v1/rooms/room0001/events", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"result": []any{}, "pad": big})
	})
	h := f.host()
	_, err := h.Room(ctxT(t), fixtureRoom)
	var re *ResponseError
	if !errors.As(err, &re) || !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("err %v", err)
	}
	if got := f.count("/v1/rooms/room0001"); got != 1 {
		t.Fatalf("an oversized body is not retried: %d attempts", got)
	}
	// a page has the larger bound
	if _, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{}); err != nil {
		t.Fatal(err)
	}
	small := f.host(func(o *Options) { o.MaxResponseBytes = 64 << 10 })
	if _, err := small.Events(ctxT(t), fixtureRoom, EventsQuery{}); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("err %v", err)
	}
}

func TestRedirectRefused(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://evil.example/v1/rooms/room0001", http.StatusFound)
	})
	for name, hc := range map[string]*http.Client{
		"NewHTTPClient": f.httpClient(),
		// a caller's client that would follow redirects: NewHost replaces
		// its policy
		"following": f.srv.Client(),
	} {
		t.Run(name, func(t *testing.T) {
			h, err := NewHost(f.origin, hc, testSigner("alice"), Options{Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Room(ctxT(t), fixtureRoom)
			var re *ResponseError
			if !errors.As(err, &re) || !errors.Is(err, ErrRedirect) {
				t.Fatalf("err %T %v", err, err)
			}
		})
	}
	// and a client that returns the 3xx response itself
	hc := f.srv.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h, _ := NewHost(f.origin, hc, nil, Options{Retry: fastRetry})
	if _, err := h.Room(ctxT(t), fixtureRoom); !errors.Is(err, ErrRedirect) {
		t.Fatalf("err %v", err)
	}
}

func TestPlainHTTPRefused(t *testing.T) {
	if _, err := NewHost("http://127.0.0.1:1", nil, nil, Options{}); err == nil {
		t.Fatal("an http origin was accepted")
	}
	if _, err := NewHost("https://host.example/path", nil, nil, Options{}); err == nil {
		t.Fatal("an origin with a path was accepted")
	}
	h, err := NewHost("HTTPS://Host.Example:443", nil, nil, Options{})
	if err != nil || h.Origin() != "https://host.example" {
		t.Fatalf("origin %v %v", h, err)
	}
	// the transport itself refuses http
	hc := NewHTTPClient(nil, time.Second)
	if _, err := hc.Get("http://127.0.0.1:1/"); err == nil || !strings.Contains(err.Error(), "non-https") {
		t.Fatalf("err %v", err)
	}
}

func TestDiscoveryOtherOriginRefused(t *testing.T) {
	cases := map[string]map[string]any{
		"endpoint elsewhere": {"rooms": "https://evil.example/v1/rooms"},
		"other port":         {"rooms": "https://127.0.0.1:1/v1/rooms"},
		"plain http":         {"rooms": "http://HOST/v1/rooms"},
		"user info":          {"rooms": "https://u:p@HOST/v1/rooms"},
		"query":              {"rooms": "https://HOST/v1/rooms?x=1"},
		"not a string":       {"rooms": 5},
	}
	for name, eps := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			for k, v := range eps {
				if s, ok := v.(string); ok {
					eps[k] = strings.Replace(s, "HOST", strings.TrimPrefix(f.origin, "https://"), 1)
				}
			}
			f.handle("GET /.well-known/agent-discourse", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"protocol": "agent-discourse/1.0", "service": f.origin, "endpoints": eps})
			})
			f.handle("/", func(w http.ResponseWriter, r *http.Request) { t.Errorf("request reached %s", r.URL.Path) })
			h := f.host()
			_, err := h.Room(ctxT(t), fixtureRoom)
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("err %T %v", err, err)
			}
			if name == "endpoint elsewhere" && !errors.Is(err, ErrOtherOrigin) {
				t.Fatalf("err %v", err)
			}
		})
	}
	t.Run("service elsewhere", func(t *testing.T) {
		f := newFake(t)
		f.handle("GET /.well-known/agent-discourse", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"protocol": "agent-discourse/1.0", "service": "https://evil.example"})
		})
		if _, err := f.host().Discovery(ctxT(t)); err == nil || !strings.Contains(err.Error(), "not the configured origin") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("wrong protocol", func(t *testing.T) {
		f := newFake(t)
		f.handle("GET /.well-known/agent-discourse", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"protocol": "agent-profile/1.0", "service": f.origin})
		})
		if _, err := f.host().Discovery(ctxT(t)); err == nil {
			t.Fatal("wrong protocol accepted")
		}
	})
	t.Run("duplicate member", func(t *testing.T) {
		f := newFake(t)
		f.handle("GET /.well-known/agent-discourse", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"protocol":"agent-discourse/1.0","service":"`+f.origin+`","service":"`+f.origin+`"}`)
		})
		if _, err := f.host().Discovery(ctxT(t)); err == nil {
			t.Fatal("duplicate member accepted")
		}
	})
}

func TestDiscoveryEndpointsUsed(t *testing.T) {
	f := newFake(t)
	f.discovery(map[string]string{
		"rooms":    f.origin + "/api/rooms/",
		"my_rooms": f.origin + "/api/mine",
	})
	f.handle("GET /api/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": "room0001"})
	})
	// D-04: the public list is GET {rooms}.
	f.handle("GET /api/rooms", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("public rooms read sent a JWT")
		}
		if q := r.URL.Query(); q.Get("tag") != "go" || q.Get("limit") != "5" || q.Get("starts_after") != "7" || q.Has("keyword") {
			t.Errorf("query %v", q)
		}
		writeJSON(w, 200, map[string]any{"result": []any{map[string]any{"id": "room0001", "topic": "x", "x-extra": 1}}, "next_cursor": "c2"})
	})
	// D-05: my_rooms items are room resources plus membership and role;
	// this one has no head, so seq and hash stand for it.
	hash := identity.EncodeBase64URL(make([]byte, 32))
	f.handle("GET /api/mine", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			t.Error("me/rooms sent no JWT")
		}
		writeJSON(w, 200, map[string]any{"result": []any{map[string]any{"id": "room0001", "status": "active",
			"url": f.origin + "/api/rooms/room0001", "seq": 3, "hash": hash, "accepted_at": 5, "pre_hash": hash,
			"role": "moderator", "membership": "creator"}}})
	})
	h := f.host()
	ctx := ctxT(t)
	if _, err := h.Room(ctx, fixtureRoom); err != nil {
		t.Fatal(err)
	}
	u, err := h.RoomURL(ctx, fixtureRoom)
	if err != nil || u != f.origin+"/api/rooms/room0001" {
		t.Fatalf("RoomURL %q %v", u, err)
	}
	pub, err := h.PublicRooms(ctx, PublicRoomQuery{Tag: "go", Limit: 5, StartsAfter: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Items) != 1 || pub.NextCursor != "c2" || pub.Items[0].Topic != "x" || pub.Items[0].Raw["x-extra"] == nil {
		t.Fatalf("page %+v", pub)
	}
	mine, err := h.MyRooms(ctx, MyRoomsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if m := mine.Items[0]; len(mine.Items) != 1 || m.Role != adp.RoleModerator || m.Membership != "creator" || m.ID != fixtureRoom ||
		m.Seq != 3 || m.Hash != hash || m.AcceptedAt != 5 || m.Head != (adp.Link{Seq: 3, Hash: hash}) {
		t.Fatalf("mine %+v", mine.Items[0])
	}
	if got := f.count("/.well-known/agent-discourse"); got != 1 {
		t.Fatalf("discovery read %d times, want once", got)
	}
}

// TestDiscoveryLegacyEndpoints: a host that publishes the endpoint names
// older apconnect hubs used (public_rooms, me_rooms) and the older profile
// member still works: GET {rooms} answering 405 falls back to public_rooms.
func TestDiscoveryLegacyEndpoints(t *testing.T) {
	f := newFake(t)
	f.handle("GET /.well-known/agent-discourse", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"protocol": "agent-discourse/1.0", "service": f.origin,
			"endpoints": map[string]any{"rooms": f.origin + "/v1/rooms", "public_rooms": f.origin + "/v1/rooms/public", "me_rooms": f.origin + "/v1/mine"},
			"profile":   map[string]any{"mode": "local", "service": f.origin, "protocol": "agent-profile/1.0"}})
	})
	f.handle("GET /v1/rooms", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 405, "invalid_request", "method GET is not allowed here; use POST", nil)
	})
	f.handle("GET /v1/rooms/public", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("tag") != "go" {
			t.Errorf("query %v", r.URL.Query())
		}
		writeJSON(w, 200, map[string]any{"result": []any{map[string]any{"id": "room0001"}}})
	})
	f.handle("GET /v1/mine", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"result": []any{map[string]any{"id": "room0001", "membership": "active", "role": "speaker"}}})
	})
	h := f.host()
	ctx := ctxT(t)
	pub, err := h.PublicRooms(ctx, PublicRoomQuery{Tag: "go"})
	if err != nil || len(pub.Items) != 1 || pub.Items[0].ID != fixtureRoom {
		t.Fatalf("public rooms %+v %v", pub, err)
	}
	mine, err := h.MyRooms(ctx, MyRoomsQuery{})
	if err != nil || len(mine.Items) != 1 || mine.Items[0].Role != adp.RoleSpeaker {
		t.Fatalf("my rooms %+v %v", mine, err)
	}
	d, err := h.Discovery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if svc, req := d.ProfileService(); svc != f.origin || req {
		t.Fatalf("profile service %q %v", svc, req)
	}
	if got := f.count("/v1/rooms/public"); got != 1 {
		t.Fatalf("legacy list asked %d times", got)
	}
}

// TestDiscoveryProfileMember: the closed {service, required?} of 0.12.6,
// the older {mode, service, protocol}, {mode: optional} and none.
func TestDiscoveryProfileMember(t *testing.T) {
	origin := "https://hub.example"
	for _, c := range []struct {
		profile  string
		service  string
		required bool
	}{
		{`{"service":"https://profiles.example","required":true}`, "https://profiles.example", true},
		{`{"service":"https://hub.example"}`, "https://hub.example", false},
		{`{"mode":"local","service":"https://hub.example","protocol":"agent-profile/1.0"}`, "https://hub.example", false},
		{`{"mode":"optional"}`, "", false},
		{``, "", false},
	} {
		doc := `{"protocol":"agent-discourse/1.0","service":"` + origin + `"`
		if c.profile != "" {
			doc += `,"profile":` + c.profile
		}
		d, err := parseDiscovery([]byte(doc+"}"), origin, "agent-discourse", "agent-discourse/1.0")
		if err != nil {
			t.Fatalf("%s: %v", c.profile, err)
		}
		if svc, req := d.ProfileService(); svc != c.service || req != c.required {
			t.Errorf("%s: service %q required %v", c.profile, svc, req)
		}
	}
}

func TestDiscoveryMissingUsesDefaults(t *testing.T) {
	f := newFake(t) // no discovery document: 404
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": "room0001"})
	})
	f.handle("GET /v1/me/rooms", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"result": []any{}})
	})
	h := f.host()
	if _, err := h.Room(ctxT(t), fixtureRoom); err != nil {
		t.Fatal(err)
	}
	if _, err := h.MyRooms(ctxT(t), MyRoomsQuery{}); err != nil {
		t.Fatal(err)
	}
	d, err := h.Discovery(ctxT(t))
	if err != nil || d.Raw != nil || len(d.Endpoints) != 0 {
		t.Fatalf("discovery %+v %v", d, err)
	}
	if got := f.count("/.well-known/agent-discourse"); got != 1 {
		t.Fatalf("discovery read %d times, want 1 (a 404 is cached)", got)
	}
}

func TestDiscoveryRetriedAfterNetworkError(t *testing.T) {
	f := newFake(t)
	f.handle("GET /.well-known/agent-discourse", counter(func(n int, w http.ResponseWriter) bool {
		if n == 1 {
			writeError(w, 502, "bad_gateway", "", nil)
			return true
		}
		return false
	}, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"protocol": "agent-discourse/1.0", "service": f.origin})
	}))
	if _, err := f.host().Discovery(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := f.count("/.well-known/agent-discourse"); got != 2 {
		t.Fatalf("discovery attempts %d, want 2", got)
	}
}

// TestMintTokenDefaults: with the default lifetime a token is valid from
// 30 s before it was minted until 60 s after, and a strict verifier (SDK
// 0.12.6: no skew) accepts it over that whole span.
func TestMintTokenDefaults(t *testing.T) {
	s := testSigner("alice")
	now := time.Unix(1_800_000_000, 0)
	o := Options{}.withDefaults()
	tok, err := mintToken(s, "https://hub.example", now, o.TokenLifetime)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{now.Add(-TokenBackdate), now, now.Add(DefaultTokenLifetime)} {
		c, err := identity.VerifyToken(tok, "https://hub.example", at, identity.MaxTokenLifetime, 0)
		if err != nil {
			t.Fatalf("at %s: %v", at, err)
		}
		if c.ExpiresAt.Sub(c.IssuedAt) != DefaultTokenLifetime+TokenBackdate {
			t.Fatalf("claims %+v", c)
		}
	}
	for _, at := range []time.Time{now.Add(-TokenBackdate - time.Second), now.Add(DefaultTokenLifetime + time.Second)} {
		if _, err := identity.VerifyToken(tok, "https://hub.example", at, identity.MaxTokenLifetime, 0); err == nil {
			t.Fatalf("accepted at %s", at)
		}
	}
}

func TestRequestJWTs(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	recs := chain(t, f.origin, 1)
	f.handle("GET /v1/rooms/room0001/events", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, recordsList(recs, ""))
	})
	now := time.Unix(1_800_000_000, 0)
	minted := []time.Time{now, now.Add(time.Second)}
	h := f.host(func(o *Options) { o.Clock = func() time.Time { return now }; o.TokenLifetime = time.Hour })
	for range 2 {
		if _, err := h.Events(ctxT(t), fixtureRoom, EventsQuery{}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	auths := f.authorizations()
	if len(auths) != 2 || auths[0] == auths[1] {
		t.Fatalf("authorizations %q: want a fresh token per request", auths)
	}
	for i, a := range auths {
		tok, ok := strings.CutPrefix(a, "Bearer ")
		if !ok {
			t.Fatalf("authorization %q", a)
		}
		// D-19: an SDK 0.12.6 host (no skew) accepts it at once; iat is
		// backdated 30 s, exp is the capped lifetime from now, and
		// exp - iat is at most 300 s.
		claims, err := identity.VerifyToken(tok, f.origin, minted[i], identity.MaxTokenLifetime, 0)
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if claims.AgentID != testSigner("alice").AgentID() || claims.ExpiresAt.Sub(claims.IssuedAt) != identity.MaxTokenLifetime ||
			!claims.IssuedAt.Equal(minted[i].Add(-TokenBackdate)) || !claims.ExpiresAt.Equal(minted[i].Add(MaxTokenLifetime)) {
			t.Fatalf("claims %+v (iat 30 s back, lifetime capped at 300 s)", claims)
		}
		// A host clock up to 30 s behind still accepts it.
		if _, err := identity.VerifyToken(tok, f.origin, minted[i].Add(-TokenBackdate), identity.MaxTokenLifetime, 0); err != nil {
			t.Fatalf("token %d on a host 30 s behind: %v", i, err)
		}
		if strings.Contains(f.logs.String(), tok) || strings.Contains(f.logs.String(), "Bearer") {
			t.Fatal("a token reached the log")
		}
	}
	if !strings.Contains(f.logs.String(), "/v1/rooms/room0001/events") {
		t.Fatalf("the request was not logged: %s", f.logs.String())
	}
}

func TestAnonymousHost(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("anonymous host sent a JWT")
		}
		writeJSON(w, 200, map[string]any{"id": "room0001"})
	})
	h, err := NewHost(f.origin, f.httpClient(), nil, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if h.AgentID() != "" {
		t.Fatal("anonymous host has an Agent ID")
	}
	if _, err := h.Room(ctxT(t), fixtureRoom); err != nil {
		t.Fatal(err)
	}
	if _, err := h.MyRooms(ctxT(t), MyRoomsQuery{}); !errors.Is(err, ErrNoSigner) {
		t.Fatalf("MyRooms err %v", err)
	}
	if _, err := h.Live(ctxT(t), fixtureRoom); !errors.Is(err, ErrNoSigner) {
		t.Fatalf("Live err %v", err)
	}
	if _, err := h.PutAgentStatus(ctxT(t), fixtureRoom, AgentStatusInput{State: "idle"}); !errors.Is(err, ErrNoSigner) {
		t.Fatalf("PutAgentStatus err %v", err)
	}
}

func TestContextCancelDuringBackoff(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 503, "unavailable", "", nil)
	})
	h := f.host(func(o *Options) {
		o.Retry.BaseDelay = time.Hour
		o.Retry.MaxDelay = time.Hour
		o.Retry.MaxElapsed = 2 * time.Hour
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := h.Room(ctx, fixtureRoom)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func TestMaxElapsedBoundsRetries(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 503, "unavailable", "", nil)
	})
	h := f.host(func(o *Options) {
		o.Retry = RetryPolicy{MaxAttempts: 100, BaseDelay: 40 * time.Millisecond, MaxDelay: 40 * time.Millisecond, MaxElapsed: 150 * time.Millisecond}
	})
	start := time.Now()
	if _, err := h.Room(ctxT(t), fixtureRoom); ErrorCode(err) != "unavailable" {
		t.Fatalf("err %v", err)
	}
	if el := time.Since(start); el > 2*time.Second || f.count("/v1/rooms/room0001") >= 10 {
		t.Fatalf("%d attempts in %s", f.count("/v1/rooms/room0001"), el)
	}
}

func TestAttemptTimeout(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	h := f.host(func(o *Options) { o.Timeout = 100 * time.Millisecond; o.Retry.MaxAttempts = 2 })
	start := time.Now()
	_, err := h.Room(ctxT(t), fixtureRoom)
	if !IsNetwork(err) || time.Since(start) > 3*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func TestTimeoutDefaultsToClientTimeout(t *testing.T) {
	f := newFake(t)
	f.discovery(nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.handle("GET /v1/rooms/room0001", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	hc := f.httpClient()
	hc.Timeout = 100 * time.Millisecond
	h, err := NewHost(f.origin, hc, nil, Options{Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := h.Room(ctxT(t), fixtureRoom); !IsNetwork(err) || time.Since(start) > 3*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func mustRead(r io.Reader) []byte {
	b, _ := io.ReadAll(r)
	return b
}

// readBounded returns the body whatever length was announced, and refuses
// one past the limit.
func TestReadBounded(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 3000)
	for _, size := range []int64{-1, 0, 10, 2999, 3000, 3001, 5000, 1 << 40} {
		got, err := readBounded(bytes.NewReader(body), 4000, size)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("announced %d: %d bytes, %v", size, len(got), err)
		}
		if _, err := readBounded(bytes.NewReader(body), 2999, size); !errors.Is(err, ErrResponseTooLarge) {
			t.Errorf("announced %d, over the limit: %v", size, err)
		}
	}
	if got, err := readBounded(bytes.NewReader(nil), 10, 0); err != nil || len(got) != 0 {
		t.Errorf("empty: %q %v", got, err)
	}
}
