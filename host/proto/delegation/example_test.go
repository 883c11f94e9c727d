package delegation_test

import (
	"crypto/ed25519"
	"fmt"

	"apconnect/host/identity"
	"apconnect/host/proto/delegation"
)

func exampleKey(b byte) *identity.KeySigner {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = b
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))
}

// A grant from a principal's restricted controller, through the three
// roles: the controller checks and signs it, the principal's delegation
// service accepts and materializes it, a relying party verifies the
// credential and an auditor replays its history.
func Example() {
	const (
		principalID = "https://hub.example/principals/acme"
		app         = "https://dmsg.net"
		t0          = int64(1_800_000_000_000)
	)
	controller, agent := exampleKey(1), exampleKey(2)
	doc := &delegation.PrincipalDocument{
		ID: principalID, Protocol: delegation.Protocol, UpdatedAt: t0, DelegationService: "https://hub.example",
		Controllers: []delegation.Controller{{ID: controller.AgentID(), Source: "local", ValidFrom: t0,
			Delegation: &delegation.Authority{Scopes: []string{"inbox.screen"}, Audiences: []string{app}}}},
	}
	if err := delegation.ValidatePrincipalDocument(doc); err != nil {
		panic(err)
	}

	// The controller (the connector): check before signing.
	expires := t0 + 86_400_000
	ev := delegation.GrantEvent(controller.AgentID(), t0+1000, 1, delegation.GrantPayload{
		ID: "del_1", PrincipalID: principalID, Subject: agent.AgentID(),
		Scopes: []string{"inbox.screen"}, Audiences: []string{app}, ExpiresAt: &expires})
	if err := delegation.CheckEventAuthority(&ev, doc, t0+1000, nil); err != nil {
		panic(err)
	}
	env, err := identity.SignEvent(controller, ev)
	if err != nil {
		panic(err)
	}

	// The service: the document was read at its own id; accept and store.
	acceptedAt := t0 + 1200
	if err := delegation.CheckAcceptance(env, doc, principalID, acceptedAt, nil); err != nil {
		panic(err)
	}
	cred, err := delegation.Materialize(env, delegation.StatusActive, acceptedAt, nil)
	if err != nil {
		panic(err)
	}
	records := []delegation.Record{{Envelope: env, AcceptedAt: acceptedAt}}

	// A relying party at app, a minute later, with a fresh read.
	now := t0 + 61_200
	v := delegation.VerifyCredential(cred.At(now), records, doc, principalID, app, now)
	fmt.Println("verified:", v.Verified, "usable:", v.Usable)
	v = delegation.VerifyCredential(cred.At(now), records, doc, principalID, "https://tokenlist.ing", now)
	fmt.Println("other app:", v.Usable, v.Reasons)

	// An auditor replays the whole history.
	fmt.Println("audit:", delegation.AuditHistory(cred, records, doc, principalID))

	// The same key may not widen the grant beyond its ceiling.
	wide := delegation.GrantEvent(controller.AgentID(), t0+2000, 2, delegation.GrantPayload{
		ID: "del_1", PrincipalID: principalID, Subject: agent.AgentID(),
		Scopes: []string{"inbox.screen", "admin"}, Audiences: []string{app}})
	fmt.Println("widen:", delegation.ErrorCode(delegation.CheckEventAuthority(&wide, doc, t0+2000, cred)))
	// Output:
	// verified: true usable: true
	// other app: false [audience https://tokenlist.ing is not granted]
	// audit: <nil>
	// widen: delegation_ceiling_exceeded
}

// A service answering POST {query}: authorize, then filter what it holds.
func ExampleAuthorizeQuery() {
	controller, agent := exampleKey(1), exampleKey(2)
	doc := &delegation.PrincipalDocument{
		ID: "https://hub.example/principals/acme", Protocol: delegation.Protocol, UpdatedAt: 1,
		DelegationService: "https://hub.example",
		Controllers: []delegation.Controller{{ID: controller.AgentID(), Source: "local", ValidFrom: 1,
			Delegation: &delegation.Authority{Scopes: []string{"read"}, Audiences: []string{"https://dmsg.net"}}}},
	}
	held := []*delegation.Credential{
		{ID: "a", PrincipalID: doc.ID, Subject: agent.AgentID(), Scopes: []string{"read"}, Audiences: []string{"https://dmsg.net"}, Status: delegation.StatusActive},
		{ID: "b", PrincipalID: doc.ID, Subject: agent.AgentID(), Scopes: []string{"write"}, Audiences: []string{"https://dmsg.net"}, Status: delegation.StatusActive},
	}
	q, err := delegation.ParseQueryRequest([]byte(`{"principal_id":"https://hub.example/principals/acme"}`))
	if err != nil {
		panic(err)
	}
	if _, err := delegation.AuthorizeQuery(q, "", doc, 10); err != nil {
		fmt.Println("without a JWT:", delegation.ErrorCode(err))
	}
	access, err := delegation.AuthorizeQuery(q, controller.AgentID(), doc, 10)
	if err != nil {
		panic(err)
	}
	for _, c := range held {
		if q.Matches(c, 10) && access.Permits(c) {
			fmt.Println("listed:", c.ID)
		}
	}
	fmt.Println("page size:", q.EffectiveLimit())
	// Output:
	// without a JWT: invalid_request
	// listed: a
	// page size: 20
}
