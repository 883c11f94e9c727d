package main

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"apconnect/host/identity"
)

func TestInitIDDoctor(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	code, out, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key")
	if code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	agent := between(out, "agent id:  ", "\n")
	if !identity.ValidAgentID(agent) {
		t.Fatalf("init printed no agent id:\n%s", out)
	}
	code, out, _ = runCLI(t, "id", "--home", home)
	if code != 0 || !strings.Contains(out, agent) {
		t.Fatalf("id: %d %s", code, out)
	}
	pub, _ := identity.ParseAgentID(agent)
	if !strings.Contains(out, "public key: "+identity.EncodeBase64URL(pub)) {
		t.Fatalf("id does not print the public key:\n%s", out)
	}
	code, out, _ = runCLI(t, "doctor", "--home", home)
	if code != 0 || !strings.Contains(out, "UNENCRYPTED") {
		t.Fatalf("doctor: %d\n%s", code, out)
	}

	// A second init with the same name refuses and changes nothing.
	key := filepath.Join(home, "keys", "default.key")
	before, _ := os.ReadFile(key)
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key"); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("second init: %d %s", code, errOut)
	}
	after, _ := os.ReadFile(key)
	if string(before) != string(after) {
		t.Fatal("second init changed the key")
	}
}

// Serial: the passphrase comes from the process environment (t.Setenv).
func TestInitEncryptedAndDoctorDecrypts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("APCONNECT_PASSPHRASE", "correct horse")
	if code, _, errOut := runCLI(t, "init", "--home", home, "--name", "alice"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	code, out, _ := runCLI(t, "doctor", "--home", home, "--json")
	if code != 0 || !strings.Contains(out, "passphrase ok") {
		t.Fatalf("doctor: %d %s", code, out)
	}
	t.Setenv("APCONNECT_PASSPHRASE", "wrong")
	code, out, _ = runCLI(t, "doctor", "--home", home)
	if code != 1 || !strings.Contains(out, "FAIL") {
		t.Fatalf("doctor with a wrong passphrase: %d\n%s", code, out)
	}
}

func TestInitImportSeed(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	seedFile := filepath.Join(t.TempDir(), "seed")
	os.WriteFile(seedFile, []byte("0707070707070707070707070707070707070707070707070707070707070707\n"), 0o600)
	code, out, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key", "--import", seedFile)
	if code != 0 {
		t.Fatal(errOut)
	}
	// The Agent Identity vector key.
	if !strings.Contains(out, "did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw") {
		t.Fatalf("imported seed gave another id:\n%s", out)
	}
}

func TestDoctorFailsOnLooseKeyMode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key"); code != 0 {
		t.Fatal(errOut)
	}
	os.Chmod(filepath.Join(home, "keys", "default.key"), 0o644)
	code, out, _ := runCLI(t, "doctor", "--home", home)
	if code != 1 || !strings.Contains(out, "chmod 600") {
		t.Fatalf("doctor: %d\n%s", code, out)
	}
}

// TestDoctorChecksHosts runs doctor against real TLS servers trusted through
// a ca_file: one serving a valid discovery document, one pointing an endpoint
// at another origin.
func TestDoctorChecksHosts(t *testing.T) {
	t.Parallel()
	var good, bad *httptest.Server
	good = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-discourse" {
			http.NotFound(w, r) // no other service: not a failure
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"protocol": "agent-discourse/1.0", "service": good.URL,
			"endpoints": map[string]string{"rooms": good.URL + "/v1/rooms"}, "features": []string{"rooms"}})
	}))
	defer good.Close()
	bad = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-discourse" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"protocol": "agent-discourse/1.0", "service": bad.URL,
			"endpoints": map[string]string{"rooms": "https://elsewhere.example/v1/rooms"}})
	}))
	defer bad.Close()

	home := t.TempDir()
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key", "--host", good.URL, "--ca", writeCA(t, good)); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ := runCLI(t, "doctor", "--home", home)
	if code != 0 || !strings.Contains(out, "agent-discourse/1.0, features: rooms") {
		t.Fatalf("doctor with a good host: %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "init", "--home", home, "--name", "two", "--unencrypted-key", "--host", bad.URL, "--ca", writeCA(t, bad)); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ = runCLI(t, "doctor", "--home", home)
	if code != 1 || !strings.Contains(out, "another origin") {
		t.Fatalf("doctor with a bad host: %d\n%s", code, out)
	}
}

func writeCA(t *testing.T, s *httptest.Server) string {
	t.Helper()
	cert := s.TLS.Certificates[0]
	p := filepath.Join(t.TempDir(), "ca.pem")
	f, _ := os.Create(p)
	defer f.Close()
	pem.Encode(f, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	return p
}

func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	if j := strings.Index(s, end); j >= 0 {
		return s[:j]
	}
	return s
}
