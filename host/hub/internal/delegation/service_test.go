package delegation_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	rules "apconnect/host/proto/delegation"
)

// The discovery document names the service and both endpoints on the hub's
// origin; the client rules read it back.
func TestDiscovery(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	r := f.h.Get(t, rules.WellKnownPath, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	v, err := identity.ParseStrict(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rules.DiscoveryFromValue(v)
	if err != nil {
		t.Fatal(err)
	}
	o := f.h.Origin()
	if d.Service != o || d.Endpoints.Delegations != o+"/v1/delegations" || d.Endpoints.Query != o+"/v1/delegations/query" {
		t.Errorf("discovery: %+v", d)
	}
	if r := f.h.Get(t, rules.WellKnownPath+"?x=1", nil); r.ErrorCode() != identity.CodeInvalidRequest {
		t.Errorf("unknown parameter: %d %s", r.Status, r.Body)
	}
}

// A hosted principal is served with the hub's members set; an alias serves
// a copy; a document put while the hub runs is served at once; unknown
// names are 404.
func TestPrincipalHosting(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	r := f.h.Get(t, "/principals/acme", nil)
	doc, err := rules.ParsePrincipalDocument(r.Body)
	if r.Status != http.StatusOK || err != nil {
		t.Fatalf("GET acme: %d %v %s", r.Status, err, r.Body)
	}
	if doc.ID != f.acme || doc.DelegationService != f.h.Origin() || doc.Protocol != rules.Protocol || doc.Name != "Acme" ||
		len(doc.Controllers) != 3 || len(doc.RetiredControllers) != 1 || doc.UpdatedAt < f.t0.UnixMilli()-60_000 {
		t.Errorf("acme: %+v", doc)
	}
	if err := rules.CheckPrincipalResolution(doc, f.acme); err != nil {
		t.Error(err)
	}
	// The alias serves a copy: its id is the canonical URL, so the rules
	// resolve it at acme and name it an alias.
	copyRes := f.h.Get(t, "/principals/acme-alias", nil)
	cp, err := rules.ParsePrincipalDocument(copyRes.Body)
	if err != nil || cp.ID != f.acme || !cp.IsAlias(f.h.Origin()+"/principals/acme-alias") {
		t.Errorf("alias copy: %v %s", err, copyRes.Body)
	}
	for _, name := range []string{"nobody", "bad!name", "a%20b"} {
		if r := f.h.Get(t, "/principals/"+name, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET /principals/%s: %d %s", name, r.Status, r.Body)
		}
	}
	// Put beside the running hub: the next read serves it.
	before := time.Now()
	p, added, err := hub.AddPrincipalControllers(ctx, f.h.DataDir(), "fresh", []string{f.S.ID, f.S.ID})
	if err != nil || len(added) != 1 || p.URL != f.h.Origin()+"/principals/fresh" {
		t.Fatalf("add controllers: %v %v %+v", err, added, p)
	}
	r = f.h.Get(t, "/principals/fresh", nil)
	fresh, err := rules.ParsePrincipalDocument(r.Body)
	if err != nil || len(fresh.Controllers) != 1 || fresh.Controllers[0].Delegation == nil || !fresh.Controllers[0].Delegation.Unrestricted {
		t.Fatalf("fresh: %v %s", err, r.Body)
	}
	if d := time.Since(before); d > time.Second {
		t.Errorf("served after %s", d)
	}
	// Retire it: the key moves to retired_controllers.
	if _, err := hub.RetirePrincipalController(ctx, f.h.DataDir(), "fresh", f.S.ID); err != nil {
		t.Fatal(err)
	}
	r = f.h.Get(t, "/principals/fresh", nil)
	if fresh, err = rules.ParsePrincipalDocument(r.Body); err != nil || len(fresh.Controllers) != 0 || len(fresh.RetiredControllers) != 1 {
		t.Fatalf("retired: %v %s", err, r.Body)
	}
	// A retired key cannot come back; another principal's alias cannot be
	// taken.
	if _, _, err := hub.AddPrincipalControllers(ctx, f.h.DataDir(), "fresh", []string{f.S.ID}); err == nil {
		t.Error("a retired key was added again")
	}
	if _, err := hub.PutPrincipal(ctx, f.h.DataDir(), "thief", obj{"controllers": arr{}, "aliases": arr{f.h.Origin() + "/principals/acme-alias"}}); err == nil {
		t.Error("another principal's alias was taken")
	}
	list, err := hub.ListPrincipals(ctx, f.h.DataDir())
	if err != nil || len(list) != 3 || list[0].Name != "acme" || list[1].Name != "fresh" || list[2].Name != "other" {
		t.Errorf("list: %v %+v", err, list)
	}
}

// A grant is accepted, materialized, answered again for an exact
// resubmission, read with a fresh checked_at, listed in the events, and
// revoked; expiry is computed at read time and never hides a revocation.
func TestGrantReadRevoke(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	exp := f.t0.UnixMilli() + 3600_000
	env := f.grant(f.R, func(p *rules.GrantPayload) { p.ExpiresAt = &exp })
	c := f.mustSubmit(env)
	if c.Status != rules.StatusActive || c.Controller != f.R.ID || c.AcceptedAt != f.t0.UnixMilli() || c.CheckedAt != c.AcceptedAt || c.EventID != c.GrantEventID {
		t.Fatalf("credential: %+v", c)
	}
	f.clock.Advance(10 * time.Second)
	if again := f.mustSubmit(env); again.AcceptedAt != c.AcceptedAt || again.EventID != c.EventID {
		t.Errorf("exact resubmission: %+v", again)
	}
	read := func() *rules.Credential {
		t.Helper()
		r := f.h.Get(t, "/v1/delegations/del-1", nil)
		got, err := rules.ParseCredential(r.Body)
		if err != nil {
			t.Fatalf("read: %v %s", err, r.Body)
		}
		return got
	}
	if got := read(); got.CheckedAt != f.clock.Now().UnixMilli() || got.Status != rules.StatusActive {
		t.Errorf("read: %+v", got)
	}
	recs := f.records("del-1")
	doc := f.principal("acme")
	v := rules.VerifyCredential(read(), recs, doc, f.acme, f.h.Origin(), f.clock.Now().UnixMilli())
	if !v.Usable {
		t.Errorf("verdict: %+v", v)
	}
	// Past expires_at the read says expired.
	f.clock.Set(time.UnixMilli(exp))
	if got := read(); got.Status != rules.StatusExpired {
		t.Errorf("after expiry: %s", got.Status)
	}
	f.clock.Set(f.t0.Add(time.Minute))
	rv := f.mustSubmit(f.revoke(f.U, "del-1", f.acme))
	if rv.Status != rules.StatusRevoked || rv.Controller != f.U.ID || rv.GrantEventID != c.GrantEventID || rv.EventID == c.EventID {
		t.Fatalf("revoked: %+v", rv)
	}
	f.clock.Set(time.UnixMilli(exp + 1))
	if got := read(); got.Status != rules.StatusRevoked {
		t.Errorf("revoked and expired: %s", got.Status)
	}
	if recs := f.records("del-1"); len(recs) != 2 || recs[1].Envelope.Event.Type != rules.TypeRevoke {
		t.Errorf("records: %d", len(recs))
	}
	if err := rules.AuditHistory(read(), f.records("del-1"), doc, f.acme); err != nil {
		t.Errorf("audit: %v", err)
	}
	for path, code := range map[string]string{"/v1/delegations/nope": identity.CodeNotFound, "/v1/delegations/nope/events": identity.CodeNotFound,
		"/v1/delegations/a%20b": identity.CodeInvalidRequest, "/v1/delegations/del-1?x=1": identity.CodeInvalidRequest,
		"/v1/delegations/del-1/events?cursor=zzz": identity.CodeInvalidRequest} {
		if r := f.h.Get(t, path, nil); r.ErrorCode() != code {
			t.Errorf("GET %s: %d %s, want %s", path, r.Status, r.Body, code)
		}
	}
}

// principal reads a hosted document.
func (f *fx) principal(name string) *rules.PrincipalDocument {
	f.t.Helper()
	r := f.h.Get(f.t, "/principals/"+name, nil)
	doc, err := rules.ParsePrincipalDocument(r.Body)
	if err != nil {
		f.t.Fatalf("principal %s: %v", name, err)
	}
	return doc
}

// Every refusal carries the SDK's code and changes nothing: no credential,
// no record, no nonce.
func TestSubmissionRefusals(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	f.mustSubmit(f.grant(f.U, func(p *rules.GrantPayload) { p.ID = "taken" }))
	past := f.t0.UnixMilli() - 1
	cases := []struct {
		name string
		env  func() []byte
		code string
	}{
		{"retired controller", func() []byte { return f.grant(f.RET, nil) }, rules.CodeControllerNotCurrent},
		{"stranger", func() []byte { return f.grant(f.X, nil) }, rules.CodeControllerNotCurrent},
		{"signing-only key", func() []byte { return f.grant(f.TL, nil) }, rules.CodeDelegationNotPermitted},
		{"beyond the ceiling", func() []byte {
			return f.grant(f.R, func(p *rules.GrantPayload) { p.Scopes = []string{"admin"} })
		}, rules.CodeDelegationCeilingExceeded},
		{"revoke unknown", func() []byte { return f.revoke(f.U, "nope", f.acme) }, rules.CodeCredentialNotFound},
		{"second principal, same id", func() []byte {
			return f.grant(f.U, func(p *rules.GrantPayload) { p.ID, p.PrincipalID = "taken", f.other })
		}, rules.CodeCredentialIdentityMismatch},
		{"another subject, same id", func() []byte {
			return f.grant(f.U, func(p *rules.GrantPayload) { p.ID, p.Subject = "taken", f.X.ID })
		}, rules.CodeCredentialIdentityMismatch},
		{"expires before created", func() []byte {
			return f.grant(f.U, func(p *rules.GrantPayload) { p.ExpiresAt = &past })
		}, rules.CodeGrantExpired},
		{"alias named", func() []byte {
			return f.grant(f.U, func(p *rules.GrantPayload) { p.PrincipalID = f.h.Origin() + "/principals/acme-alias" })
		}, rules.CodePrincipalNotCanonical},
		{"principal not hosted", func() []byte {
			return f.grant(f.U, func(p *rules.GrantPayload) { p.PrincipalID = "https://example.com/p" })
		}, rules.CodePrincipalUnresolvable},
		{"unknown hosted name", func() []byte {
			return f.grant(f.U, func(p *rules.GrantPayload) { p.PrincipalID = f.h.Origin() + "/principals/nobody" })
		}, rules.CodePrincipalUnresolvable},
		{"bad id", func() []byte { return f.grant(f.U, func(p *rules.GrantPayload) { p.ID = ".." }) }, identity.CodeInvalidEvent},
		{"another protocol", func() []byte {
			now := f.clock.Now()
			return f.U.SignJSON(t, identity.Event{Protocol: "agent-profile/1.0", Type: "profile.update", CreatedAt: now.UnixMilli(),
				Nonce: f.U.NextNonce(now), Payload: map[string]any{"id": f.U.ID, "name": "x"}})
		}, identity.CodeInvalidEvent},
		{"outside the window", func() []byte {
			old := f.clock.Now().Add(-10 * time.Minute)
			p := rules.GrantPayload{ID: "late", PrincipalID: f.acme, Subject: f.S.ID, Scopes: []string{"x"}, Audiences: []string{f.h.Origin()}}
			return f.U.SignJSON(t, rules.GrantEvent(f.U.ID, old.UnixMilli(), f.U.NextNonce(f.clock.Now()), p))
		}, identity.CodeTimestampOutOfWindow},
		{"nonce reused", func() []byte {
			now := f.clock.Now()
			p := rules.GrantPayload{ID: "reuse", PrincipalID: f.acme, Subject: f.S.ID, Scopes: []string{"x"}, Audiences: []string{f.h.Origin()}}
			return f.U.SignJSON(t, rules.GrantEvent(f.U.ID, now.UnixMilli(), 1, p))
		}, identity.CodeNonceNotGreater},
		{"tampered signature", func() []byte {
			var m map[string]any
			_ = json.Unmarshal(f.grant(f.U, nil), &m)
			sig := []byte(m["signature"].(string))
			sig[3] ^= 1
			if sig[3] == '-' || sig[3] == '_' {
				sig[3] = 'A'
			}
			m["signature"] = string(sig)
			return mustJSON(m)
		}, identity.CodeInvalidSignature},
	}
	for _, tc := range cases {
		r := f.submit(tc.env())
		if r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s, want %s", tc.name, r.Status, r.Body, tc.code)
		}
	}
	if r := f.h.Get(t, "/v1/delegations/del-1", nil); r.Status != http.StatusNotFound {
		t.Errorf("a refused grant left a credential: %s", r.Body)
	}
	if recs := f.records("taken"); len(recs) != 1 {
		t.Errorf("taken has %d records", len(recs))
	}
}

// A key retired while the hub runs is refused from the next submission.
func TestRetireWhileRunning(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	f.mustSubmit(f.grant(f.R, nil))
	if _, err := hub.RetirePrincipalController(ctx, f.h.DataDir(), "acme", f.R.ID); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	if r := f.submit(f.revoke(f.R, "del-1", f.acme)); r.ErrorCode() != rules.CodeControllerNotCurrent {
		t.Errorf("retired key: %d %s", r.Status, r.Body)
	}
	// The accepted grant still verifies: R was bound when it was accepted.
	doc := f.principal("acme")
	r := f.h.Get(t, "/v1/delegations/del-1", nil)
	c, _ := rules.ParseCredential(r.Body)
	if v := rules.VerifyCredential(c, f.records("del-1"), doc, f.acme, f.h.Origin(), f.clock.Now().UnixMilli()); !v.Usable {
		t.Errorf("verdict after retirement: %+v", v)
	}
}

// Queries: a public existence check needs subject and principal_id; an
// enumeration needs a JWT of the subject or of a current delegating
// controller, whose results are filtered to its ceiling; pages follow the
// SDK's limits.
func TestQuery(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	for i := range 25 {
		f.mustSubmit(f.grant(f.U, func(p *rules.GrantPayload) { p.ID = "u-" + pad(i) }))
	}
	f.mustSubmit(f.grant(f.R, func(p *rules.GrantPayload) { p.ID = "r-1" }))
	f.mustSubmit(f.grant(f.U, func(p *rules.GrantPayload) { p.ID, p.Subject = "x-1", f.X.ID }))
	f.mustSubmit(f.revoke(f.U, "u-00", f.acme))

	items, next := list(t, f.query(obj{"subject": f.S.ID, "principal_id": f.acme}, nil))
	if len(items) != rules.DefaultQueryLimit || next == "" {
		t.Fatalf("public page 1: %d %q", len(items), next)
	}
	rest, next2 := list(t, f.query(obj{"subject": f.S.ID, "principal_id": f.acme, "cursor": next}, nil))
	if len(rest) != 6 || next2 != "" {
		t.Errorf("public page 2: %d %q", len(rest), next2)
	}
	if items, _ := list(t, f.query(obj{"subject": f.S.ID, "principal_id": f.acme, "limit": 1000}, nil)); len(items) != 26 {
		t.Errorf("limit capped: %d", len(items))
	}
	if items, _ := list(t, f.query(obj{"subject": f.S.ID, "principal_id": f.acme, "status": "revoked"}, nil)); len(items) != 1 || items[0]["id"] != "u-00" {
		t.Errorf("status filter: %v", items)
	}
	if items, _ := list(t, f.query(obj{"subject": f.S.ID, "principal_id": f.acme, "id": "r-1"}, nil)); len(items) != 1 {
		t.Errorf("id filter: %v", items)
	}
	// Enumerations.
	if items, _ := list(t, f.query(obj{"subject": f.X.ID}, f.X)); len(items) != 1 || items[0]["id"] != "x-1" {
		t.Errorf("subject enumeration: %v", items)
	}
	all, _ := list(t, f.query(obj{"principal_id": f.acme, "limit": 100}, f.U))
	if len(all) != 27 {
		t.Errorf("unrestricted controller: %d", len(all))
	}
	// R's ceiling (review for the hub) holds every grant here; a grant
	// outside it is filtered out.
	f.mustSubmit(f.grant(f.U, func(p *rules.GrantPayload) { p.ID, p.Scopes = "wide", []string{"admin"} }))
	ceil, _ := list(t, f.query(obj{"principal_id": f.acme, "limit": 100}, f.R))
	if len(ceil) != 27 || slices.ContainsFunc(ceil, func(c obj) bool { return c["id"] == "wide" }) {
		t.Errorf("restricted controller: %d", len(ceil))
	}
	refusals := []struct {
		name string
		q    obj
		a    *hubtest.Agent
		code string
	}{
		{"public without principal", obj{"subject": f.S.ID}, nil, identity.CodeInvalidRequest},
		{"public without subject", obj{"principal_id": f.acme}, nil, identity.CodeInvalidRequest},
		{"nothing named", obj{}, f.U, identity.CodeInvalidRequest},
		{"another's subject", obj{"subject": f.S.ID}, f.X, identity.CodePermissionDenied},
		{"stranger enumerates", obj{"principal_id": f.acme}, f.X, rules.CodeControllerNotCurrent},
		{"retired enumerates", obj{"principal_id": f.acme}, f.RET, rules.CodeControllerNotCurrent},
		{"signing-only enumerates", obj{"principal_id": f.acme}, f.TL, rules.CodeDelegationNotPermitted},
		{"alias enumerated", obj{"principal_id": f.h.Origin() + "/principals/acme-alias"}, f.U, rules.CodePrincipalNotCanonical},
		{"foreign principal", obj{"principal_id": "https://example.com/p"}, f.U, rules.CodePrincipalUnresolvable},
		{"bad status", obj{"subject": f.S.ID, "principal_id": f.acme, "status": "gone"}, nil, identity.CodeInvalidRequest},
		{"bad limit", obj{"subject": f.S.ID, "principal_id": f.acme, "limit": 0}, nil, identity.CodeInvalidRequest},
		{"foreign cursor", obj{"subject": f.S.ID, "principal_id": f.acme, "cursor": next, "id": "u-01"}, nil, identity.CodeInvalidRequest},
	}
	for _, tc := range refusals {
		if r := f.query(tc.q, tc.a); r.ErrorCode() != tc.code {
			t.Errorf("%s: %d %s, want %s", tc.name, r.Status, r.Body, tc.code)
		}
	}
}

func pad(i int) string {
	s := strconv.Itoa(i)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}
