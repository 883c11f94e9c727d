package catalogcheck

import (
	"context"
	"time"

	"apconnect/host/hub"
)

// runDelegation is the Delegation part of RunEveryTool: Alice controls the
// principal "acme" on the hub; she grants Bob review for the hub (twice),
// and Carol a delegation with every grant input; Bob checks his, Alice
// lists and audits them, revokes two, and both see the revocations.
func runDelegation(r *runner, env Env) {
	t := r.t
	A, B, C, D := env.Alice, env.Bob, env.Carol, env.Dave
	H := env.Host
	p, _, err := hub.AddPrincipalControllers(context.Background(), env.HubDir, "acme", []string{A.ID})
	if err != nil {
		t.Fatalf("hosting the principal: %v", err)
	}
	P := p.URL
	now := time.Now().UnixMilli()

	r.empty(A, "principal_resolve")
	pr := r.required(B, "principal_resolve", obj{"url": P})
	if str(pr, "canonical_id") != P || get(pr, "alias") != false || str(pr, "principal", "controllers", "0", "id") != A.ID ||
		str(pr, "principal", "delegation_service") != H {
		t.Errorf("principal_resolve: %v", pr)
	}
	r.fail(B, "principal_resolve", obj{"url": "https://not-configured.example/p"}, "host_not_allowed")

	// Grants.
	r.empty(A, "delegation_grant")
	g := r.required(A, "delegation_grant", obj{"id": "review-bob", "principal_id": P, "subject": B.ID, "scopes": []any{"review"},
		"audiences": []any{H}})
	if str(g, "credential", "status") != "active" || str(g, "credential", "event_id") != str(g, "envelope", "hash") {
		t.Errorf("delegation_grant: %v", g)
	}
	r.call(A, "delegation_grant", obj{"id": "review-bob-2", "principal_id": P, "subject": B.ID, "scopes": []any{"review"}, "audiences": []any{H}})
	full := r.call(A, "delegation_grant", obj{"id": "full", "principal_id": P, "subject": C.ID, "relationship": "employee",
		"scopes": []any{"review", "merge"}, "audiences": []any{H, D.ID}, "constraints": obj{"max_changes": 3},
		"not_before": now - 1000, "expires_at": now + 3600_000})
	if str(full, "credential", "relationship") != "employee" || num(full, "credential", "expires_at") != now+3600_000 {
		t.Errorf("delegation_grant with every input: %v", full)
	}
	r.fail(B, "delegation_grant", obj{"id": "self", "principal_id": P, "subject": B.ID, "scopes": []any{"x"}, "audiences": []any{H}},
		"controller_not_current")

	// Checks: Bob's own, paged; Alice checks Carol's for Dave.
	r.empty(B, "delegation_check")
	ck := r.required(B, "delegation_check", obj{"principal_id": P, "audience": H})
	if len(list(ck, "delegations")) != 2 || get(ck, "complete") != true || get(ck, "delegations", "0", "usable") != true {
		t.Errorf("delegation_check: %v", ck)
	}
	pg := r.call(A, "delegation_check", obj{"principal_id": P, "audience": H, "subject": B.ID, "limit": 1})
	pg2 := r.call(A, "delegation_check", obj{"principal_id": P, "audience": H, "subject": B.ID, "limit": 1, "cursor": str(pg, "next_cursor")})
	if get(pg, "complete") != false || get(pg2, "complete") != true || str(pg2, "delegations", "0", "credential", "id") != "review-bob-2" {
		t.Errorf("delegation_check pages: %v / %v", pg, pg2)
	}
	if c := r.call(A, "delegation_check", obj{"principal_id": P, "audience": D.ID, "subject": C.ID, "id": "full"}); get(c, "delegations", "0", "usable") != true {
		t.Errorf("delegation_check for a relying agent: %v", c)
	}

	// Listing: Bob's received ones (default service, then named), Alice's
	// as controller.
	if l := r.empty(B, "delegations_list"); len(list(l, "delegations")) != 2 {
		t.Errorf("delegations_list {}: %v", l)
	}
	lb := r.call(B, "delegations_list", obj{"delegation_service": H, "status": "active", "limit": 1})
	r.call(B, "delegations_list", obj{"delegation_service": H, "status": "active", "limit": 1, "cursor": str(lb, "next_cursor")})
	la := r.call(A, "delegations_list", obj{"principal_id": P, "status": "active", "limit": 2})
	la2 := r.call(A, "delegations_list", obj{"principal_id": P, "status": "active", "limit": 2, "cursor": str(la, "next_cursor")})
	if len(list(la, "delegations")) != 2 || len(list(la2, "delegations")) != 1 {
		t.Errorf("delegations_list controller mode: %v / %v", la, la2)
	}
	r.fail(B, "delegations_list", obj{"principal_id": P}, "controller_not_current")

	// Revocations, seen by the check; history in pages of two.
	r.empty(A, "delegation_revoke")
	r.required(A, "delegation_revoke", obj{"id": "review-bob-2", "principal_id": P})
	rv := r.call(A, "delegation_revoke", obj{"id": "full", "principal_id": P, "reason": "Moved teams."})
	if str(rv, "credential", "status") != "revoked" {
		t.Errorf("delegation_revoke: %v", rv)
	}
	r.call(A, "delegation_grant", obj{"id": "full", "principal_id": P, "subject": C.ID, "scopes": []any{"review"}, "audiences": []any{H}})
	after := r.call(B, "delegation_check", obj{"principal_id": P, "audience": H, "id": "review-bob-2"})
	if get(after, "delegations", "0", "usable") != false || str(after, "delegations", "0", "reasons", "0") != "status is revoked" {
		t.Errorf("delegation_check after the revocation: %v", after)
	}
	r.empty(C, "delegation_history")
	h1 := r.required(C, "delegation_history", obj{"principal_id": P, "id": "full"})
	h2 := r.call(C, "delegation_history", obj{"principal_id": P, "id": "full", "cursor": str(h1, "next_cursor")})
	if len(list(h1, "records")) != 2 || len(list(h2, "records")) != 1 || get(h1, "signatures_verified") != true ||
		str(h2, "records", "0", "envelope", "event", "type") != "delegation.grant" {
		t.Errorf("delegation_history pages: %v / %v", h1, h2)
	}
	if s := r.call(A, "services_list", obj{"host": H, "protocol": "agent-delegation/1.0"}); str(s, "services", "0", "endpoints", "query") != H+"/v1/delegations/query" {
		t.Errorf("services_list delegation: %v", s)
	}
}
