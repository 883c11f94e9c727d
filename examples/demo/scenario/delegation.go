package scenario

import (
	"path"
	"slices"
	"time"
)

// delegationID names alice's grant to bob on the principal's delegation
// service.
const delegationID = "review-bob"

// delegate: alice, a controller of the principal the hub hosts, grants bob
// the review scope towards the hub (Agent Delegation).
func (r *run) delegate() error {
	r.section("alice delegates review authority for " + path.Base(r.Principal) + " to bob (Agent Delegation)")
	res, err := r.call(r.Alice, "principal_resolve", map[string]any{"url": r.Principal})
	if err != nil {
		return err
	}
	controllers, _ := res["principal"].(map[string]any)["controllers"].([]any)
	isController := slices.ContainsFunc(controllers, func(c any) bool { return str(c, "id") == r.Alice.ID })
	if err := expect(str(res, "canonical_id") == r.Principal && isController,
		"principal_resolve %s should list alice as a controller: %v", r.Principal, res); err != nil {
		return err
	}
	r.say(r.Alice, "principal_resolve → %s, delegation service %s, %d controller: alice",
		str(res, "canonical_id"), str(res, "principal", "delegation_service"), len(controllers))
	grant, err := r.call(r.Alice, "delegation_grant", map[string]any{
		"id": delegationID, "principal_id": r.Principal, "subject": r.Bob.ID, "relationship": "reviewer",
		"scopes": []any{"review"}, "audiences": []any{r.Host}, "expires_at": time.Now().Add(24 * time.Hour).UnixMilli(),
	})
	if err != nil {
		return err
	}
	if err := expect(str(grant, "credential", "id") == delegationID && str(grant, "credential", "status") == "active" &&
		str(grant, "credential", "subject") == r.Bob.ID && str(grant, "credential", "controller") == r.Alice.ID,
		"delegation_grant should give an active credential for bob signed by alice, got %v", grant); err != nil {
		return err
	}
	r.say(r.Alice, "delegation_grant %s → signed delegation.grant %s: bob may act for it with scope review towards %s (active)",
		delegationID, short(str(grant, "credential", "grant_event_id")), r.Host)
	return nil
}

// checkDelegation: before approving bob's request, alice checks that he
// acts for the principal towards this host.
func (r *run) checkDelegation() error {
	res, err := r.call(r.Alice, "delegation_check", map[string]any{"principal_id": r.Principal, "subject": r.Bob.ID, "audience": r.Host})
	if err != nil {
		return err
	}
	ds, _ := res["delegations"].([]any)
	var found map[string]any
	for _, d := range ds {
		if str(d, "credential", "id") == delegationID {
			found, _ = d.(map[string]any)
		}
	}
	if err := expect(found != nil && res["complete"] == true, "delegation_check should find %s, got %v", delegationID, res); err != nil {
		return err
	}
	scopes, _ := found["credential"].(map[string]any)["scopes"].([]any)
	if err := expect(found["usable"] == true && found["verified"] == true && slices.Contains(scopes, any("review")),
		"bob's delegation should be verified and usable with scope review, got %v", found); err != nil {
		return err
	}
	r.say(r.Alice, "delegation_check subject=bob audience=%s → %s: verified, usable: true, scopes %v, signed by %s",
		r.Host, delegationID, scopes, r.who(str(found, "credential", "controller")))
	return nil
}
