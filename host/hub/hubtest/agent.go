package hubtest

import (
	"crypto/ed25519"
	"crypto/sha3"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/profile"
)

// Agent is a test agent: an Ed25519 key and its Agent ID. Its helpers fail
// the test with t.Fatalf, which only happens for invalid inputs; call them
// from the test's goroutine.
type Agent struct {
	ID     string
	Signer *identity.KeySigner

	mu    sync.Mutex
	nonce int64 // last nonce NextNonce returned
}

// NextNonce returns the agent's next nonce for an event created at now:
// max(last + 1, now in Unix ms), the clock-derived rule of Agent Identity
// 6.2. It is safe for concurrent use.
func (a *Agent) NextNonce(now time.Time) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nonce = max(a.nonce+1, now.UnixMilli())
	return a.nonce
}

// NewAgent returns the agent whose 32-byte seed repeats b (the protocol
// vectors use such seeds: 0x07 in Agent Identity, 0x09 in Agent Profile).
func NewAgent(b byte) *Agent {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = b
	}
	s := identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))
	return &Agent{ID: s.AgentID(), Signer: s}
}

// Sign signs an event as this agent (its Actor is set to the agent's ID).
func (a *Agent) Sign(t testing.TB, ev identity.Event) *identity.Envelope {
	t.Helper()
	ev.Actor = a.ID
	env, err := identity.SignEvent(a.Signer, ev)
	if err != nil {
		t.Fatalf("hubtest: sign: %v", err)
	}
	return env
}

// SignJSON signs an event and returns the envelope's JSON.
func (a *Agent) SignJSON(t testing.TB, ev identity.Event) []byte {
	t.Helper()
	b, err := json.Marshal(a.Sign(t, ev))
	if err != nil {
		t.Fatalf("hubtest: encode envelope: %v", err)
	}
	return b
}

// ProfileUpdate returns a signed profile.update envelope (JSON) created at
// now with the given nonce. payload is a JSON text; it is parsed strictly.
func (a *Agent) ProfileUpdate(t testing.TB, now time.Time, nonce int64, payload string) []byte {
	t.Helper()
	p, err := identity.ParseStrict([]byte(payload))
	if err != nil {
		t.Fatalf("hubtest: payload: %v", err)
	}
	return a.SignJSON(t, identity.Event{
		Protocol: profile.Protocol, Type: profile.TypeUpdate,
		CreatedAt: now.UnixMilli(), Nonce: nonce, Payload: p,
	})
}

// Token returns a request JWT for the hub at origin, issued at now for
// lifetime.
func (a *Agent) Token(t testing.TB, origin string, now time.Time, lifetime time.Duration) string {
	t.Helper()
	tok, err := identity.IssueToken(a.Signer, origin, now, lifetime)
	if err != nil {
		t.Fatalf("hubtest: token: %v", err)
	}
	return tok
}

// SignRaw signs an event object exactly as given — no shape check — and
// returns the envelope JSON: an authentic envelope whose event may be
// malformed, for testing how a receiver rejects it.
func (a *Agent) SignRaw(t testing.TB, ev map[string]any) []byte {
	t.Helper()
	b, err := identity.Canonicalize(ev)
	if err != nil {
		t.Fatalf("hubtest: canonicalize: %v", err)
	}
	d := sha3.Sum256(b)
	env, err := json.Marshal(map[string]any{
		"hash": identity.EncodeBase64URL(d[:]), "event": ev,
		"signature": identity.EncodeBase64URL(a.Signer.SignDigest(d[:])),
	})
	if err != nil {
		t.Fatalf("hubtest: encode envelope: %v", err)
	}
	return env
}
