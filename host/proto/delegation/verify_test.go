package delegation

import (
	"encoding/json"
	"slices"
	"testing"

	"apconnect/host/identity"
)

// TestVerifyCredential ports verify_delegation_credential_checks_the_latest_grant.
func TestVerifyCredential(t *testing.T) {
	doc := testDocument()
	env := grant(t, restricted, 1)
	cred := materialize(t, env, 250, nil)
	records := []Record{record(env, 250)}
	revocation := revoke(t, root, 400, 2)
	revoked := materialize(t, revocation, 450, cred)
	history := []Record{record(env, 250), record(revocation, 450)}
	hidden := revoked.Clone()
	hidden.Status = StatusActive
	forged := cred.Clone()
	forged.Subject = other.AgentID()
	stale := cred.Clone()
	future := cred.Clone()
	future.CheckedAt = 300 + StatusClockSkew + 1
	cases := []struct {
		name             string
		cred             *Credential
		records          []Record
		resolved         string
		audience         string
		now              int64
		verified, usable bool
		reasons          []string // nil: not compared
	}{
		{"fresh and usable", cred, records, testPrincipal, testOrigin, 300, true, true, []string{}},
		{"other audience", cred, records, testPrincipal, "https://tokenlist.ing", 300, true, false,
			[]string{"audience https://tokenlist.ing is not granted"}},
		{"expired", cred, records, testPrincipal, testOrigin, 1000, true, false, []string{"expired"}},
		{"forged subject", forged, records, testPrincipal, testOrigin, 300, false, false, nil},
		{"no records", cred, nil, testPrincipal, testOrigin, 300, false, false, []string{"latest grant record is missing"}},
		{"copy read elsewhere", cred, records, "https://impostor.example", testOrigin, 300, false, false, nil},
		{"revoked", revoked, history, testPrincipal, testOrigin, 500, true, false, []string{"status is revoked"}},
		{"revocation hidden", hidden, history, testPrincipal, testOrigin, 500, false, false, nil},
		{"latest grant only", revoked, records, testPrincipal, testOrigin, 500, true, false, []string{"status is revoked"}},
		{"later record hidden by an old view", cred, history, testPrincipal, testOrigin, 300, true, false,
			[]string{"credential status conflicts with supplied history"}},
		{"stale status", stale, records, testPrincipal, testOrigin, 250 + MaxStatusAge + 1, true, false,
			[]string{"status is stale", "expired"}},
		{"status from the future", future, records, testPrincipal, testOrigin, 300, true, false,
			[]string{"invalid status timestamps"}},
	}
	for _, c := range cases {
		v := VerifyCredential(c.cred, c.records, doc, c.resolved, c.audience, c.now)
		if v.Verified != c.verified || v.Usable != c.usable || (c.reasons != nil && !slices.Equal(v.Reasons, c.reasons)) {
			t.Errorf("%s: verified=%v usable=%v reasons=%q; want %v %v %q", c.name, v.Verified, v.Usable, v.Reasons,
				c.verified, c.usable, c.reasons)
		}
		if !v.Verified && len(v.Reasons) == 0 {
			t.Errorf("%s: unverified without a reason", c.name)
		}
	}
	if err := AuditHistory(revoked, history, doc, testPrincipal); err != nil {
		t.Errorf("audit of the full history: %v", err)
	}
	for name, a := range map[string]struct {
		cred    *Credential
		records []Record
	}{"hidden revocation": {hidden, history}, "latest grant only": {revoked, records}, "no records": {revoked, nil}} {
		if got := code(AuditHistory(a.cred, a.records, doc, testPrincipal)); got != CodeInvalidDelegation {
			t.Errorf("audit %s: %s", name, got)
		}
	}
}

// TestVerifyBindsGrantMembers ports
// credential_verification_binds_grant_fields_and_preserves_service_metadata:
// every grant member is bound, in JSON types; service metadata is not.
func TestVerifyBindsGrantMembers(t *testing.T) {
	doc := testDocument()
	env := grantWith(t, restricted, 1, func(p *GrantPayload) {
		rel := "assistant"
		p.Relationship, p.NotBefore = &rel, ptrInt(210)
		p.Constraints = map[string]any{"limit": json.Number("1"), "project": "alpha"}
	})
	cred := materialize(t, env, 250, nil)
	records := []Record{record(env, 250)}
	base := cred.Value()
	for _, f := range []struct {
		member string
		value  any
	}{
		{"protocol", "other/1.0"}, {"relationship", "owner"}, {"scopes", []any{"admin"}},
		{"audiences", []any{"https://other.test"}},
		{"constraints", map[string]any{"limit": true, "project": "alpha"}},
		{"not_before", json.Number("0")}, {"expires_at", json.Number("2000")}, {"accepted_at", json.Number("251")},
		{"relationship", nil}, {"constraints", nil}, {"not_before", nil}, {"expires_at", nil},
	} {
		m := clone(base)
		if f.value == nil {
			delete(m, f.member)
		} else {
			m[f.member] = f.value
		}
		forged, err := CredentialFromValue(m, "")
		if err != nil {
			t.Fatalf("%s: %v", f.member, err)
		}
		if v := VerifyCredential(forged, records, doc, testPrincipal, testOrigin, 300); v.Verified || v.Usable {
			t.Errorf("forged %s=%v verified", f.member, f.value)
		}
	}
	control := clone(base)
	control["constraints"] = map[string]any{"project": "alpha", "limit": json.Number("1.0")}
	control["checked_at"] = json.Number("400")
	c, err := CredentialFromValue(control, "")
	if err != nil {
		t.Fatal(err)
	}
	if v := VerifyCredential(c, records, doc, testPrincipal, testOrigin, 400); !v.Usable {
		t.Errorf("1.0 and a later checked_at: %q", v.Reasons)
	}
	c.Status = StatusSuspended
	if v := VerifyCredential(c, records, doc, testPrincipal, testOrigin, 400); !v.Verified || v.Usable {
		t.Errorf("suspended: verified=%v usable=%v", v.Verified, v.Usable)
	}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestValidateUse(t *testing.T) {
	env := grantWith(t, restricted, 1, func(p *GrantPayload) { p.NotBefore = ptrInt(260) })
	cred := materialize(t, env, 250, nil)
	suspended := cred.Clone()
	suspended.Status = StatusSuspended
	inverted := cred.Clone()
	inverted.NotBefore = ptrInt(1000)
	cases := []struct {
		name     string
		cred     *Credential
		audience string
		now      int64
		want     string
	}{
		{"usable", cred, testOrigin, 300, "ok"},
		{"other audience", cred, "https://tokenlist.ing", 300, CodeInvalidDelegation},
		{"malformed audience", cred, "https://DMSG.NET", 300, CodeInvalidRequest},
		{"before not_before", cred, testOrigin, 255, CodeInvalidDelegation},
		{"at expires_at", cred, testOrigin, 1000, CodeInvalidDelegation},
		{"stale", cred, testOrigin, 250 + MaxStatusAge + 1, CodeInvalidDelegation},
		{"suspended", suspended, testOrigin, 300, CodeInvalidDelegation},
		{"expires_at not after not_before", inverted, testOrigin, 300, CodeGrantExpired},
	}
	for _, c := range cases {
		if got := code(ValidateUse(c.cred, c.audience, c.now)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestCredentialStatusAt(t *testing.T) {
	cred := materialize(t, grant(t, restricted, 1), 250, nil)
	revoked := materialize(t, revoke(t, root, 400, 2), 450, cred)
	suspended := cred.Clone()
	suspended.Status = StatusSuspended
	cases := []struct {
		name string
		cred *Credential
		now  int64
		want Status
	}{
		{"active before expiry", cred, 999, StatusActive},
		{"expired at expires_at", cred, 1000, StatusExpired},
		{"revoked stays revoked after expiry", revoked, 5000, StatusRevoked},
		{"suspended", suspended, 500, StatusSuspended},
		{"suspended then expired", suspended, 1000, StatusExpired},
	}
	for _, c := range cases {
		if got := c.cred.StatusAt(c.now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		view := c.cred.At(c.now)
		if view.Status != c.want || view.CheckedAt != c.now || c.cred.CheckedAt == c.now {
			t.Errorf("%s: view %s at %d", c.name, view.Status, view.CheckedAt)
		}
	}
	if cred.Status != StatusActive {
		t.Error("At changed the stored credential")
	}
}

func TestCredentialJSON(t *testing.T) {
	env := grantWith(t, restricted, 1, func(p *GrantPayload) {
		rel := ""
		p.Relationship = &rel
		p.Constraints = map[string]any{}
	})
	cred := materialize(t, env, 250, nil)
	data, err := json.Marshal(cred)
	if err != nil {
		t.Fatal(err)
	}
	var back Credential
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("round trip:\n%s\n%s", data, again)
	}
	if v := VerifyCredential(&back, []Record{record(env, 250)}, testDocument(), testPrincipal, testOrigin, 300); !v.Usable {
		t.Errorf("empty relationship and constraints lost: %q", v.Reasons)
	}
	for _, bad := range []string{
		`{}`,
		`[]`,
		string(data[:len(data)-1]) + `,"status":"active"}`,
	} {
		if _, err := ParseCredential([]byte(bad)); err == nil {
			t.Errorf("parsed %s", bad)
		}
	}
	m := cred.Value()
	for member, v := range map[string]any{"status": "paused", "subject": "did:agent:short", "scopes": "draft",
		"accepted_at": json.Number("1.5"), "constraints": []any{}} {
		c := clone(m)
		c[member] = v
		if _, err := CredentialFromValue(c, ""); code(err) != CodeInvalidDelegation {
			t.Errorf("%s=%v: %v", member, v, err)
		}
	}
	// Unknown members of a draft credential are ignored.
	m["owner_controller"], m["updated_at"] = restricted.AgentID(), json.Number("250")
	if _, err := CredentialFromValue(m, ""); err != nil {
		t.Error(err)
	}
	var rec Record
	recJSON, _ := json.Marshal(record(env, 250))
	v, _ := identity.ParseStrict(recJSON)
	r, err := RecordFromValue(v, "")
	if err != nil || r.AcceptedAt != 250 || r.Envelope.Hash != env.Hash {
		t.Errorf("record: %+v %v", rec, err)
	}
}

// TestVerifyCredentialWithUsesTheValidator: the latest grant's envelope is
// checked by the validator passed in, whose refusal unverifies the
// credential.
func TestVerifyCredentialWithUsesTheValidator(t *testing.T) {
	t.Parallel()
	doc := testDocument()
	env := grantWith(t, restricted, 1, nil)
	cred := materialize(t, env, 250, nil)
	records := []Record{record(env, 250)}
	calls := 0
	counting := func(e *identity.Envelope) (*Event, error) {
		calls++
		return ValidateEnvelope(e)
	}
	if v := VerifyCredentialWith(counting, cred, records, doc, testPrincipal, testOrigin, 300); !v.Usable || calls != 1 {
		t.Errorf("counting validator: usable=%v calls=%d reasons=%q", v.Usable, calls, v.Reasons)
	}
	refusing := func(*identity.Envelope) (*Event, error) {
		return nil, newError(CodeInvalidSignature, "/signature", "refused by the validator")
	}
	if v := VerifyCredentialWith(refusing, cred, records, doc, testPrincipal, testOrigin, 300); v.Verified || v.Usable {
		t.Errorf("refusing validator: verified=%v usable=%v", v.Verified, v.Usable)
	}
}
