package delegation_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/delegation"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
)

var ctx = context.Background()

// agent is one connector under test: its Delegation module.
type agent struct {
	*delegation.Module
	conn *connector.Connector
	env  *connectortest.Agent
	id   string
}

func newAgent(t testing.TB, h *hubtest.Hub, seed byte, opts ...connectortest.Option) *agent {
	t.Helper()
	env := connectortest.NewAgent(t, h, seed, "")
	c := env.Open(opts...)
	return &agent{Module: c.Delegation(), conn: c, env: env, id: env.ID}
}

// world is a hub hosting principal "acme", controlled by alice without
// restriction and by rita within review for the hub; bob, carol and
// dave are other agents. Every connector reaches the hub through proxy.
type world struct {
	t                       testing.TB
	h                       *hubtest.Hub
	proxy                   *connectortest.Proxy
	alice, rita, bob, carol *agent
	acme, origin            string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	h := connectortest.StartHub(t, hubtest.WithOptions(func(o *hub.Options) { o.Limits.Delegation.EventsPage = 2 }))
	p := connectortest.NewProxy(t, h)
	w := &world{t: t, h: h, proxy: p, origin: h.Origin()}
	via := connectortest.WithHTTP(p.Client)
	w.alice, w.rita, w.bob, w.carol = newAgent(t, h, 0x61, via), newAgent(t, h, 0x62, via), newAgent(t, h, 0x63, via), newAgent(t, h, 0x64, via)
	past := time.Now().UnixMilli() - 1000
	doc := map[string]any{"type": "organization", "name": "Acme", "controllers": []any{
		map[string]any{"id": w.alice.id, "source": "local", "valid_from": past, "delegation": "*"},
		map[string]any{"id": w.rita.id, "source": "local", "valid_from": past,
			"delegation": map[string]any{"scopes": []any{"review"}, "audiences": []any{h.Origin()}}},
	}}
	pr, err := hub.PutPrincipal(ctx, h.DataDir(), "acme", doc)
	if err != nil {
		t.Fatal(err)
	}
	w.acme = pr.URL
	return w
}

// grant is alice's grant of review for the hub to subject.
func (w *world) grant(a *agent, id, subject string, edit func(in *delegation.DelegationGrantInput)) *delegation.DelegationWriteResult {
	w.t.Helper()
	in := delegation.DelegationGrantInput{ID: id, PrincipalID: w.acme, Subject: subject, Scopes: []string{"review"}, Audiences: []string{w.origin}}
	if edit != nil {
		edit(&in)
	}
	return connectortest.Must[*delegation.DelegationWriteResult](w.t, "agent_protocols_delegation_grant")(a.DelegationGrant(ctx, in))
}

// check is a's check of subject's delegations for the hub.
func (w *world) check(a *agent, subject, id string) *delegation.DelegationCheckResult {
	w.t.Helper()
	return connectortest.Must[*delegation.DelegationCheckResult](w.t, "agent_protocols_delegation_check")(a.DelegationCheck(ctx,
		delegation.DelegationCheckInput{PrincipalID: w.acme, Audience: w.origin, Subject: subject, ID: id}))
}

// code is the code an error reaches the agent with.
func code(err error) string {
	if err == nil {
		return ""
	}
	return engine.AsError(err).Code
}

// lastNonce is an agent's last allocated nonce.
func (a *agent) lastNonce(t testing.TB) int64 {
	t.Helper()
	n, err := a.conn.Store().Read().LastNonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ok is http.StatusOK, for response checks.
const ok = http.StatusOK
