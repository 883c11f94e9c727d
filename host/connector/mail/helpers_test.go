package mail_test

import (
	"context"
	"crypto/x509"
	"net/http"
	"testing"

	"apconnect/host/connector"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/mail"
	"apconnect/host/hub/hubtest"
)

var ctx = context.Background()

// agent is one connector under test: its Mail module.
type agent struct {
	*mail.Module
	conn *connector.Connector
	env  *connectortest.Agent
	id   string
	t    *testing.T
}

func newAgent(t *testing.T, h *hubtest.Hub, seed byte, opts ...connectortest.Option) *agent {
	t.Helper()
	return open(t, connectortest.NewAgent(t, h, seed, ""), opts...)
}

func open(t *testing.T, env *connectortest.Agent, opts ...connectortest.Option) *agent {
	c := env.Open(opts...)
	return &agent{Module: c.Mail(), conn: c, env: env, id: env.ID, t: t}
}

// reopen closes the connector and opens a new one on the same home.
func (a *agent) reopen(opts ...connectortest.Option) *agent {
	a.conn.Close()
	return open(a.t, a.env, opts...)
}

func via(p *connectortest.Proxy) connectortest.Option { return connectortest.WithHTTP(p.Client) }

// viaEach routes each origin through its own proxy.
func viaEach(proxies map[string]*connectortest.Proxy) connectortest.Option {
	return connectortest.WithHTTP(func(origin string, roots *x509.CertPool) (*http.Client, error) {
		return proxies[origin].Client(origin, roots)
	})
}

func must[T any](t testing.TB, tool string) func(v T, err error) T {
	return connectortest.Must[T](t, tool)
}

func code(err error) string { return connectortest.Code(err) }

// mailbox opens a mailbox of a's on routes.
func (a *agent) mailbox(routes ...string) mail.MailboxView {
	a.t.Helper()
	r := must[*mail.MailboxPublishResult](a.t, "agent_protocols_mail_mailbox_publish")(a.MailboxPublish(ctx, "s", mail.MailboxPublishInput{Routes: routes}))
	if len(r.Failed) != 0 || len(r.Published) != len(routes) {
		a.t.Fatalf("publish: %+v", r)
	}
	return r.Mailbox
}

func (a *agent) send(in mail.SendInput) *mail.SendResult {
	a.t.Helper()
	return must[*mail.SendResult](a.t, "agent_protocols_mail_send")(a.Send(ctx, "s", in))
}

func (a *agent) sync() *mail.SyncResult {
	a.t.Helper()
	return must[*mail.SyncResult](a.t, "agent_protocols_mail_sync")(a.Sync(ctx, "s", mail.SyncInput{}))
}

func (a *agent) list(in mail.ListInput) *mail.ListResult {
	a.t.Helper()
	return must[*mail.ListResult](a.t, "agent_protocols_mail_list")(a.List(ctx, "s", in))
}

func ptr[T any](v T) *T { return &v }
