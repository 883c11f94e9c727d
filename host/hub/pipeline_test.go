package hub_test

import (
	"context"
	"crypto/sha3"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/profile"
)

// probeProtocol stands in for a second protocol (ADP later) to show that
// the pipeline and its nonce cache are shared.
const probeProtocol = "x-probe/1.0"

// probe is a minimal WriteHandler: it accepts every fresh probe envelope
// (quota 3 per minute per actor) and answers with an accepted-record shape.
type probe struct{}

func (probe) Precheck(_ *http.Request, env *identity.Envelope) error {
	if env.Event.Protocol != probeProtocol {
		return hubhttp.Errorf(identity.CodeInvalidEvent, "not a probe event")
	}
	return nil
}

func (probe) NonceFloor(context.Context, *sql.Tx, *identity.Envelope) (int64, error) { return 0, nil }

func (probe) Accept(_ context.Context, w *hubhttp.Write) (*hubhttp.Result, error) {
	if w.Envelope.Event.Type == "probe.reject" {
		return nil, hubhttp.Errorf(identity.CodePermissionDenied, "rejected by the probe")
	}
	if err := w.RateLimit("probe|"+w.Envelope.Event.Actor, hubhttp.Rate{Limit: 3, Per: time.Minute}); err != nil {
		return nil, err
	}
	hash := w.Envelope.Hash
	return &hubhttp.Result{Status: http.StatusCreated, Body: map[string]any{
		"envelope": w.Raw, "accepted_at": w.AcceptedAt, "replayed": false,
	}, AfterCommit: func() { committed.Store(hash, true) }}, nil
}

// committed records the envelopes whose AfterCommit hook ran.
var committed sync.Map

func (probe) Replay(_ context.Context, _ *sql.Tx, acc *hubhttp.Accepted) (*hubhttp.Result, error) {
	return &hubhttp.Result{Status: http.StatusCreated, Body: map[string]any{
		"envelope": acc.Envelope, "accepted_at": acc.AcceptedAt, "replayed": true,
	}}, nil
}

const probePath = "/x-probe/writes"

// signRaw signs an event object without the signer's shape checks, to build
// envelopes that are authentic but malformed.
func signRaw(a *hubtest.Agent, ev map[string]any) []byte {
	b, err := identity.Canonicalize(ev)
	if err != nil {
		panic(err)
	}
	d := sha3.Sum256(b)
	env, _ := json.Marshal(map[string]any{"hash": identity.EncodeBase64URL(d[:]), "event": ev,
		"signature": identity.EncodeBase64URL(a.Signer.SignDigest(d[:]))})
	return env
}

func mountProbe(h *hubtest.Hub) {
	h.Handle("POST "+probePath, h.Pipeline().Handler(probe{}, 4096))
}

func probeEvent(a *hubtest.Agent, t *testing.T, created time.Time, nonce int64, typ string) []byte {
	return a.SignJSON(t, identity.Event{Protocol: probeProtocol, Type: typ, CreatedAt: created.UnixMilli(), Nonce: nonce, Payload: map[string]any{"n": nonce}})
}

type probeResult struct {
	AcceptedAt int64 `json:"accepted_at"`
	Replayed   bool  `json:"replayed"`
}

// TestEnvelopeRejections: steps 1–5 of Agent Identity 6.1 and the endpoint
// precheck, each with its exact code, over the profile endpoint.
func TestEnvelopeRejections(t *testing.T) {
	h := hubtest.Start(t)
	a := hubtest.NewAgent(20)
	good := a.ProfileUpdate(t, h.Now(), 1, payloadFor(a, "ok"))
	var env map[string]any
	json.Unmarshal(good, &env)
	mutate := func(f func(ev map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	other := hubtest.NewAgent(21)
	otherSig := func() string {
		var m map[string]any
		json.Unmarshal(other.ProfileUpdate(t, h.Now(), 1, payloadFor(other, "x")), &m)
		return m["signature"].(string)
	}()
	resign := func(ev identity.Event) []byte { return a.SignJSON(t, ev) }
	payload, _ := identity.ParseStrict([]byte(payloadFor(a, "ok")))
	base := identity.Event{Protocol: profile.Protocol, Type: "profile.update", CreatedAt: h.Now().UnixMilli(), Nonce: 1, Payload: payload}

	for _, c := range []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"not JSON", []byte(`{"hash":`), 400, identity.CodeInvalidEvent},
		{"duplicate member", []byte(strings.Replace(string(good), `"hash":`, `"hash":"x","hash":`, 1)), 400, identity.CodeInvalidEvent},
		{"unpaired surrogate", []byte(strings.Replace(string(good), `"name":"ok"`, `"name":"\ud800"`, 1)), 400, identity.CodeInvalidEvent},
		{"unknown envelope field", mutate(func(m map[string]any) { m["x"] = 1 }), 400, identity.CodeInvalidEvent},
		// A field added after signing breaks the hash; a signed one the
		// protocol does not define is refused by its rules.
		{"unsigned event field", mutate(func(m map[string]any) { m["event"].(map[string]any)["room_id"] = "r" }), 400, identity.CodeInvalidEventHash},
		{"unknown event field", func() []byte { ev := base; ev.Fields = map[string]any{"room_id": "r"}; return resign(ev) }(), 400, identity.CodeInvalidEvent},
		{"nonce zero", mutate(func(m map[string]any) { m["event"].(map[string]any)["nonce"] = 0 }), 400, identity.CodeInvalidEvent},
		{"hash mismatch", mutate(func(m map[string]any) { m["event"].(map[string]any)["nonce"] = 2 }), 400, identity.CodeInvalidEventHash},
		{"signature by another key", mutate(func(m map[string]any) { m["signature"] = otherSig }), 400, identity.CodeInvalidSignature},
		{"malformed signature", mutate(func(m map[string]any) { m["signature"] = "AAAA" }), 400, identity.CodeInvalidSignature},
		{"non-canonical actor", mutate(func(m map[string]any) {
			id := a.ID[:len(a.ID)-1] + "h"
			m["event"].(map[string]any)["actor"] = id
		}), 400, identity.CodeInvalidActor},
		{"wrong protocol", resign(func() identity.Event { e := base; e.Protocol = "agent-profile/2.0"; return e }()), 400, identity.CodeInvalidEvent},
		{"wrong type", resign(func() identity.Event { e := base; e.Type = "profile.delete"; return e }()), 400, identity.CodeInvalidEvent},
		{"payload not an object", signRaw(a, map[string]any{"protocol": profile.Protocol, "type": "profile.update",
			"actor": a.ID, "created_at": base.CreatedAt, "nonce": 1, "payload": []any{}}), 400, identity.CodeInvalidEvent},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, h.Do(http.MethodPost, "/v1/profiles", c.body, nil), c.status, c.code)
		})
	}
	t.Run("wrong content type", func(t *testing.T) {
		r := h.Do(http.MethodPost, "/v1/profiles", good, http.Header{"Content-Type": {"text/plain"}})
		wantError(t, r, http.StatusUnsupportedMediaType, identity.CodeInvalidRequest)
	})
	t.Run("body too large", func(t *testing.T) {
		big := a.ProfileUpdate(t, h.Now(), 1, `{"id":"`+a.ID+`","name":"n","extra":{"k":"`+strings.Repeat("x", 300<<10)+`"}}`)
		r := h.Do(http.MethodPost, "/v1/profiles", big, nil)
		wantError(t, r, http.StatusRequestEntityTooLarge, identity.CodePayloadTooLarge)
	})
	// None of these was accepted; the good envelope still is.
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", good, nil))
}

// TestTimestampWindow: created_at within ±300 s of the hub clock is live;
// one millisecond beyond is timestamp_out_of_window.
func TestTimestampWindow(t *testing.T) {
	clock := hubtest.NewClock(time.UnixMilli(1_800_000_000_000))
	h := hubtest.Start(t, hubtest.WithClock(clock))
	a := hubtest.NewAgent(22)
	now := clock.Now()
	nonce := int64(0)
	for _, c := range []struct {
		offset time.Duration
		ok     bool
	}{
		{-300*time.Second - time.Millisecond, false},
		{300*time.Second + time.Millisecond, false},
		{-300 * time.Second, true},
		{0, true},
		{300 * time.Second, true},
		{-time.Hour, false},
	} {
		t.Run(fmt.Sprint(c.offset), func(t *testing.T) {
			nonce++
			r := h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, now.Add(c.offset), nonce, payloadFor(a, "t")), nil)
			if c.ok {
				wantOK(t, r)
			} else {
				wantError(t, r, http.StatusBadRequest, identity.CodeTimestampOutOfWindow)
			}
		})
	}
}

// TestNonceReplay: a new envelope whose nonce does not exceed the cached
// maximum is nonce_not_greater with Max-Seen-Nonce; the header also comes
// with every acceptance.
func TestNonceReplay(t *testing.T) {
	h := hubtest.Start(t)
	a := hubtest.NewAgent(23)
	r := h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), 10, payloadFor(a, "ten")), nil)
	wantOK(t, r)
	wantMaxSeen(t, r, 10)
	for _, n := range []int64{10, 9, 1} {
		r := h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), n, payloadFor(a, fmt.Sprint("replay ", n))), nil)
		wantError(t, r, http.StatusConflict, identity.CodeNonceNotGreater)
		wantMaxSeen(t, r, 10)
		var e struct {
			Error struct {
				Data struct {
					MaxSeenNonce int64 `json:"max_seen_nonce"`
				} `json:"data"`
			} `json:"error"`
		}
		r.Decode(t, &e)
		if e.Error.Data.MaxSeenNonce != 10 {
			t.Fatalf("data.max_seen_nonce: %s", r.Body)
		}
	}
	r = h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), 11, payloadFor(a, "eleven")), nil)
	wantOK(t, r)
	wantMaxSeen(t, r, 11)
	// Another agent's sequence is independent.
	b := hubtest.NewAgent(24)
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", b.ProfileUpdate(t, h.Now(), 1, payloadFor(b, "b")), nil))
}

// TestNonceCacheSharedAcrossProtocols: one cache per hub covers every
// protocol, since an agent has one nonce sequence.
func TestNonceCacheSharedAcrossProtocols(t *testing.T) {
	h := hubtest.Start(t)
	mountProbe(h)
	a := hubtest.NewAgent(25)
	wantOK(t, h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), 100, payloadFor(a, "p")), nil))
	r := h.Do(http.MethodPost, probePath, probeEvent(a, t, h.Now(), 100, "probe.write"), nil)
	wantError(t, r, http.StatusConflict, identity.CodeNonceNotGreater)
	wantMaxSeen(t, r, 100)
	r = h.Do(http.MethodPost, probePath, probeEvent(a, t, h.Now(), 101, "probe.write"), nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("probe write: %d %s", r.Status, r.Body)
	}
	wantMaxSeen(t, r, 101)
	r = h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, h.Now(), 101, payloadFor(a, "p2")), nil)
	wantError(t, r, http.StatusConflict, identity.CodeNonceNotGreater)
	wantMaxSeen(t, r, 101)
	// A profile envelope posted to the probe endpoint is refused by its
	// precheck, not looked up or accepted.
	wantError(t, h.Do(http.MethodPost, probePath, a.ProfileUpdate(t, h.Now(), 200, payloadFor(a, "p3")), nil), http.StatusBadRequest, identity.CodeInvalidEvent)
}

// TestNonceCacheExpiryAndRestart: the cache entry is valid for two windows
// after the latest acceptance (and survives a restart within them); after
// it expires a protocol without a durable comparison accepts a lower nonce.
// Exact resubmissions resolve from durable history with the original
// accepted_at, whatever the clock.
func TestNonceCacheExpiryAndRestart(t *testing.T) {
	dir := t.TempDir()
	clock := hubtest.NewClock(time.UnixMilli(1_800_000_000_000))
	h := hubtest.Start(t, hubtest.WithDir(dir), hubtest.WithClock(clock))
	mountProbe(h)
	a := hubtest.NewAgent(26)
	first := probeEvent(a, t, clock.Now(), 300, "probe.write")
	r := h.Do(http.MethodPost, probePath, first, nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("probe write: %d %s", r.Status, r.Body)
	}
	var orig probeResult
	r.Decode(t, &orig)
	if orig.AcceptedAt != clock.Now().UnixMilli() {
		t.Fatalf("accepted_at %d is not the hub clock %d", orig.AcceptedAt, clock.Now().UnixMilli())
	}

	clock.Advance(599 * time.Second)
	h = h.Restart()
	mountProbe(h)
	r = h.Do(http.MethodPost, probePath, probeEvent(a, t, clock.Now(), 250, "probe.write"), nil)
	wantError(t, r, http.StatusConflict, identity.CodeNonceNotGreater)
	wantMaxSeen(t, r, 300)

	clock.Advance(2 * time.Second) // 601 s after the acceptance: expired
	r = h.Do(http.MethodPost, probePath, probeEvent(a, t, clock.Now(), 250, "probe.write"), nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("lower nonce after expiry: %d %s", r.Status, r.Body)
	}
	wantMaxSeen(t, r, 250)

	clock.Advance(time.Hour)
	r = h.Do(http.MethodPost, probePath, first, nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("resubmission: %d %s", r.Status, r.Body)
	}
	var again probeResult
	r.Decode(t, &again)
	if !again.Replayed || again.AcceptedAt != orig.AcceptedAt {
		t.Fatalf("resubmission answered %+v, want the original acceptance %+v", again, orig)
	}
	if _, ok := committed.Load(eventID(t, first)); !ok {
		t.Fatal("AfterCommit did not run for the accepted write")
	}
}

// TestNonceCacheBoundary (PROTOCOL-0.12 §2.6, D-17): with the default TTL
// of 2 × window (600 s) an entry stored at T is still valid at T+600000 —
// its final millisecond — and expired at T+600001.
func TestNonceCacheBoundary(t *testing.T) {
	clock := hubtest.NewClock(time.UnixMilli(1_800_000_000_000))
	h := hubtest.Start(t, hubtest.WithClock(clock))
	mountProbe(h)
	a := hubtest.NewAgent(29)
	if r := h.Do(http.MethodPost, probePath, probeEvent(a, t, clock.Now(), 5, "probe.write"), nil); r.Status != http.StatusCreated {
		t.Fatalf("nonce 5: %d %s", r.Status, r.Body)
	}
	clock.Advance(600 * time.Second)
	r := h.Do(http.MethodPost, probePath, probeEvent(a, t, clock.Now(), 5, "probe.write"), nil)
	wantError(t, r, http.StatusConflict, identity.CodeNonceNotGreater)
	wantMaxSeen(t, r, 5)
	clock.Advance(time.Millisecond)
	if r := h.Do(http.MethodPost, probePath, probeEvent(a, t, clock.Now(), 5, "probe.write"), nil); r.Status != http.StatusCreated {
		t.Fatalf("nonce 5 one millisecond after expiry: %d %s", r.Status, r.Body)
	}
}

// TestReplayAfterHistoryPruning (PROTOCOL-0.12 §2.6, D-17): the SDK's
// submission steps. Window 300 s, t = 1779753600000; E1 = (created t,
// nonce t), E2 = (created t+1000, nonce t), E3 = (created t+300000, nonce
// t+300000). The hub keeps its accepted history forever; the test prunes
// accepted_envelopes by hand where the SDK's steps hold nothing in
// history, so only the nonce cache stands between E3 and a replay. With the
// default TTL (600 s) the replay is refused; a TTL of one window (the
// older default) accepts it.
func TestReplayAfterHistoryPruning(t *testing.T) {
	const start = int64(1779753600000)
	for _, c := range []struct {
		name      string
		ttl       time.Duration
		replayErr string // the outcome of E3 again at t+451000
	}{
		{"default TTL", 0, identity.CodeNonceNotGreater},
		{"TTL of one window", 300 * time.Second, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := hubtest.NewClock(time.UnixMilli(start))
			h := hubtest.Start(t, hubtest.WithClock(clock), hubtest.WithOptions(func(o *hub.Options) { o.Limits.NonceCacheTTL = c.ttl }))
			mountProbe(h)
			a := hubtest.NewAgent(30)
			ev := func(created, nonce int64) []byte {
				return probeEvent(a, t, time.UnixMilli(created), nonce, "probe.write")
			}
			e1, e2, e3 := ev(start, start), ev(start+1000, start), ev(start+300000, start+300000)
			prune := func() {
				t.Helper()
				if err := h.DB().Write(context.Background(), func(tx *sql.Tx) error {
					_, err := tx.Exec(`DELETE FROM accepted_envelopes`)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			submit := func(now int64, env []byte) *hubtest.Response {
				clock.Set(time.UnixMilli(now))
				return h.Do(http.MethodPost, probePath, env, nil)
			}
			accepted := func(r *hubtest.Response, replay bool) {
				t.Helper()
				var pr probeResult
				if r.Status != http.StatusCreated {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				if r.Decode(t, &pr); pr.Replayed != replay {
					t.Fatalf("replayed %v, want %v", pr.Replayed, replay)
				}
			}
			accepted(submit(start, e1), false)
			accepted(submit(start+300001, e1), true) // held in history: resubmission
			prune()
			wantError(t, submit(start+300001, e1), http.StatusBadRequest, identity.CodeTimestampOutOfWindow)
			wantError(t, submit(start+2000, e2), http.StatusConflict, identity.CodeNonceNotGreater)
			accepted(submit(start+1000, e3), false)
			prune()
			r := submit(start+451000, e3)
			if c.replayErr == "" {
				accepted(r, false) // the replay the longer TTL prevents
				return
			}
			wantError(t, r, http.StatusConflict, c.replayErr)
			wantMaxSeen(t, r, start+300000)
		})
	}
}

// TestRejectedWriteLeavesNoTrace: a write rejected by protocol validation
// consumes no nonce, no quota and no history.
func TestRejectedWriteLeavesNoTrace(t *testing.T) {
	h := hubtest.Start(t)
	mountProbe(h)
	a := hubtest.NewAgent(27)
	rejected := probeEvent(a, t, h.Now(), 5, "probe.reject")
	wantError(t, h.Do(http.MethodPost, probePath, rejected, nil), http.StatusForbidden, identity.CodePermissionDenied)
	if _, ok := committed.Load(eventID(t, rejected)); ok {
		t.Fatal("AfterCommit ran for a rejected write")
	}
	// Resubmitting it is not a lookup: it is validated (and rejected) again.
	wantError(t, h.Do(http.MethodPost, probePath, rejected, nil), http.StatusForbidden, identity.CodePermissionDenied)
	r := h.Do(http.MethodPost, probePath, probeEvent(a, t, h.Now(), 5, "probe.write"), nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("nonce 5 after a rejection: %d %s", r.Status, r.Body)
	}
}

// TestRateLimit: quotas answer rate_limited with Retry-After (the time
// until the bucket holds a unit again), rejected writes give their unit
// back, and the bucket refills.
func TestRateLimit(t *testing.T) {
	clock := hubtest.NewClock(time.UnixMilli(1_800_000_000_000))
	h := hubtest.Start(t, hubtest.WithClock(clock), hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Profile.UpdatesPerMinute = 2
	}))
	a := hubtest.NewAgent(28)
	nonce := int64(0)
	submit := func(payload string) *hubtest.Response {
		nonce++
		return h.Do(http.MethodPost, "/v1/profiles", a.ProfileUpdate(t, clock.Now(), nonce, payload), nil)
	}
	wantOK(t, submit(payloadFor(a, "1")))
	wantError(t, submit(`{"id":"`+a.ID+`"}`), http.StatusBadRequest, identity.CodeInvalidEvent)
	clock.Advance(20 * time.Second)
	wantOK(t, submit(payloadFor(a, "2")))
	r := submit(payloadFor(a, "3"))
	wantError(t, r, http.StatusTooManyRequests, identity.CodeRateLimited)
	// Two a minute refill one every 30 s: at 20 s the bucket holds 2/3
	// after the second update, so a third is due 10 s later.
	if r.Header.Get("Retry-After") != "10" {
		t.Fatalf("Retry-After %q, want 10", r.Header.Get("Retry-After"))
	}
	// The rate-limited write did not consume its nonce.
	nonce--
	clock.Advance(9 * time.Second)
	wantError(t, submit(payloadFor(a, "3")), http.StatusTooManyRequests, identity.CodeRateLimited)
	nonce--
	clock.Advance(time.Second)
	wantOK(t, submit(payloadFor(a, "3")))

	mountProbe(h)
	for i := range 4 {
		nonce++
		r := h.Do(http.MethodPost, probePath, probeEvent(a, t, clock.Now(), nonce, "probe.write"), nil)
		if i < 3 && r.Status != http.StatusCreated {
			t.Fatalf("probe write %d: %d %s", i, r.Status, r.Body)
		}
		if i == 3 {
			wantError(t, r, http.StatusTooManyRequests, identity.CodeRateLimited)
		}
	}
}

// TestConcurrentWrites: concurrent submissions of one envelope yield one
// acceptance and lookups; concurrent distinct updates by one actor never
// accept two updates with the same nonce, and the document is the greatest
// accepted nonce's.
func TestConcurrentWrites(t *testing.T) {
	h := hubtest.Start(t)
	a := hubtest.NewAgent(29)
	env := a.ProfileUpdate(t, h.Now(), 1, payloadFor(a, "same"))
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() { statuses[i] = h.Do(http.MethodPost, "/v1/profiles", env, nil).Status })
	}
	wg.Wait()
	for _, s := range statuses {
		if s != 200 {
			t.Fatalf("statuses %v, want all 200", statuses)
		}
	}
	if n := historyLen(t, h, a.ID); n != 1 {
		t.Fatalf("history has %d, want 1", n)
	}

	b := hubtest.NewAgent(30)
	var mu sync.Mutex
	accepted := map[int64]bool{}
	for i := range 16 {
		n := int64(i%8 + 1) // every nonce twice
		body := b.ProfileUpdate(t, h.Now(), n, payloadFor(b, fmt.Sprint("w", i)))
		wg.Go(func() {
			r := h.Do(http.MethodPost, "/v1/profiles", body, nil)
			switch r.Status {
			case 200:
				mu.Lock()
				if accepted[n] {
					t.Errorf("nonce %d accepted twice", n)
				}
				accepted[n] = true
				mu.Unlock()
			case 409:
				if r.ErrorCode() != identity.CodeNonceNotGreater {
					t.Errorf("409 %s", r.Body)
				}
			default:
				t.Errorf("status %d: %s", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	var greatest int64
	for n := range accepted {
		greatest = max(greatest, n)
	}
	r := h.Do(http.MethodGet, "/v1/profiles/"+b.ID+"/events", nil, nil)
	var l struct {
		Result []struct {
			Event struct{ Nonce int64 } `json:"event"`
		} `json:"result"`
	}
	r.Decode(t, &l)
	if len(l.Result) != 1 || l.Result[0].Event.Nonce != greatest || historyLen(t, h, b.ID) != len(accepted) {
		t.Fatalf("latest %s, want nonce %d of %d accepted", r.Body, greatest, len(accepted))
	}
}

// abortProbe registers an OnAbort hook and rejects or accepts by type.
type abortProbe struct{ probe }

var aborted sync.Map

func (abortProbe) Accept(ctx context.Context, w *hubhttp.Write) (*hubhttp.Result, error) {
	hash := w.Envelope.Hash
	w.OnAbort(func() { aborted.Store(hash, true) })
	switch w.Envelope.Event.Type {
	case "probe.reject":
		return nil, hubhttp.Errorf(identity.CodePermissionDenied, "rejected by the probe")
	case "probe.panic":
		panic("probe panic")
	}
	return &hubhttp.Result{Status: http.StatusCreated, Body: map[string]any{"ok": true}}, nil
}

// TestAbortHooks: OnAbort hooks run exactly for writes that do not commit —
// a rejection or a panic inside the transaction — and never for accepted
// writes.
func TestAbortHooks(t *testing.T) {
	h := hubtest.Start(t)
	h.Handle("POST /x-probe/abort", h.Pipeline().Handler(abortProbe{}, 4096))
	a := hubtest.NewAgent(60)
	for i, c := range []struct {
		typ     string
		status  int
		aborted bool
	}{
		{"probe.ok", http.StatusCreated, false},
		{"probe.reject", http.StatusForbidden, true},
		{"probe.panic", http.StatusInternalServerError, true},
	} {
		body := probeEvent(a, t, h.Now(), int64(i+1), c.typ)
		env, _ := identity.ParseEnvelope(body)
		r := h.Do(http.MethodPost, "/x-probe/abort", body, nil)
		if r.Status != c.status {
			t.Fatalf("%s: status %d %s", c.typ, r.Status, r.Body)
		}
		if _, ok := aborted.Load(env.Hash); ok != c.aborted {
			t.Fatalf("%s: abort hook ran = %v", c.typ, ok)
		}
	}
}
