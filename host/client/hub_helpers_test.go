package client

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/tlsca"
	"apconnect/host/identity"
	"apconnect/host/proto/profile"
)

// realHub starts the real local hub over HTTPS and returns it with an
// *http.Client built the way the connector builds one: NewHTTPClient with
// the hub's ca.pem as the only root.
func realHub(t *testing.T, opts ...hubtest.Option) (*hubtest.Hub, *http.Client) {
	t.Helper()
	h := hubtest.Start(t, opts...)
	pool, err := tlsca.LoadPool(h.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	hc := NewHTTPClient(pool, 10*time.Second)
	t.Cleanup(hc.CloseIdleConnections)
	return h, hc
}

// profileUpdate signs a profile.update for a with the given nonce.
func profileUpdate(t *testing.T, a *hubtest.Agent, now time.Time, nonce int64, name string) *identity.Envelope {
	t.Helper()
	p, err := json.Marshal(map[string]any{"id": a.ID, "name": name, "capabilities": []string{"testing"}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := identity.ParseStrict(p)
	if err != nil {
		t.Fatal(err)
	}
	return a.Sign(t, identity.Event{Protocol: profile.Protocol, Type: "profile.update",
		CreatedAt: now.UnixMilli(), Nonce: nonce, Payload: v})
}
