package delegation_test

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/connector/delegation"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
	proto "apconnect/host/proto/delegation"
)

// Principal URLs are read only on [[hosts]] origins granted
// delegation.read, without following redirects and within the size bound:
// every other read is refused before any request, and a redirect is not
// followed.
func TestPrincipalReadsAreGuarded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(rw, r, w.acme, http.StatusFound)
		case "/big":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"id":"` + strings.Repeat("a", proto.MaxPrincipalDocumentBytes) + `"}`))
		case "/copy":
			_, _ = rw.Write([]byte(`{"id":"https://unconfigured.example/p","protocol":"agent-delegation/1.0","controllers":[],"updated_at":1}`))
		default:
			http.NotFound(rw, r)
		}
	}))
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := connectortest.NewAgent(t, w.h, 0x65, "")
	env.Cfg.Hosts = append(env.Cfg.Hosts,
		config.Host{URL: srv.URL, Label: "extra", CAFile: caFile},
		config.Host{URL: "https://no-grant.example", Label: "nogrant", Grants: []string{"discourse.read"}})
	env.Cfg.Identities[0].ProfileServices = append(env.Cfg.Identities[0].ProfileServices, "https://profiles.example")
	c := env.Open(connectortest.WithHTTP(func(origin string, roots *x509.CertPool) (*http.Client, error) {
		if origin == w.origin {
			return w.proxy.Client(origin, roots)
		}
		return client.NewHTTPClient(roots, 0), nil
	}))
	m := c.Delegation()
	before := w.proxy.Requests.Load()
	for _, tc := range []struct {
		url, code string
	}{
		{"https://unconfigured.example/p", engine.CodeHostNotAllowed},
		{"https://no-grant.example/p", engine.CodePermissionDenied},
		{"https://profiles.example/p", engine.CodePermissionDenied},
		{"http://" + strings.TrimPrefix(w.acme, "https://"), engine.CodeInvalidInput},
		{srv.URL + "/redirect", proto.CodePrincipalUnresolvable},
		{srv.URL + "/big", proto.CodePrincipalUnresolvable},
		{srv.URL + "/copy", engine.CodeHostNotAllowed},
		{srv.URL + "/missing", proto.CodePrincipalUnresolvable},
	} {
		_, err := m.PrincipalResolve(ctx, delegation.PrincipalResolveInput{URL: tc.url})
		if code(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.url, err, tc.code)
		}
	}
	if n := w.proxy.Requests.Load() - before; n != 0 {
		t.Errorf("%d requests reached the hub (a followed redirect)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/redirect"] != 1 || hits["/big"] != 1 || hits["/copy"] != 1 {
		t.Errorf("hits: %v", hits)
	}
	// The hub's principal is read through its own grant.
	if res, err := m.PrincipalResolve(ctx, delegation.PrincipalResolveInput{URL: w.acme}); err != nil || res.CanonicalID != w.acme {
		t.Errorf("acme: %v %+v", err, res)
	}
}
