package profile

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"apconnect/host/identity"
)

func parse(t *testing.T, s string) any {
	t.Helper()
	v, err := identity.ParseStrict([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// signer returns the key whose seed is 32 bytes of b (the vectors' actor is
// seed 0x09).
func signer(b byte) *identity.KeySigner {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = b
	}
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))
}

func sign(t *testing.T, s identity.Signer, ev identity.Event) *identity.Envelope {
	t.Helper()
	env, err := identity.SignEvent(s, ev)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// asError returns err's *identity.Error, failing the test when it has none.
func asError(t *testing.T, err error) *identity.Error {
	t.Helper()
	var e *identity.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *identity.Error", err, err)
	}
	return e
}

type vectors struct {
	Protocol string `json:"protocol"`
	Payloads struct {
		Valid, Invalid []struct {
			Name    string          `json:"name"`
			Actor   string          `json:"actor"`
			Payload json.RawMessage `json:"payload"`
		}
	} `json:"payloads"`
	History struct {
		Envelopes []json.RawMessage `json:"envelopes"`
		Latest    map[string]any    `json:"latest"`
	} `json:"history"`
	ExplicitEmpty struct {
		Envelope json.RawMessage `json:"envelope"`
		Document json.RawMessage `json:"document"`
	} `json:"explicit_empty"`
}

func loadVectors(t *testing.T) *vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/agent-profile-1.0.vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}
