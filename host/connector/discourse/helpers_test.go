package discourse_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/toolcatalog"
)

// startHub starts a real local hub with the message quota raised (tests
// send faster than an agent would).
func startHub(t testing.TB, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	opts = append([]hubtest.Option{hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
		o.Limits.Discourse.Rules.SignalRate = -1
		o.Limits.Discourse.Rules.ControlRate = -1
	})}, opts...)
	return hubtest.Start(t, opts...)
}

// agent is one connector under test.
type agent struct {
	*connector.Connector
	t    testing.TB
	id   string
	home string
	cfg  *config.Config
	sig  identity.Signer
	sess connector.SessionID
}

type agentOpt func(o *connector.Options)

// newAgent builds a connector for the agent whose seed repeats seed, with a
// fresh home (or home when given) allowing only the hub.
func newAgent(t testing.TB, h *hubtest.Hub, seed byte, home string, opts ...agentOpt) *agent {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	cfg, err := config.Default(home, config.DefaultOptions{HostURL: h.Origin(), HostLabel: "hub", HostCAFile: h.CAFile(),
		ProfileServices: []string{h.Origin()}})
	if err != nil {
		t.Fatal(err)
	}
	sig := hubtest.NewAgent(seed).Signer
	o := connector.Options{Config: cfg, Signer: sig, WriteLimits: &adp.Limits{}, PollInterval: time.Second}
	for _, f := range opts {
		f(&o)
	}
	c, err := connector.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{Connector: c, t: t, id: sig.AgentID(), home: home, cfg: cfg, sig: sig, sess: "session-1"}
	t.Cleanup(func() { c.Close() })
	return a
}

// reopen closes the connector and opens a new one on the same home (a
// restart).
func (a *agent) reopen(opts ...agentOpt) *agent {
	a.t.Helper()
	a.Close()
	o := connector.Options{Config: a.cfg, Signer: a.sig, WriteLimits: &adp.Limits{}, PollInterval: time.Second}
	for _, f := range opts {
		f(&o)
	}
	c, err := connector.New(context.Background(), o)
	if err != nil {
		a.t.Fatal(err)
	}
	b := &agent{Connector: c, t: a.t, id: a.id, home: a.home, cfg: a.cfg, sig: a.sig, sess: a.sess}
	a.t.Cleanup(func() { c.Close() })
	return b
}

// withHTTP routes the connector's requests through a custom client.
func withHTTP(f func(origin string, roots *x509.CertPool) (*http.Client, error)) agentOpt {
	return func(o *connector.Options) { o.HTTPClient = f }
}

// check validates a tool result against the catalog's output schema.
func check(t testing.TB, tool string, v any) {
	t.Helper()
	s, ok := toolcatalog.OutputSchema(tool)
	if !ok {
		t.Fatalf("no output schema for %s", tool)
	}
	if err := s.ValidateValue(v); err != nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		t.Fatalf("%s result does not match its output schema: %v\n%s", tool, err, b)
	}
}

// must fails the test on error and validates the result.
func must[T any](t testing.TB, tool string) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		check(t, tool, v)
		return v
	}
}

// code returns the connector error code of err.
func code(err error) string {
	var e *connector.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

var ctx = context.Background()

// createRoom creates a room as a, starting now, with extra input. Unless
// edit sets another policy, speakers and observers may join a public test
// room directly (the public default is observers only).
func createRoom(t testing.TB, a *agent, h *hubtest.Hub, visibility string, edit func(in *connector.RoomCreateInput)) string {
	t.Helper()
	now := time.Now().UnixMilli()
	in := connector.RoomCreateInput{Host: h.Origin(), Topic: "Test room", Visibility: visibility, StartTime: now - 1000, EndTime: now + 3600_000}
	if visibility == "public" {
		in.Policy = map[string]any{"open_roles": []any{"speaker", "observer"}}
	}
	if edit != nil {
		edit(&in)
	}
	res := must[*connector.RoomCreateResult](t, "agent_protocols_room_create")(a.RoomCreate(ctx, a.sess, in))
	return res.Room.RoomID
}

// eventually retries cond until it holds or the deadline passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func asErr(err error, target **connector.Error) bool { return errors.As(err, target) }

func tlsConfig(pool *x509.CertPool) *tls.Config { return &tls.Config{RootCAs: pool} }
