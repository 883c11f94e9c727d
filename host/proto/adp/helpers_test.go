package adp

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"testing"

	"apconnect/host/identity"
)

// Deterministic test identities: the key of a name is derived from
// SHA-256(name), so every run signs the same bytes.
func testKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("adp-test-key/" + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func agent(name string) string {
	return identity.AgentIDFromPublicKey(testKey(name).Public().(ed25519.PublicKey))
}

// jsonValue turns a Go literal into the strictly parsed value form.
func jsonValue(t testing.TB, v any) any {
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

// obj is a shorthand for JSON object literals in tests.
type obj = map[string]any

// arr is a shorthand for JSON array literals in tests.
type arr = []any

func sign(t testing.TB, name string, ev identity.Event) *identity.Envelope {
	t.Helper()
	ev.Protocol = Protocol
	ev.Actor = agent(name)
	if ev.Nonce == 0 {
		ev.Nonce = ev.CreatedAt
	}
	env, err := identity.SignEvent(identity.NewKeySigner(testKey(name)), ev)
	if err != nil {
		t.Fatalf("sign %s: %v", ev.Type, err)
	}
	return env
}

// Times of the standard fixture room: created at t0, active one minute
// later, two hours long.
const (
	t0       int64 = 1_800_000_000_000
	tStart         = t0 + 60_000
	tEnd           = tStart + 2*3600_000
	testHost       = "https://hub.example"
	testRoom       = "room0001"
)

// fixture is a room under test with its records, driven through the public
// API exactly as a hub drives it: Check, NewRecord, Apply.
type fixture struct {
	t       testing.TB
	rules   *Rules
	room    *Room
	records []*Record
	now     int64
	nonce   int64
	pending map[string]JoinRequestState
}

func createPayload(extra obj) obj {
	p := obj{
		"host":       testHost,
		"topic":      "Fixture room",
		"visibility": "public",
		"start_time": tStart,
		"end_time":   tEnd,
	}
	for k, v := range extra {
		if v == nil {
			delete(p, k)
			continue
		}
		p[k] = v
	}
	// Fixture rooms let speakers and observers join openly, unless a test
	// says otherwise (the public default is observers only, and a private
	// room has no open roles).
	if _, ok := extra["policy"]; !ok && p["visibility"] != "private" {
		p["policy"] = obj{"open_roles": arr{"speaker", "observer"}}
	}
	return p
}

func newRules() *Rules {
	return &Rules{Limits: DefaultLimits(), HostOrigin: testHost}
}

// newFixture creates a room by "creator" with the payload overrides given,
// accepted at t0.
func newFixture(t testing.TB, extra obj) *fixture {
	t.Helper()
	return newFixtureWith(t, newRules(), extra)
}

// newFixtureWith is newFixture under the given rules.
func newFixtureWith(t testing.TB, rules *Rules, extra obj) *fixture {
	t.Helper()
	f := &fixture{t: t, rules: rules, now: t0, nonce: t0, pending: map[string]JoinRequestState{}}
	env := f.envelope("creator", identity.Event{Type: TypeRoomCreate, Payload: jsonValue(t, createPayload(extra))})
	if err := CheckCreate(f.rules, env); err != nil {
		t.Fatalf("CheckCreate: %v", err)
	}
	rec, err := NewRecord(testRoom, Link{}, f.now, env)
	if err != nil {
		t.Fatal(err)
	}
	room, err := NewRoom(f.rules, rec)
	if err != nil {
		t.Fatalf("NewRoom: %v", err)
	}
	f.room, f.records = room, []*Record{rec}
	return f
}

// envelope signs an event for the fixture's clock and nonce sequence.
func (f *fixture) envelope(name string, ev identity.Event) *identity.Envelope {
	f.t.Helper()
	f.nonce++
	ev.CreatedAt = f.now
	ev.Nonce = f.nonce
	return sign(f.t, name, ev)
}

// event builds a signed room event anchored on the current head.
func (f *fixture) event(name, typ string, payload any) *identity.Envelope {
	f.t.Helper()
	return f.eventAt(name, typ, payload, f.room.Head)
}

// eventAt builds a signed room event anchored on base.
func (f *fixture) eventAt(name, typ string, payload any, base Link) *identity.Envelope {
	f.t.Helper()
	return f.envelope(name, identity.Event{
		Type: typ, Payload: jsonValue(f.t, payload), Fields: Fields{RoomID: testRoom, Base: &Link{Seq: base.Seq, Hash: base.Hash}}.Map()})
}

func (f *fixture) options() CheckOptions {
	return CheckOptions{
		Now: f.now,
		Records: RecordHashFunc(func(seq int64) (string, bool) {
			if seq < 1 || seq > int64(len(f.records)) {
				return "", false
			}
			return f.records[seq-1].Hash, true
		}),
		Events: EventFunc(func(id string) bool {
			for _, r := range f.records {
				if r.EnvelopeHash() == id {
					return true
				}
			}
			return false
		}),
		JoinRequests: JoinRequestFunc(func(id string) (JoinRequestState, bool) {
			st, ok := f.pending[id]
			return st, ok
		}),
		RoomURL: testHost + "/v1/rooms/" + testRoom,
	}
}

// submit checks env and, when accepted, records and applies it.
func (f *fixture) submit(env *identity.Envelope) error {
	f.t.Helper()
	if err := f.room.Check(f.rules, env, f.options()); err != nil {
		return err
	}
	rec, err := NewRecord(testRoom, f.room.Last.Link(), f.now, env)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.room.Apply(f.rules, rec); err != nil {
		f.t.Fatalf("Apply after a passing Check: %v", err)
	}
	f.records = append(f.records, rec)
	return nil
}

// must submits and fails the test on rejection.
func (f *fixture) must(name, typ string, payload any) *Record {
	f.t.Helper()
	if err := f.submit(f.event(name, typ, payload)); err != nil {
		f.t.Fatalf("%s by %s rejected: %v", typ, name, err)
	}
	return f.records[len(f.records)-1]
}

// at advances the fixture clock.
func (f *fixture) at(t int64) *fixture { f.now = t; return f }

// wantCode asserts an exact error code.
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := ErrorCode(err); got != code {
		t.Fatalf("code = %q, want %q (err: %v)", got, code, err)
	}
}
