package connectortest

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/engine"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/toolcatalog"
)

// StartHub starts a real local hub with the Discourse write quotas raised
// (tests send faster than an agent would).
func StartHub(t testing.TB, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	opts = append([]hubtest.Option{hubtest.WithOptions(func(o *hub.Options) {
		o.Limits.Discourse.Rules.MessageRate = -1
		o.Limits.Discourse.Rules.SignalRate = -1
		o.Limits.Discourse.Rules.ControlRate = -1
	})}, opts...)
	return hubtest.Start(t, opts...)
}

// Option edits the options of a connector under test.
type Option func(o *connector.Options)

// WithHTTP routes the connector's requests through a custom client (a
// Proxy's Client).
func WithHTTP(f func(origin string, roots *x509.CertPool) (*http.Client, error)) Option {
	return func(o *connector.Options) { o.HTTPClient = f }
}

// Agent is one agent's home and key: Open builds its connector, again after
// a restart.
type Agent struct {
	T    testing.TB
	ID   string
	Home string
	Cfg  *config.Config
	Sig  identity.Signer
}

// NewAgent makes a fresh home (or uses home) for the agent whose seed
// repeats seed, allowing only the hub as host and profile service.
func NewAgent(t testing.TB, h *hubtest.Hub, seed byte, home string) *Agent {
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
	return &Agent{T: t, ID: sig.AgentID(), Home: home, Cfg: cfg, Sig: sig}
}

// Open builds a connector on the agent's home (closed when the test ends):
// no Discourse write budget, a one-second poll.
func (a *Agent) Open(opts ...Option) *connector.Connector {
	a.T.Helper()
	o := connector.Options{Config: a.Cfg, Signer: a.Sig, WriteLimits: &adp.Limits{}, PollInterval: time.Second}
	for _, f := range opts {
		f(&o)
	}
	c, err := connector.New(context.Background(), o)
	if err != nil {
		a.T.Fatal(err)
	}
	a.T.Cleanup(func() { c.Close() })
	return c
}

// Check validates a tool result against the catalog's output schema.
func Check(t testing.TB, tool string, v any) {
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

// Must fails the test on error and validates the result.
func Must[T any](t testing.TB, tool string) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		Check(t, tool, v)
		return v
	}
}

// Code returns the connector error code of err ("" for none).
func Code(err error) string {
	var e *engine.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Eventually retries cond until it holds or d passes.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
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
