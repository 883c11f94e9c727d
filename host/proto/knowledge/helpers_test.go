package knowledge

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha3"
	"encoding/json"
	"testing"

	"apconnect/host/identity"
)

// Test time: created_at values are t0 plus the nonce; the service clock is
// tNow.
const (
	t0      = int64(1_800_000_000_000)
	tNow    = t0 + 3_600_000
	service = "https://knowledge.example"
	license = "https://creativecommons.org/licenses/by/4.0/"
)

// signerOf is a deterministic test identity.
func signerOf(name string) *identity.KeySigner {
	seed := sha256.Sum256([]byte("knowledge-test-key/" + name))
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(seed[:]))
}

// val turns a Go literal into the strictly parsed value form.
func val(t testing.TB, v any) any {
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

type m = map[string]any
type a = []any

// signed signs a Knowledge event of typ by name with nonce n.
func signed(t testing.TB, name, typ string, n int64, payload any) *identity.Envelope {
	t.Helper()
	ev := NewEvent(typ, signerOf(name).AgentID(), t0+n, n, val(t, payload))
	env, err := identity.SignEvent(signerOf(name), ev)
	if err != nil {
		t.Fatalf("sign %s: %v", typ, err)
	}
	return env
}

// envValue is the envelope as the strictly parsed value a service receives.
func envValue(t testing.TB, env *identity.Envelope) any {
	t.Helper()
	b, err := env.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	v, err := identity.ParseStrict(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ctx() m { return m{"scope": "software", "conditions": a{"linux"}, "limitations": a{}} }

func publication(kind string, extra m) m {
	p := m{"license": license, "kind": kind, "title": "A " + kind, "statement": "The " + kind + " statement.",
		"language": "en", "context": ctx(), "basis": "Measured twice."}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func assessment(target, verdict string, extra m) m {
	p := m{"license": license, "target": target, "verdict": verdict, "summary": "Checked it.", "context": ctx(), "basis": "Ran it."}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func retraction(target string) m { return m{"target": target, "reason": "Superseded."} }

// digestOf is a Knowledge digest of s.
func digestOf(s string) string {
	sum := sha3.Sum256([]byte(s))
	return identity.EncodeBase64URL(sum[:])
}

// code is the stable code of err, "ok" for nil.
func code(err error) string {
	if err == nil {
		return "ok"
	}
	if c := identity.ErrorCode(err); c != "" {
		return c
	}
	return "uncoded: " + err.Error()
}

// pointer is the pointer of an *identity.Error.
func pointer(err error) string {
	if e, ok := err.(*identity.Error); ok {
		return e.Pointer
	}
	return "<not an *identity.Error>"
}

// mutate returns a copy of v (a JSON object) after fn changed it.
func mutate(t testing.TB, v any, fn func(m)) any {
	t.Helper()
	c := val(t, v).(map[string]any)
	fn(c)
	return c
}

// lookupOf resolves ids among envelopes.
func lookupOf(envs ...*identity.Envelope) Lookup {
	byID := map[string]Target{}
	for _, e := range envs {
		byID[e.Hash] = TargetOf(&e.Event)
	}
	return func(id string) (Target, bool) {
		t, ok := byID[id]
		return t, ok
	}
}

// world is a small, dependency-closed set of events.
type world struct {
	question, hypothesis, observation, bobObs, assess, successor, retract *identity.Envelope
}

func newWorld(t testing.TB) world {
	var w world
	w.question = signed(t, "alice", TypePublish, 1, publication(KindQuestion, nil))
	w.hypothesis = signed(t, "alice", TypePublish, 2, publication(KindHypothesis, nil))
	w.observation = signed(t, "alice", TypePublish, 3, publication(KindObservation, m{"tags": a{"physics"}}))
	w.bobObs = signed(t, "bob", TypePublish, 4, publication(KindObservation, m{"language": "EN-gb"}))
	w.assess = signed(t, "bob", TypeAssess, 5, assessment(w.observation.Hash, VerdictChallenges, nil))
	w.successor = signed(t, "alice", TypePublish, 6, publication(KindObservation, m{
		"relations": a{m{"relation": RelationSupersedes, "target": w.observation.Hash}}}))
	w.retract = signed(t, "alice", TypeRetract, 7, retraction(w.observation.Hash))
	return w
}

func (w world) all() []*identity.Envelope {
	return []*identity.Envelope{w.question, w.hypothesis, w.observation, w.bobObs, w.assess, w.successor, w.retract}
}

// records numbers the envelopes as a service would, seq from 1.
func records(envs []*identity.Envelope) []*Record {
	out := make([]*Record, len(envs))
	for i, e := range envs {
		out[i] = NewRecord(e, tNow, int64(i+1))
	}
	return out
}
