package delegation

import (
	"encoding/json"
	"strings"
	"testing"

	"apconnect/host/identity"
)

func TestValidateGrantPayload(t *testing.T) {
	base := func() GrantPayload {
		return GrantPayload{ID: "del_1", PrincipalID: "https://api.al.ink/d9c6a99cne5g00a6scn0", Subject: root.AgentID(),
			Scopes: []string{"inbox.screen"}, Audiences: []string{testOrigin}}
	}
	created := ptrInt(1000)
	cases := []struct {
		name    string
		edit    func(p *GrantPayload)
		created *int64
		want    string
	}{
		{"base", nil, created, "ok"},
		{"expires_at equal to not_before", func(p *GrantPayload) { p.NotBefore, p.ExpiresAt = ptrInt(2000), ptrInt(2000) }, created, CodeGrantExpired},
		{"expires_at before created_at", func(p *GrantPayload) { p.NotBefore, p.ExpiresAt = ptrInt(500), ptrInt(800) }, created, CodeGrantExpired},
		{"expires_at after created_at", func(p *GrantPayload) { p.NotBefore, p.ExpiresAt = ptrInt(500), ptrInt(1500) }, created, "ok"},
		{"no created_at to compare", func(p *GrantPayload) { p.ExpiresAt = ptrInt(800) }, nil, "ok"},
		{"dot segment id", func(p *GrantPayload) { p.ID = ".." }, created, CodeInvalidEvent},
		{"129-character id", func(p *GrantPayload) { p.ID = strings.Repeat("a", 129) }, created, CodeInvalidEvent},
		{"http principal", func(p *GrantPayload) { p.PrincipalID = "http://example.com" }, created, CodeInvalidEvent},
		{"principal without host", func(p *GrantPayload) { p.PrincipalID = "https://" }, created, CodeInvalidEvent},
		{"principal with an unclosed bracket", func(p *GrantPayload) { p.PrincipalID = "https://[::1" }, created, CodeInvalidEvent},
		{"subject not an Agent ID", func(p *GrantPayload) { p.Subject = "did:agent:short" }, created, CodeInvalidEvent},
		{"no scopes", func(p *GrantPayload) { p.Scopes = nil }, created, CodeInvalidEvent},
		{"wildcard scope", func(p *GrantPayload) { p.Scopes = []string{"*"} }, created, CodeInvalidEvent},
		{"duplicate audience", func(p *GrantPayload) { p.Audiences = []string{testOrigin, testOrigin} }, created, CodeInvalidEvent},
		{"audience with a path", func(p *GrantPayload) { p.Audiences = []string{testOrigin + "/"} }, created, CodeInvalidEvent},
		{"Agent ID audience", func(p *GrantPayload) { p.Audiences = []string{other.AgentID()} }, created, "ok"},
		{"negative not_before", func(p *GrantPayload) { p.NotBefore = ptrInt(-1) }, created, CodeInvalidEvent},
		{"created_at beyond 2^53-1", nil, ptrInt(1 << 53), CodeInvalidEvent},
	}
	for _, c := range cases {
		p := base()
		if c.edit != nil {
			c.edit(&p)
		}
		if got := code(ValidateGrantPayload(&p, c.created)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	if got := code(ValidateRevokePayload(&RevokePayload{ID: "del", PrincipalID: "http://x"})); got != CodeInvalidEvent {
		t.Errorf("revoke with http principal: %s", got)
	}
}

// TestValidateEnvelope: the six event fields, the closed payloads and the
// signature.
func TestValidateEnvelope(t *testing.T) {
	env := grant(t, restricted, 1)
	ev, err := ValidateEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Grant == nil || ev.CredentialID() != "del" || ev.PrincipalID() != testPrincipal || ev.Actor != restricted.AgentID() {
		t.Errorf("event %+v", ev)
	}
	rev, err := ValidateEnvelope(revoke(t, root, 300, 2))
	if err != nil || rev.Revoke == nil || rev.CredentialID() != "del" {
		t.Fatalf("revoke: %+v %v", rev, err)
	}
	signed := func(typ string, payload map[string]any) *identity.Envelope {
		return sign(t, root, identity.Event{Protocol: Protocol, Type: typ, Actor: root.AgentID(), CreatedAt: 200, Nonce: 9, Payload: payload})
	}
	grantPayload := func() map[string]any {
		return (&GrantPayload{ID: "del", PrincipalID: testPrincipal, Subject: root.AgentID(), Scopes: []string{"draft"},
			Audiences: []string{testOrigin}}).Value()
	}
	withExtra := grantPayload()
	withExtra["note"] = "x"
	relNumber := grantPayload()
	relNumber["relationship"] = json.Number("1")
	revokeWithSubject := (&RevokePayload{ID: "del", PrincipalID: testPrincipal}).Value()
	revokeWithSubject["subject"] = root.AgentID()
	wrongProtocol := sign(t, root, identity.Event{Protocol: "agent-delegation/2.0", Type: TypeGrant, Actor: root.AgentID(),
		CreatedAt: 200, Nonce: 9, Payload: grantPayload()})
	tampered := *env
	tampered.Signature = flip(env.Signature)
	cases := []struct {
		name string
		env  *identity.Envelope
		want string
	}{
		{"unknown payload member", signed(TypeGrant, withExtra), CodeInvalidEvent},
		{"relationship not a string", signed(TypeGrant, relNumber), CodeInvalidEvent},
		{"grant-shaped revoke", signed(TypeRevoke, revokeWithSubject), CodeInvalidEvent},
		{"revoke-shaped grant", signed(TypeGrant, (&RevokePayload{ID: "del", PrincipalID: testPrincipal}).Value()), CodeInvalidEvent},
		{"unknown type", signed("delegation.suspend", grantPayload()), CodeInvalidEvent},
		{"other protocol", wrongProtocol, CodeInvalidEvent},
		{"tampered signature", &tampered, CodeInvalidSignature},
	}
	for _, c := range cases {
		if _, err := ValidateEnvelope(c.env); code(err) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, code(err), c.want)
		}
	}
	// Only the six identity fields: a Discourse field, signed, is refused.
	extra := env.Event
	extra.Fields = map[string]any{"room_id": "r1"}
	if _, err := ValidateEnvelope(sign(t, restricted, extra)); code(err) != CodeInvalidEvent {
		t.Errorf("room_id on a delegation event: %v", err)
	}
}

// flip changes one base64url character of s (keeping it canonical).
func flip(s string) string {
	b := []byte(s)
	if b[5] == 'A' {
		b[5] = 'B'
	} else {
		b[5] = 'A'
	}
	return string(b)
}
