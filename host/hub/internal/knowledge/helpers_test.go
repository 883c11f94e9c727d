package knowledge_test

import (
	"context"
	"crypto/sha3"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"apconnect/host/client"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// t0 is the test clock's start.
var t0 = time.UnixMilli(1_800_000_000_000)

const license = "https://creativecommons.org/licenses/by/4.0/"

type obj = map[string]any
type list = []any

// fixture is a hub with a clock, a client of its knowledge service and
// two agents.
type fixture struct {
	t     *testing.T
	h     *hubtest.Hub
	clock *hubtest.Clock
	kc    *client.KnowledgeService
	alice *hubtest.Agent
	bob   *hubtest.Agent
}

func newFixture(t *testing.T, edit ...func(*hub.Options)) *fixture {
	t.Helper()
	clock := hubtest.NewClock(t0)
	opts := []hubtest.Option{hubtest.WithClock(clock)}
	for _, e := range edit {
		opts = append(opts, hubtest.WithOptions(e))
	}
	h := hubtest.Start(t, opts...)
	f := &fixture{t: t, h: h, clock: clock, alice: hubtest.NewAgent(0x41), bob: hubtest.NewAgent(0x42)}
	f.kc = f.client()
	return f
}

// client returns a new client of the hub's knowledge service.
func (f *fixture) client() *client.KnowledgeService {
	kc, err := client.NewKnowledgeService(f.h.Origin(), f.h.Client, nil, client.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	return kc
}

// value turns a Go literal into the strictly parsed form.
func value(t testing.TB, v any) any {
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

// sign signs a Knowledge event of a created at the clock's now plus skew
// with the agent's next nonce.
func (f *fixture) sign(a *hubtest.Agent, typ string, payload obj, skew time.Duration) *identity.Envelope {
	f.t.Helper()
	at := f.clock.Now().Add(skew)
	return a.Sign(f.t, rules.NewEvent(typ, a.ID, at.UnixMilli(), a.NextNonce(at), value(f.t, payload)))
}

func context3() obj {
	return obj{"scope": "Go services on Linux", "conditions": list{"GOMAXPROCS=2"}, "limitations": list{"one machine"}}
}

// publication is a publication payload of kind with a title and statement.
func publication(kind, title, statement string, extra obj) obj {
	p := obj{"license": license, "kind": kind, "title": title, "statement": statement, "language": "en",
		"context": context3(), "basis": "Measured on the test machine."}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func assessment(target, verdict string) obj {
	return obj{"license": license, "target": target, "verdict": verdict, "summary": "Reproduced the measurement.",
		"context": context3(), "basis": "Ran the steps twice."}
}

func retraction(target string) obj {
	return obj{"target": target, "reason": "Superseded by a corrected measurement."}
}

// post submits raw envelope JSON.
func (f *fixture) post(body []byte) *hubtest.Response {
	f.t.Helper()
	return f.h.Do(http.MethodPost, "/v1/knowledge/events", body, nil)
}

// submit submits an envelope through the client and fails the test on
// error.
func (f *fixture) submit(env *identity.Envelope) *rules.Record {
	f.t.Helper()
	rec, err := f.kc.Submit(context.Background(), env)
	if err != nil {
		f.t.Fatalf("submit %s: %v", env.Event.Type, err)
	}
	return rec
}

// publish signs and submits a publication by a.
func (f *fixture) publish(a *hubtest.Agent, kind, title, statement string, extra obj) *rules.Record {
	f.t.Helper()
	return f.submit(f.sign(a, rules.TypePublish, publication(kind, title, statement, extra), 0))
}

// code is the stable code of err ("ok" for nil).
func code(err error) string {
	if err == nil {
		return "ok"
	}
	if c := identity.ErrorCode(err); c != "" {
		return c
	}
	if c := client.ErrorCode(err); c != "" {
		return c
	}
	return "uncoded: " + err.Error()
}

// checkpoint is the service's current checkpoint.
func (f *fixture) checkpoint() int64 {
	f.t.Helper()
	p, err := f.kc.Query(context.Background(), &rules.Query{Limit: ptr(int64(1))})
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Checkpoint
}

func ptr[T any](v T) *T { return &v }

// ids are the event ids of records.
func ids(rs []*rules.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID()
	}
	return out
}

// digest is a Knowledge digest of s (a well-formed id of no event).
func digest(s string) string {
	sum := sha3.Sum256([]byte(s))
	return identity.EncodeBase64URL(sum[:])
}
