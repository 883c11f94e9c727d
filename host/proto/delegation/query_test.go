package delegation

import (
	"encoding/json"
	"testing"
)

// TestValidateQueryRequest ports public_delegation_queries_carry_both_subject_and_principal.
func TestValidateQueryRequest(t *testing.T) {
	subject := root.AgentID()
	cases := []struct {
		name              string
		q                 QueryRequest
		public, enumerate string
	}{
		{"both sides", QueryRequest{Subject: subject, PrincipalID: testPrincipal, Limit: 20}, "ok", "ok"},
		{"subject only", QueryRequest{Subject: subject}, CodeInvalidRequest, "ok"},
		{"principal only", QueryRequest{PrincipalID: testPrincipal}, CodeInvalidRequest, "ok"},
		{"neither", QueryRequest{}, CodeInvalidRequest, CodeInvalidRequest},
		{"bad id", QueryRequest{Subject: subject, PrincipalID: testPrincipal, ID: "a/b"}, CodeInvalidRequest, CodeInvalidRequest},
		{"bad status", QueryRequest{Subject: subject, PrincipalID: testPrincipal, Status: "paused"}, CodeInvalidRequest, CodeInvalidRequest},
		{"bad subject", QueryRequest{Subject: "did:agent:x", PrincipalID: testPrincipal}, CodeInvalidRequest, CodeInvalidRequest},
		{"http principal", QueryRequest{Subject: subject, PrincipalID: "http://example.com/p"}, CodeInvalidRequest, CodeInvalidRequest},
		{"negative limit", QueryRequest{Subject: subject, PrincipalID: testPrincipal, Limit: -1}, CodeInvalidRequest, CodeInvalidRequest},
	}
	for _, c := range cases {
		if got := code(ValidateQueryRequest(&c.q, false)); got != c.public {
			t.Errorf("%s public: %s, want %s", c.name, got, c.public)
		}
		if got := code(ValidateQueryRequest(&c.q, true)); got != c.enumerate {
			t.Errorf("%s enumeration: %s, want %s", c.name, got, c.enumerate)
		}
	}
}

func TestParseQueryRequest(t *testing.T) {
	cases := []struct {
		body string
		want string
		q    QueryRequest
	}{
		{`{"subject":"` + root.AgentID() + `","principal_id":"` + testPrincipal + `","limit":5,"cursor":"c","x":1}`, "ok",
			QueryRequest{Subject: root.AgentID(), PrincipalID: testPrincipal, Limit: 5, Cursor: "c"}},
		{`{"subject":null,"principal_id":"` + testPrincipal + `","status":"revoked"}`, "ok",
			QueryRequest{PrincipalID: testPrincipal, Status: StatusRevoked}},
		{`{"limit":0}`, CodeInvalidRequest, QueryRequest{}},
		{`{"limit":1.5}`, CodeInvalidRequest, QueryRequest{}},
		{`{"limit":"5"}`, CodeInvalidRequest, QueryRequest{}},
		{`{"subject":""}`, CodeInvalidRequest, QueryRequest{}},
		{`{"id":7}`, CodeInvalidRequest, QueryRequest{}},
		{`[]`, CodeInvalidRequest, QueryRequest{}},
		{`{"a":1,"a":2}`, CodeInvalidRequest, QueryRequest{}},
	}
	for _, c := range cases {
		q, err := ParseQueryRequest([]byte(c.body))
		if got := code(err); got != c.want {
			t.Errorf("%s: %s, want %s", c.body, got, c.want)
			continue
		}
		if err == nil && *q != c.q {
			t.Errorf("%s: %+v", c.body, *q)
		}
	}
	q := QueryRequest{Subject: root.AgentID(), Limit: 3}
	data, _ := json.Marshal(q)
	if back, err := ParseQueryRequest(data); err != nil || *back != q {
		t.Errorf("round trip %s: %+v %v", data, back, err)
	}
	for _, l := range []struct{ limit, want int64 }{{0, 20}, {1, 1}, {100, 100}, {101, 100}, {1 << 40, 100}} {
		if got := (&QueryRequest{Limit: l.limit}).EffectiveLimit(); int64(got) != l.want {
			t.Errorf("limit %d: %d", l.limit, got)
		}
	}
}

// TestAuthorizeQuery: the public existence check, the subject's and a
// controller's enumeration, and the controller's results filtered to its
// ceiling.
func TestAuthorizeQuery(t *testing.T) {
	doc := testDocument()
	signingOnly := testDocument()
	signingOnly.Controllers[0].Delegation = nil
	alias := testDocument()
	alias.ID = "https://example.com/other"
	subject := root.AgentID()
	inside := materialize(t, grant(t, restricted, 1), 250, nil)
	outside := materialize(t, grantWith(t, root, 2, func(p *GrantPayload) { p.Scopes = []string{"draft", "admin"}; p.Subject = other.AgentID() }), 250, nil)
	cases := []struct {
		name      string
		q         QueryRequest
		caller    string
		principal *PrincipalDocument
		now       int64
		want      string
		kind      AccessKind
		permits   [2]bool // inside, outside
	}{
		{"public existence", QueryRequest{Subject: subject, PrincipalID: testPrincipal}, "", nil, 300, "ok", AccessExistence, [2]bool{true, true}},
		{"existence with a JWT", QueryRequest{Subject: subject, PrincipalID: testPrincipal}, other.AgentID(), nil, 300, "ok", AccessExistence, [2]bool{true, true}},
		{"public enumeration", QueryRequest{Subject: subject}, "", nil, 300, CodeInvalidRequest, 0, [2]bool{}},
		{"subject enumerates itself", QueryRequest{Subject: subject}, subject, nil, 300, "ok", AccessSubject, [2]bool{true, false}},
		{"another agent enumerates a subject", QueryRequest{Subject: subject}, other.AgentID(), nil, 300, CodePermissionDenied, 0, [2]bool{}},
		{"restricted controller", QueryRequest{PrincipalID: testPrincipal}, restricted.AgentID(), doc, 300, "ok", AccessController, [2]bool{true, false}},
		{"unrestricted controller", QueryRequest{PrincipalID: testPrincipal, Status: StatusActive}, root.AgentID(), doc, 300, "ok", AccessController, [2]bool{true, true}},
		{"controller before valid_from", QueryRequest{PrincipalID: testPrincipal}, root.AgentID(), doc, 99, CodeControllerNotCurrent, 0, [2]bool{}},
		{"not a controller", QueryRequest{PrincipalID: testPrincipal}, other.AgentID(), doc, 300, CodeControllerNotCurrent, 0, [2]bool{}},
		{"signing-only controller", QueryRequest{PrincipalID: testPrincipal}, restricted.AgentID(), signingOnly, 300, CodeDelegationNotPermitted, 0, [2]bool{}},
		{"principal document of another id", QueryRequest{PrincipalID: testPrincipal}, root.AgentID(), alias, 300, CodePrincipalNotCanonical, 0, [2]bool{}},
		{"no principal document", QueryRequest{PrincipalID: testPrincipal}, root.AgentID(), nil, 300, CodePrincipalUnresolvable, 0, [2]bool{}},
	}
	for _, c := range cases {
		a, err := AuthorizeQuery(&c.q, c.caller, c.principal, c.now)
		if got := code(err); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
			continue
		}
		if err != nil {
			continue
		}
		if a.Kind != c.kind || a.Permits(inside) != c.permits[0] || a.Permits(outside) != c.permits[1] {
			t.Errorf("%s: kind %d permits %v %v", c.name, a.Kind, a.Permits(inside), a.Permits(outside))
		}
	}
	revoked := materialize(t, revoke(t, root, 400, 2), 450, inside)
	matches := []struct {
		name string
		q    QueryRequest
		cred *Credential
		now  int64
		want bool
	}{
		{"subject and principal", QueryRequest{Subject: subject, PrincipalID: testPrincipal}, inside, 300, true},
		{"other subject", QueryRequest{Subject: other.AgentID(), PrincipalID: testPrincipal}, inside, 300, false},
		{"id", QueryRequest{PrincipalID: testPrincipal, ID: "other"}, inside, 300, false},
		{"active before expiry", QueryRequest{PrincipalID: testPrincipal, Status: StatusActive}, inside, 999, true},
		{"expired at read time", QueryRequest{PrincipalID: testPrincipal, Status: StatusExpired}, inside, 1000, true},
		{"not active after expiry", QueryRequest{PrincipalID: testPrincipal, Status: StatusActive}, inside, 1000, false},
		{"revoked, not expired", QueryRequest{PrincipalID: testPrincipal, Status: StatusExpired}, revoked, 5000, false},
	}
	for _, m := range matches {
		if got := m.q.Matches(m.cred, m.now); got != m.want {
			t.Errorf("matches %s: %v", m.name, got)
		}
	}
}
