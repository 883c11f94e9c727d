package delegation

import (
	"crypto/ed25519"
	"encoding/json"
	"testing"

	"apconnect/host/identity"
)

// The principal and relying application of the tests, after the SDK's
// conformance tests.
const (
	testPrincipal = "https://example.com/p"
	testOrigin    = "https://dmsg.net"
)

// key returns the signer of a 32-byte seed filled with b.
func key(b byte) *identity.KeySigner {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = b
	}
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))
}

// restricted is a controller limited to "draft" for testOrigin; root is
// unrestricted; successor and other are further keys.
var (
	restricted = key(61)
	root       = key(62)
	successor  = key(63)
	other      = key(64)
)

// testDocument is the principal of the tests: restricted and root current
// from 100, the service at https://example.com.
func testDocument() *PrincipalDocument {
	return &PrincipalDocument{
		ID: testPrincipal, Protocol: Protocol, UpdatedAt: 2000, DelegationService: "https://example.com",
		Controllers: []Controller{
			{ID: restricted.AgentID(), Source: testOrigin, ValidFrom: 100,
				Delegation: &Authority{Scopes: []string{"draft"}, Audiences: []string{testOrigin}}},
			{ID: root.AgentID(), Source: "local", ValidFrom: 100, Delegation: &Authority{Unrestricted: true}},
		},
	}
}

// grantWith signs a grant of "del" to root's key for draft at testOrigin,
// created at 200 and expiring at 1000, after edit.
func grantWith(t testing.TB, actor *identity.KeySigner, nonce int64, edit func(*GrantPayload)) *identity.Envelope {
	t.Helper()
	p := GrantPayload{ID: "del", PrincipalID: testPrincipal, Subject: root.AgentID(),
		Scopes: []string{"draft"}, Audiences: []string{testOrigin}, ExpiresAt: ptrInt(1000)}
	if edit != nil {
		edit(&p)
	}
	return sign(t, actor, GrantEvent(actor.AgentID(), 200, nonce, p))
}

func grant(t testing.TB, actor *identity.KeySigner, nonce int64) *identity.Envelope {
	return grantWith(t, actor, nonce, nil)
}

func revoke(t testing.TB, actor *identity.KeySigner, createdAt, nonce int64) *identity.Envelope {
	t.Helper()
	return sign(t, actor, RevokeEvent(actor.AgentID(), createdAt, nonce, RevokePayload{ID: "del", PrincipalID: testPrincipal}))
}

// sign signs ev and returns the envelope as a receiver parses it.
func sign(t testing.TB, s identity.Signer, ev identity.Event) *identity.Envelope {
	t.Helper()
	env, err := identity.SignEvent(s, ev)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := identity.ParseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

func materialize(t testing.TB, env *identity.Envelope, at int64, previous *Credential) *Credential {
	t.Helper()
	c, err := Materialize(env, StatusActive, at, previous)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func record(env *identity.Envelope, at int64) Record { return Record{Envelope: env, AcceptedAt: at} }

// code is "ok" for nil and the stable code otherwise.
func code(err error) string {
	if err == nil {
		return "ok"
	}
	if c := ErrorCode(err); c != "" {
		return c
	}
	return "uncoded: " + err.Error()
}
