package tlsca

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEnsureCreatesAndReuses(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	m, err := Ensure(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Created) != 4 || m.CAFile != filepath.Join(dir, "ca.pem") {
		t.Fatalf("created %v, CAFile %s", m.Created, m.CAFile)
	}
	if !m.CA.IsCA || m.CA.Subject.CommonName != CACommonName || m.CA.NotAfter.Sub(now) < 9*365*24*time.Hour {
		t.Fatalf("CA: %v %q until %v", m.CA.IsCA, m.CA.Subject.CommonName, m.CA.NotAfter)
	}
	for _, h := range LoopbackHosts() {
		if err := m.Leaf.VerifyHostname(h); err != nil {
			t.Fatalf("leaf: %v", err)
		}
	}
	for _, k := range []string{CAKeyFileName, ServerKeyFileName} {
		st, _ := os.Stat(filepath.Join(dir, k))
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v", k, st.Mode().Perm())
		}
	}
	ca, server := read(t, dir, CAFileName), read(t, dir, ServerFileName)

	m2, err := Ensure(dir, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Created) != 0 || !bytes.Equal(read(t, dir, CAFileName), ca) || !bytes.Equal(read(t, dir, ServerFileName), server) {
		t.Fatalf("second Ensure rewrote %v", m2.Created)
	}
	pool, err := LoadPool(m2.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Leaf.Verify(x509Opts(pool, now)); err != nil {
		t.Fatalf("leaf does not verify against ca.pem: %v", err)
	}
}

func TestEnsureRenews(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if _, err := Ensure(dir, now); err != nil {
		t.Fatal(err)
	}
	ca := read(t, dir, CAFileName)

	// The server certificate nears expiry: reissued under the same CA.
	m, err := Ensure(dir, now.Add(ServerValidity-ServerRenewBefore+time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(t, dir, CAFileName), ca) || len(m.Created) != 2 {
		t.Fatalf("server renewal created %v", m.Created)
	}

	// A missing name: reissued with it.
	m, err = Ensure(dir, now, "192.0.2.7", "hub.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Created) != 2 || m.Leaf.VerifyHostname("192.0.2.7") != nil || m.Leaf.VerifyHostname("hub.example") != nil {
		t.Fatalf("extra names: created %v", m.Created)
	}

	// The CA nears expiry: everything is replaced.
	m, err = Ensure(dir, now.Add(CAValidity-CARenewBefore+time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(read(t, dir, CAFileName), ca) || len(m.Created) != 4 {
		t.Fatalf("CA renewal created %v", m.Created)
	}
	if m.Leaf.NotAfter.After(m.CA.NotAfter) {
		t.Fatal("server certificate outlives its CA")
	}
}

func TestEnsureReplacesDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Ensure(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CAKeyFileName), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Ensure(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Created) != 4 {
		t.Fatalf("damaged CA key: created %v", m.Created)
	}
	if err := os.Remove(filepath.Join(dir, ServerFileName)); err != nil {
		t.Fatal(err)
	}
	if m, err = Ensure(dir, time.Now()); err != nil || len(m.Created) != 2 {
		t.Fatalf("missing server cert: %v %v", err, m.Created)
	}
	if _, err := LoadPool(filepath.Join(dir, CAKeyFileName)); err == nil {
		t.Fatal("LoadPool accepted a key file")
	}
}
