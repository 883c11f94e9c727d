package discourse_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/profile"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
)

var ctx = context.Background()

// startHub starts a real local hub with the Discourse quotas raised.
func startHub(t testing.TB, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	return connectortest.StartHub(t, opts...)
}

// agent is one connector under test: its Discourse module, with the
// connector's tools that span protocols.
type agent struct {
	*discourse.Module
	conn *connector.Connector
	env  *connectortest.Agent
	t    testing.TB
	id   string
	home string
	cfg  *config.Config
	sig  identity.Signer
	sess connector.SessionID
}

type agentOpt = connectortest.Option

// newAgent builds a connector for the agent whose seed repeats seed, with a
// fresh home (or home when given) allowing only the hub.
func newAgent(t testing.TB, h *hubtest.Hub, seed byte, home string, opts ...agentOpt) *agent {
	t.Helper()
	return open(connectortest.NewAgent(t, h, seed, home), opts...)
}

func open(env *connectortest.Agent, opts ...agentOpt) *agent {
	env.T.Helper()
	c := env.Open(opts...)
	return &agent{Module: c.Discourse(), conn: c, env: env, t: env.T, id: env.ID, home: env.Home, cfg: env.Cfg, sig: env.Sig, sess: "session-1"}
}

// reopen closes the connector and opens a new one on the same home (a
// restart).
func (a *agent) reopen(opts ...agentOpt) *agent {
	a.t.Helper()
	a.Close()
	b := open(a.env, opts...)
	b.sess = a.sess
	return b
}

// Start, Close and the tools that span protocols are the connector's.
func (a *agent) Start(ctx context.Context) { a.conn.Start(ctx) }
func (a *agent) Close() error              { return a.conn.Close() }
func (a *agent) InboxNext(ctx context.Context, sess connector.SessionID, in connector.InboxNextInput) (*connector.InboxNextResult, error) {
	return a.conn.InboxNext(ctx, sess, in)
}
func (a *agent) InboxAck(ctx context.Context, sess connector.SessionID, in connector.InboxAckInput) (*connector.InboxAckResult, error) {
	return a.conn.InboxAck(ctx, sess, in)
}
func (a *agent) IdentityCurrent(ctx context.Context, sess connector.SessionID) (*connector.IdentityCurrentResult, error) {
	return a.conn.IdentityCurrent(ctx, sess)
}
func (a *agent) HostsList(ctx context.Context, sess connector.SessionID) (*connector.HostsListResult, error) {
	return a.conn.HostsList(ctx, sess)
}
func (a *agent) ProfileUpdate(ctx context.Context, sess connector.SessionID, in profile.ProfileUpdateInput) (*profile.ProfileUpdateResult, error) {
	return a.conn.Profile().ProfileUpdate(ctx, sess, in)
}
func (a *agent) ResubmitOutbox(ctx context.Context) int { return a.conn.Engine().ResubmitOutbox(ctx) }

// withHTTP routes the connector's requests through a custom client.
func withHTTP(f func(origin string, roots *x509.CertPool) (*http.Client, error)) agentOpt {
	return connectortest.WithHTTP(f)
}

// must fails the test on error and validates the result.
func must[T any](t testing.TB, tool string) func(v T, err error) T {
	return connectortest.Must[T](t, tool)
}

// code returns the connector error code of err.
func code(err error) string { return connectortest.Code(err) }

// createRoom creates a room as a, starting now, with extra input. Unless
// edit sets another policy, speakers and observers may join a public test
// room directly (the public default is observers only).
func createRoom(t testing.TB, a *agent, h *hubtest.Hub, visibility string, edit func(in *discourse.RoomCreateInput)) string {
	t.Helper()
	now := time.Now().UnixMilli()
	in := discourse.RoomCreateInput{Host: h.Origin(), Topic: "Test room", Visibility: visibility, StartTime: now - 1000, EndTime: now + 3600_000}
	if visibility == "public" {
		in.Policy = map[string]any{"open_roles": []any{"speaker", "observer"}}
	}
	if edit != nil {
		edit(&in)
	}
	res := must[*discourse.RoomCreateResult](t, "agent_protocols_room_create")(a.RoomCreate(ctx, a.sess, in))
	return res.Room.RoomID
}

// eventually retries cond until it holds or the deadline passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	connectortest.Eventually(t, d, what, cond)
}

func asErr(err error, target **engine.Error) bool { return errors.As(err, target) }

func tlsConfig(pool *x509.CertPool) *tls.Config { return &tls.Config{RootCAs: pool} }
