package delegation_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	rules "apconnect/host/proto/delegation"
)

type obj = map[string]any
type arr = []any

var ctx = context.Background()

// fx is a hub on a settable clock hosting principal "acme": U unrestricted,
// R restricted to review for the hub's origin, TL signing-only, RET
// retired, and principal "other" with U as its unrestricted controller.
type fx struct {
	t     testing.TB
	h     *hubtest.Hub
	clock *hubtest.Clock
	// U, R, TL, RET are acme's keys; S is a subject; X a stranger.
	U, R, TL, RET, S, X *hubtest.Agent
	acme, other         string
	// t0 is the clock's start: the real time, since the principals are
	// put as the command line puts them, on the real clock.
	t0 time.Time
}

func newFx(t testing.TB) *fx {
	t.Helper()
	t0 := time.UnixMilli(time.Now().UnixMilli())
	clock := hubtest.NewClock(t0)
	h := hubtest.Start(t, hubtest.WithClock(clock))
	f := &fx{t: t, h: h, clock: clock, U: hubtest.NewAgent(0x51), R: hubtest.NewAgent(0x52), TL: hubtest.NewAgent(0x53),
		RET: hubtest.NewAgent(0x54), S: hubtest.NewAgent(0x55), X: hubtest.NewAgent(0x56), t0: t0}
	past := t0.UnixMilli() - 60_000
	f.acme = f.put("acme", obj{"type": "organization", "name": "Acme",
		"aliases": arr{h.Origin() + "/principals/acme-alias"},
		"controllers": arr{
			obj{"id": f.U.ID, "source": "local", "valid_from": past, "delegation": "*"},
			obj{"id": f.R.ID, "source": "local", "valid_from": past, "delegation": obj{"scopes": arr{"review"}, "audiences": arr{h.Origin()}}},
			obj{"id": f.TL.ID, "source": "local", "valid_from": past},
		},
		"retired_controllers": arr{obj{"id": f.RET.ID, "source": "local", "valid_from": past - 1000, "retired_at": past, "delegation": "*"}},
	})
	f.other = f.put("other", obj{"controllers": arr{obj{"id": f.U.ID, "source": "local", "valid_from": past, "delegation": "*"}}})
	return f
}

// put hosts a principal and returns its URL.
func (f *fx) put(name string, doc obj) string {
	f.t.Helper()
	p, err := hub.PutPrincipal(ctx, f.h.DataDir(), name, doc)
	if err != nil {
		f.t.Fatalf("put %s: %v", name, err)
	}
	if p.URL != f.h.Origin()+"/principals/"+name {
		f.t.Fatalf("put %s: URL %q", name, p.URL)
	}
	return p.URL
}

// grant returns a delegation.grant envelope by a, created now.
func (f *fx) grant(a *hubtest.Agent, edit func(p *rules.GrantPayload)) []byte {
	f.t.Helper()
	p := rules.GrantPayload{ID: "del-1", PrincipalID: f.acme, Subject: f.S.ID, Scopes: []string{"review"}, Audiences: []string{f.h.Origin()}}
	if edit != nil {
		edit(&p)
	}
	now := f.clock.Now()
	return a.SignJSON(f.t, rules.GrantEvent(a.ID, now.UnixMilli(), a.NextNonce(now), p))
}

// revoke returns a delegation.revoke envelope by a, created now.
func (f *fx) revoke(a *hubtest.Agent, id, principal string) []byte {
	f.t.Helper()
	now := f.clock.Now()
	return a.SignJSON(f.t, rules.RevokeEvent(a.ID, now.UnixMilli(), a.NextNonce(now), rules.RevokePayload{ID: id, PrincipalID: principal, Reason: "done"}))
}

// submit posts an envelope and returns the response.
func (f *fx) submit(env []byte) *hubtest.Response {
	return f.h.Post("/v1/delegations", env)
}

// mustSubmit posts an envelope that must be accepted and returns the
// credential.
func (f *fx) mustSubmit(env []byte) *rules.Credential {
	f.t.Helper()
	r := f.submit(env)
	if r.Status != http.StatusOK {
		f.t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	c, err := rules.ParseCredential(r.Body)
	if err != nil {
		f.t.Fatalf("submit: %v: %s", err, r.Body)
	}
	return c
}

// query posts a query, as a when a is not nil.
func (f *fx) query(q obj, a *hubtest.Agent) *hubtest.Response {
	return f.h.Do(http.MethodPost, "/v1/delegations/query", q, f.h.AuthHeader(f.t, a))
}

// list decodes a list response.
func list(t testing.TB, r *hubtest.Response) (items []obj, next string) {
	t.Helper()
	var l struct {
		Result     []obj  `json:"result"`
		NextCursor string `json:"next_cursor"`
	}
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &l); err != nil {
		t.Fatal(err)
	}
	return l.Result, l.NextCursor
}

// records reads every accepted record of a credential.
func (f *fx) records(id string) []rules.Record {
	f.t.Helper()
	r := f.h.Get(f.t, "/v1/delegations/"+id+"/events", nil)
	items, _ := list(f.t, r)
	var out []rules.Record
	for i, it := range items {
		v, err := identity.ParseStrict(mustJSON(it))
		if err != nil {
			f.t.Fatal(err)
		}
		rec, err := rules.RecordFromValue(v, "")
		if err != nil {
			f.t.Fatalf("record %d: %v", i, err)
		}
		out = append(out, *rec)
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
