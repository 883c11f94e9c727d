package hub_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/tlsca"
)

// TestListenRefusesNonLoopback: without AllowRemote only loopback
// addresses and localhost are accepted, and nothing is written.
func TestListenRefusesNonLoopback(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0", "127.0.0.1", "127.0.0.1:http-nope"} {
		t.Run(listen, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hub")
			_, err := hub.New(hub.Options{Listen: listen, DataDir: dir})
			if err == nil {
				t.Fatal("accepted")
			}
			if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
				t.Fatalf("data directory created for a refused address (%v)", err)
			}
		})
	}
	_, err := hub.New(hub.Options{Listen: "0.0.0.0:0", DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "allow-remote") {
		t.Fatalf("error does not explain the refusal: %v", err)
	}
	if _, err := hub.New(hub.Options{DataDir: ""}); err == nil {
		t.Fatal("accepted an empty data directory")
	}
}

// TestAllowRemote binds every interface when explicitly allowed.
func TestAllowRemote(t *testing.T) {
	h := hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) {
		o.Listen = "0.0.0.0:0"
		o.AllowRemote = true
	}))
	if !strings.HasPrefix(h.Origin(), "https://127.0.0.1:") {
		t.Fatalf("origin %s", h.Origin())
	}
	wantOK(t, h.Do(http.MethodGet, "/.well-known/agent-profile", nil, nil))
}

// TestOriginAndLocalhost: the origin carries the bound port and the
// certificate covers localhost, 127.0.0.1 and ::1.
func TestOriginAndLocalhost(t *testing.T) {
	h := hubtest.Start(t, hubtest.WithOptions(func(o *hub.Options) { o.Listen = "localhost:0" }))
	_, port, _ := net.SplitHostPort(h.Addr().String())
	if h.Origin() != "https://localhost:"+port {
		t.Fatalf("origin %s, bound %s", h.Origin(), h.Addr())
	}
	wantOK(t, h.Do(http.MethodGet, "/.well-known/agent-profile", nil, nil))
	leaf := h.TLS().Leaf
	for _, name := range tlsca.LoopbackHosts() {
		if err := leaf.VerifyHostname(name); err != nil {
			t.Fatalf("certificate does not cover %s: %v", name, err)
		}
	}
}

// TestCAFile: ca.pem is written where the contract says, keys are private,
// a client trusting only ca.pem connects and one using the system roots
// does not; plain HTTP is not served.
func TestCAFile(t *testing.T) {
	dir := t.TempDir()
	h := hubtest.Start(t, hubtest.WithDir(dir))
	if h.CAFile() != filepath.Join(dir, "ca.pem") {
		t.Fatalf("CAFile %s", h.CAFile())
	}
	for name, want := range map[string]os.FileMode{"ca-key.pem": 0o600, "server-key.pem": 0o600, "ca.pem": 0o644} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: %v mode %v, want %v", name, err, st.Mode().Perm(), want)
		}
	}
	if h.TLS().CA.Subject.CommonName != "apconnect local hub CA" {
		t.Fatalf("CA common name %q", h.TLS().CA.Subject.CommonName)
	}

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(readFile(t, filepath.Join(dir, "ca.pem")))) {
		t.Fatal("ca.pem holds no certificate")
	}
	only := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer only.CloseIdleConnections()
	resp, err := only.Get(h.Origin() + "/.well-known/agent-profile")
	if err != nil {
		t.Fatalf("client trusting only ca.pem: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}

	system := &http.Client{Transport: &http.Transport{}}
	_, err = system.Get(h.Origin() + "/.well-known/agent-profile")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("client without ca.pem: %v, want an unknown-authority error", err)
	}

	plain, err := http.Get("http://" + h.Addr().String() + "/.well-known/agent-profile")
	if err == nil {
		body, _ := io.ReadAll(plain.Body)
		plain.Body.Close()
		if plain.StatusCode != http.StatusBadRequest || strings.Contains(string(body), "agent-profile/1.0") {
			t.Fatalf("plain HTTP served: %d %s", plain.StatusCode, body)
		}
	}
}

// TestServeStopsOnCancel: Serve returns nil once its context is cancelled,
// after which the port no longer accepts connections; Close is idempotent.
func TestServeStopsOnCancel(t *testing.T) {
	h, err := hub.New(hub.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()
	pool, _ := tlsca.LoadPool(h.CAFile())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := client.Get(h.Origin() + "/.well-known/agent-profile")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hub did not come up: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	select {
	case <-h.Done():
	default:
		t.Fatal("Done not closed")
	}
	if h.Context().Err() == nil {
		t.Fatal("hub context not cancelled at shutdown")
	}
	if _, err := net.DialTimeout("tcp", h.Addr().String(), time.Second); err == nil {
		t.Fatal("port still accepts connections")
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err == nil {
		t.Fatal("restarted a closed hub")
	}
}

// TestCloseWithoutServe releases the port and the database.
func TestCloseWithoutServe(t *testing.T) {
	dir := t.TempDir()
	h, err := hub.New(hub.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	addr := h.Addr().String()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port not released: %v", err)
	}
	ln.Close()
	h2, err := hub.New(hub.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	h2.Close()
}
