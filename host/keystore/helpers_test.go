package keystore_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"apconnect/host/keystore"
)

// cheap are argon2id parameters that keep tests fast.
var cheap = keystore.KDFParams{Time: 1, MemoryKiB: 8, Threads: 1}

var testPass = []byte("correct horse battery staple")

// rfcSeed is the secret key of RFC 8032 section 7.1 test 1, and rfcPub its
// public key.
const (
	rfcSeedHex = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
	rfcPubHex  = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
)

// newKeyFile writes a fresh encrypted key under a temp dir and returns the
// key and the path.
func newKeyFile(t *testing.T) (*keystore.Key, string) {
	t.Helper()
	k, err := keystore.Generate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.key")
	if err := keystore.Save(path, k, keystore.StaticPassphrase(testPass), keystore.WithKDFParams(cheap)); err != nil {
		t.Fatal(err)
	}
	return k, path
}

// readJSON decodes a key file into a generic map for mutation.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writeRaw replaces path with data, mode 0600.
func writeRaw(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, m map[string]any) {
	t.Helper()
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, path, data)
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code keystore.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := keystore.CodeOf(err); got != code {
		t.Fatalf("got code %q (%v), want %q", got, err, code)
	}
}

// countingSource counts passphrase requests.
type countingSource struct {
	pass  []byte
	calls int
	reqs  []keystore.PassphraseRequest
}

func (c *countingSource) Passphrase(req keystore.PassphraseRequest) ([]byte, error) {
	c.calls++
	c.reqs = append(c.reqs, req)
	return append([]byte(nil), c.pass...), nil
}
