package delegation

import (
	"testing"

	"apconnect/host/identity"
)

// TestAcceptance ports the SDK's authority_ownership_and_materialization:
// who may grant what, and management inside the ceiling.
func TestAcceptance(t *testing.T) {
	doc := testDocument()
	env := grant(t, restricted, 1)
	cred := materialize(t, env, 250, nil)
	rootCred := materialize(t, grant(t, root, 1), 250, nil)
	wide := materialize(t, grantWith(t, root, 2, func(p *GrantPayload) { p.Scopes = []string{"draft", "admin"} }), 250, nil)
	signingOnly := testDocument()
	signingOnly.Controllers[0].Delegation = nil
	revocation := revoke(t, root, 400, 2)
	revoked := materialize(t, revocation, 450, cred)
	cases := []struct {
		name       string
		env        *identity.Envelope
		doc        *PrincipalDocument
		resolved   string
		acceptedAt int64
		previous   *Credential
		want       string
	}{
		{"restricted grant inside ceiling", env, doc, testPrincipal, 250, nil, "ok"},
		{"scope outside ceiling", grantWith(t, restricted, 2, func(p *GrantPayload) { p.Scopes = []string{"admin"} }), doc, testPrincipal, 250, nil, CodeDelegationCeilingExceeded},
		{"audience outside ceiling", grantWith(t, restricted, 2, func(p *GrantPayload) { p.Audiences = []string{"https://tokenlist.ing"} }), doc, testPrincipal, 250, nil, CodeDelegationCeilingExceeded},
		{"copy served elsewhere", env, doc, "https://impostor.example", 250, nil, CodePrincipalUnresolvable},
		{"expired at acceptance", env, doc, testPrincipal, 1000, nil, CodeGrantExpired},
		{"signing-only key", env, signingOnly, testPrincipal, 250, nil, CodeDelegationNotPermitted},
		{"restricted replaces another key's credential inside its ceiling", env, doc, testPrincipal, 300, rootCred, "ok"},
		{"restricted replaces a credential outside its ceiling", env, doc, testPrincipal, 300, wide, CodeDelegationCeilingExceeded},
		{"unrestricted revokes another key's credential", revocation, doc, testPrincipal, 450, cred, "ok"},
		{"revocation without a credential", revocation, doc, testPrincipal, 450, nil, CodeCredentialNotFound},
		{"reactivation of a revoked credential", grant(t, root, 3), doc, testPrincipal, 500, revoked, "ok"},
		{"replacement moves to another subject", grantWith(t, root, 2, func(p *GrantPayload) { p.Subject = other.AgentID() }), doc, testPrincipal, 300, cred, CodeCredentialIdentityMismatch},
		{"acceptance before the previous one", grant(t, root, 3), doc, testPrincipal, 240, cred, CodeInvalidDelegation},
		{"unknown actor", grant(t, other, 1), doc, testPrincipal, 250, nil, CodeControllerNotCurrent},
		{"created before valid_from", grantWith(t, root, 1, nil), shifted(doc, 1, 201), testPrincipal, 250, nil, CodeControllerNotCurrent},
		{"principal alias", grantWith(t, root, 1, func(p *GrantPayload) { p.PrincipalID = "https://example.com/alias" }), doc, testPrincipal, 250, nil, CodePrincipalNotCanonical},
	}
	for _, c := range cases {
		if got := code(CheckAcceptance(c.env, c.doc, c.resolved, c.acceptedAt, c.previous)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	// Mathematically valid, but not authorized.
	if _, err := ValidateEnvelope(env); err != nil {
		t.Fatal(err)
	}
	if revoked.Status != StatusRevoked || revoked.Controller != root.AgentID() || revoked.GrantEventID != env.Hash ||
		revoked.EventID != revocation.Hash || revoked.Audiences[0] != testOrigin {
		t.Errorf("revocation materialized %+v", revoked)
	}
	if cred.AcceptedAt != 250 || cred.CheckedAt != 250 || cred.PrincipalID != testPrincipal || cred.GrantEventID != env.Hash {
		t.Errorf("grant materialized %+v", cred)
	}
	if c := materialize(t, grant(t, root, 3), 500, revoked); c.Controller != root.AgentID() || c.Status != StatusActive {
		t.Errorf("reactivation materialized %+v", c)
	}
}

// shifted returns a copy of doc whose controller i starts at validFrom.
func shifted(doc *PrincipalDocument, i int, validFrom int64) *PrincipalDocument {
	d := *doc
	d.Controllers = append([]Controller{}, doc.Controllers...)
	d.Controllers[i].ValidFrom = validFrom
	return &d
}

// TestHistorical ports retired_history_needs_accepted_records_and_the_original_ceiling.
func TestHistorical(t *testing.T) {
	doc := testDocument()
	env := grant(t, restricted, 1)
	retired := doc.Controllers[0]
	retired.RetiredAt = ptrInt(500)
	doc.Controllers = doc.Controllers[1:]
	doc.RetiredControllers = []Controller{retired}
	if err := ValidatePrincipalDocument(doc); err != nil {
		t.Fatal(err)
	}
	if got := code(CheckAcceptance(env, doc, testPrincipal, 600, nil)); got != CodeControllerNotCurrent {
		t.Errorf("retired key, live: %s", got)
	}
	admin := grantWith(t, restricted, 2, func(p *GrantPayload) { p.Scopes = []string{"admin"} })
	cases := []struct {
		name        string
		rec         Record
		invalidFrom *int64
		want        string
	}{
		{"accepted inside the interval", record(env, 250), nil, "ok"},
		{"accepted at retired_at", record(env, 500), nil, CodeControllerNotCurrent},
		{"accepted before invalid_from", record(env, 250), ptrInt(300), "ok"},
		{"accepted at invalid_from", record(env, 250), ptrInt(250), CodeControllerNotCurrent},
		{"created after invalid_from", record(env, 250), ptrInt(150), CodeControllerNotCurrent},
		{"outside the original ceiling", record(admin, 250), nil, CodeDelegationCeilingExceeded},
	}
	for _, c := range cases {
		doc.RetiredControllers[0].InvalidFrom = c.invalidFrom
		if got := code(CheckHistorical(&c.rec, doc, testPrincipal, nil)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// TestRestrictedSuccessor ports a_restricted_controller_manages_credentials_within_its_ceiling.
func TestRestrictedSuccessor(t *testing.T) {
	doc := testDocument()
	retired := doc.Controllers[0]
	retired.RetiredAt = ptrInt(600)
	doc.Controllers = append(doc.Controllers[1:], Controller{ID: successor.AgentID(), Source: testOrigin, ValidFrom: 600,
		Delegation: &Authority{Scopes: []string{"draft", "inbox"}, Audiences: []string{testOrigin}}})
	doc.RetiredControllers = []Controller{retired}
	if err := ValidatePrincipalDocument(doc); err != nil {
		t.Fatal(err)
	}
	succ := doc.FindController(successor.AgentID(), false)
	cred := materialize(t, grant(t, restricted, 1), 250, nil)
	if !ControllerCoversCredential(succ, cred) {
		t.Fatal("successor does not cover its predecessor's credential")
	}
	revocation := revoke(t, successor, 700, 1)
	widened := sign(t, successor, GrantEvent(successor.AgentID(), 700, 2, GrantPayload{ID: "del", PrincipalID: testPrincipal,
		Subject: root.AgentID(), Scopes: []string{"draft", "inbox"}, Audiences: []string{testOrigin}, ExpiresAt: ptrInt(1900)}))
	wide := materialize(t, grantWith(t, root, 3, func(p *GrantPayload) { p.Scopes = []string{"draft", "admin"} }), 250, nil)
	cases := []struct {
		name     string
		env      *identity.Envelope
		previous *Credential
		want     string
	}{
		{"successor revokes", revocation, cred, "ok"},
		{"successor widens inside its ceiling", widened, cred, "ok"},
		{"successor revokes outside its ceiling", revocation, wide, CodeDelegationCeilingExceeded},
	}
	for _, c := range cases {
		if got := code(CheckAcceptance(c.env, doc, testPrincipal, 700, c.previous)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	if ControllerCoversCredential(succ, wide) {
		t.Error("successor covers a credential outside its ceiling")
	}
	enum := []struct {
		name  string
		actor string
		now   int64
		cred  *Credential
		want  string
	}{
		{"successor inside", successor.AgentID(), 700, cred, "ok"},
		{"successor outside", successor.AgentID(), 700, wide, CodeDelegationCeilingExceeded},
		{"successor before valid_from", successor.AgentID(), 599, cred, CodeControllerNotCurrent},
		{"retired key", restricted.AgentID(), 700, cred, CodeControllerNotCurrent},
		{"root covers all", root.AgentID(), 700, wide, "ok"},
	}
	for _, c := range enum {
		if got := code(CheckControllerEnumeration(doc, c.actor, c.now, c.cred)); got != c.want {
			t.Errorf("enumeration %s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// TestEventAuthorityBeforeSigning: the connector's pre-signing check sees
// an unsigned event, with Go-built payload values.
func TestEventAuthorityBeforeSigning(t *testing.T) {
	doc := testDocument()
	p := GrantPayload{ID: "del", PrincipalID: testPrincipal, Subject: root.AgentID(), Scopes: []string{"draft"},
		Audiences: []string{testOrigin}, ExpiresAt: ptrInt(1000)}
	ev := GrantEvent(restricted.AgentID(), 300, 1, p)
	if err := CheckEventAuthority(&ev, doc, 300, nil); err != nil {
		t.Fatal(err)
	}
	p.Scopes = []string{"draft", "admin"}
	ev = GrantEvent(restricted.AgentID(), 300, 1, p)
	if got := code(CheckEventAuthority(&ev, doc, 300, nil)); got != CodeDelegationCeilingExceeded {
		t.Errorf("widened: %s", got)
	}
	rev := RevokeEvent(restricted.AgentID(), 300, 2, RevokePayload{ID: "del", PrincipalID: testPrincipal, Reason: "rotated"})
	if got := code(CheckEventAuthority(&rev, doc, 300, nil)); got != CodeCredentialNotFound {
		t.Errorf("revoke without credential: %s", got)
	}
	bad := &PrincipalDocument{ID: testPrincipal, Protocol: "old-draft"}
	if got := code(CheckEventAuthority(&ev, bad, 300, nil)); got != CodePrincipalUnresolvable {
		t.Errorf("malformed document: %s", got)
	}
}
