package identity

import (
	"crypto/ed25519"
	"crypto/sha256"
	"testing"
)

// testSigner returns a deterministic signer derived from name.
func testSigner(t testing.TB, name string) *KeySigner {
	t.Helper()
	seed := sha256.Sum256([]byte("apconnect identity test key " + name))
	return NewKeySigner(ed25519.NewKeyFromSeed(seed[:]))
}
