// Package roomtest builds signed ADP record chains in memory for tests and
// benchmarks: a room driven through host/proto/adp exactly as a host drives it
// (CheckCreate or Check, NewRecord, Apply), with deterministic agents.
package roomtest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"testing"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Agent is a deterministic test identity.
type Agent struct {
	ID     string
	Signer *identity.KeySigner
}

// NewAgent returns the agent whose key seed is SHA-256("roomtest/" + name).
func NewAgent(name string) *Agent {
	seed := sha256.Sum256([]byte("roomtest/" + name))
	s := identity.NewKeySigner(ed25519.NewKeyFromSeed(seed[:]))
	return &Agent{ID: s.AgentID(), Signer: s}
}

// Value turns a Go literal into the strictly parsed JSON value form.
func Value(t testing.TB, v any) any {
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

// Chain is a room and its records.
type Chain struct {
	Rules   *adp.Rules
	Host    string
	RoomID  string
	Room    *adp.Room
	Records []*adp.Record
	// Now is the clock: created_at and accepted_at of the next record.
	Now    int64
	nonces map[string]int64
}

// Start is the default creation time of chains, Unix ms.
const Start int64 = 1_800_000_000_000

// NewChain creates a room by creator on host with a room.create payload:
// defaults (public, topic, one day from Start, speakers and observers open)
// overridden by extra (a nil value deletes a default).
func NewChain(t testing.TB, host, roomID string, creator *Agent, extra map[string]any) *Chain {
	t.Helper()
	c := &Chain{Rules: &adp.Rules{Limits: adp.VerifierLimits(), HostOrigin: host}, Host: host, RoomID: roomID,
		Now: Start, nonces: map[string]int64{}}
	p := map[string]any{"host": host, "topic": "Test room", "visibility": "public",
		"start_time": Start, "end_time": Start + 24*3600_000,
		"policy": map[string]any{"open_roles": []any{"speaker", "observer"}}}
	if extra["visibility"] == "private" {
		delete(p, "policy")
	}
	for k, v := range extra {
		if v == nil {
			delete(p, k)
		} else {
			p[k] = v
		}
	}
	env := c.Sign(t, creator, identity.Event{Type: adp.TypeRoomCreate, Payload: Value(t, p)})
	if err := adp.CheckCreate(c.Rules, env); err != nil {
		t.Fatalf("roomtest: CheckCreate: %v", err)
	}
	rec, err := adp.NewRecord(roomID, adp.Link{}, c.Now, env)
	if err != nil {
		t.Fatal(err)
	}
	room, err := adp.NewRoom(c.Rules, rec)
	if err != nil {
		t.Fatalf("roomtest: NewRoom: %v", err)
	}
	c.Room, c.Records = room, []*adp.Record{rec}
	return c
}

// Sign signs an event as agent at the chain's clock with the agent's next
// nonce.
func (c *Chain) Sign(t testing.TB, a *Agent, ev identity.Event) *identity.Envelope {
	t.Helper()
	c.nonces[a.ID]++
	ev.Protocol = adp.Protocol
	ev.Actor = a.ID
	ev.CreatedAt = c.Now
	ev.Nonce = c.Now + c.nonces[a.ID]
	env, err := identity.SignEvent(a.Signer, ev)
	if err != nil {
		t.Fatalf("roomtest: sign %s: %v", ev.Type, err)
	}
	return env
}

// Event returns a signed, unsubmitted event of the room anchored on base.
func (c *Chain) Event(t testing.TB, a *Agent, typ string, payload any, base adp.Link, mentions ...string) *identity.Envelope {
	t.Helper()
	f := adp.Fields{RoomID: c.RoomID, Base: &base}
	if len(mentions) > 0 {
		f.Mentions = mentions
	}
	return c.Sign(t, a, adp.NewEvent(typ, "", 0, Value(t, payload), f))
}

// Add appends an event by a anchored on the current head (accepted at the
// chain's clock, one millisecond later than the previous record) and
// returns its record. It fails the test if the host rules refuse it.
func (c *Chain) Add(t testing.TB, a *Agent, typ string, payload any, mentions ...string) *adp.Record {
	t.Helper()
	return c.Submit(t, c.Event(t, a, typ, payload, c.Room.Head, mentions...))
}

// Submit checks a signed envelope under the host rules and appends it.
func (c *Chain) Submit(t testing.TB, env *identity.Envelope) *adp.Record {
	t.Helper()
	if err := c.Room.Check(c.Rules, env, adp.CheckOptions{Now: c.Now + 1, Records: c}); err != nil {
		t.Fatalf("roomtest: %s refused: %v", env.Event.Type, err)
	}
	return c.Accept(t, env)
}

// Accept appends a signed envelope the way a host following older rules
// might have: without checking it against the current rules (the record is
// still linked, hashed and applied). Readers must verify it themselves.
func (c *Chain) Accept(t testing.TB, env *identity.Envelope) *adp.Record {
	t.Helper()
	c.Now++
	rec, err := adp.NewRecord(c.RoomID, c.Room.Last.Link(), c.Now, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Room.Apply(c.Rules, rec); err != nil {
		t.Fatalf("roomtest: apply: %v", err)
	}
	c.Records = append(c.Records, rec)
	return rec
}

// Message appends a message.create by a.
func (c *Chain) Message(t testing.TB, a *Agent, text string, mentions ...string) *adp.Record {
	t.Helper()
	return c.Add(t, a, adp.TypeMessageCreate, map[string]any{"content_type": "text/plain", "content": text}, mentions...)
}

// Join appends a direct room.join by a with role.
func (c *Chain) Join(t testing.TB, a *Agent, role string) *adp.Record {
	t.Helper()
	return c.Add(t, a, adp.TypeRoomJoin, map[string]any{"role": role})
}

// RecordHash implements adp.RecordLookup over the chain.
func (c *Chain) RecordHash(seq int64) (string, bool) {
	if seq < 1 || seq > int64(len(c.Records)) {
		return "", false
	}
	return c.Records[seq-1].Hash, true
}

// From returns the records after seq.
func (c *Chain) From(seq int64) []*adp.Record {
	if seq >= int64(len(c.Records)) {
		return nil
	}
	return c.Records[seq:]
}

// Rehash returns a copy of rec with its record fields changed by edit and
// its record hash recomputed (a host that rewrites history).
func Rehash(t testing.TB, rec *adp.Record, edit func(r *adp.Record)) *adp.Record {
	t.Helper()
	c := *rec
	edit(&c)
	h, err := c.ComputeHash()
	if err != nil {
		t.Fatal(err)
	}
	c.Hash = h
	return &c
}
