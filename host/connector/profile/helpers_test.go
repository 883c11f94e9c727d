package profile_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"testing"

	"apconnect/host/connector"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/profile"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
)

var ctx = context.Background()

func startHub(t testing.TB, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	return connectortest.StartHub(t, opts...)
}

// agent is one connector under test: its Profile module.
type agent struct {
	*profile.Module
	conn *connector.Connector
	env  *connectortest.Agent
	id   string
	sess connector.SessionID
}

type agentOpt = connectortest.Option

func newAgent(t testing.TB, h *hubtest.Hub, seed byte, home string, opts ...agentOpt) *agent {
	t.Helper()
	return open(connectortest.NewAgent(t, h, seed, home), opts...)
}

func open(env *connectortest.Agent, opts ...agentOpt) *agent {
	c := env.Open(opts...)
	return &agent{Module: c.Profile(), conn: c, env: env, id: env.ID, sess: "session-1"}
}

// reopen closes the connector and opens a new one on the same home.
func (a *agent) reopen(opts ...agentOpt) *agent {
	a.conn.Close()
	return open(a.env, opts...)
}

func newProxy(t testing.TB, h *hubtest.Hub) *connectortest.Proxy { return connectortest.NewProxy(t, h) }

func withHTTP(f func(origin string, roots *x509.CertPool) (*http.Client, error)) agentOpt {
	return connectortest.WithHTTP(f)
}

func must[T any](t testing.TB, tool string) func(v T, err error) T {
	return connectortest.Must[T](t, tool)
}

func code(err error) string { return connectortest.Code(err) }

func asErr(err error, target **engine.Error) bool { return errors.As(err, target) }
