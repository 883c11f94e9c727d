package delegation_test

import (
	"slices"
	"testing"

	"apconnect/host/connector/delegation"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/store"
)

// recorded is an agent's local record of the credentials it has seen, by
// id (the world has one service).
func (a *agent) recorded(t *testing.T) map[string]store.DelegationCredential {
	t.Helper()
	a.conn.Delegation().Flush() // a check's record is written behind the call
	list, err := a.conn.Store().Read().DelegationCredentials(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.DelegationCredential{}
	for _, c := range list {
		out[c.ID] = c
	}
	return out
}

// Each agent records the credentials it signed or that name it, as its
// tools returned them: the grantor its grant (signed), the subject the
// verdict of its check, another checker nothing; a revocation by another
// controller reaches the grantor's record when it lists the principal, and
// drops the subject's stale verdict when it lists its own.
func TestRecordOfCredentials(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	g := w.grant(w.alice, "review-bob", w.bob.id, nil)
	rec := w.alice.recorded(t)
	if c := rec["review-bob"]; len(rec) != 1 || !c.Signed || c.Source != store.DelegationFromGrant || c.Status != "active" ||
		c.Subject != w.bob.id || c.Principal != w.acme || c.Service != w.origin || c.Controller != w.alice.id ||
		c.EventID != g.Envelope["hash"] || !slices.Equal(c.Scopes, []string{"review"}) || !slices.Equal(c.Audiences, []string{w.origin}) ||
		c.Check != nil || c.SeenAt == 0 {
		t.Fatalf("alice's record after her grant: %+v", rec)
	}

	w.check(w.bob, "", "")
	rec = w.bob.recorded(t)
	if c := rec["review-bob"]; len(rec) != 1 || c.Signed || c.Source != store.DelegationFromCheck || c.Check == nil ||
		!c.Check.Usable || !c.Check.Verified || c.Check.Audience != w.origin || len(c.Check.Reasons) != 0 || c.Check.At == 0 {
		t.Fatalf("bob's record after his check: %+v", rec)
	}
	// Carol checks bob: neither hers nor naming her.
	connectortest.Must[*delegation.DelegationCheckResult](t, "agent_protocols_delegation_check")(w.carol.DelegationCheck(ctx,
		delegation.DelegationCheckInput{PrincipalID: w.acme, Audience: w.origin, Subject: w.bob.id}))
	if rec := w.carol.recorded(t); len(rec) != 0 {
		t.Fatalf("carol recorded %+v", rec)
	}
	// Rita lists acme as a controller: alice's grant is not hers.
	connectortest.Must[*delegation.DelegationsListResult](t, "agent_protocols_delegations_list")(w.rita.DelegationsList(ctx,
		delegation.DelegationsListInput{PrincipalID: w.acme}))
	if rec := w.rita.recorded(t); len(rec) != 0 {
		t.Fatalf("rita recorded %+v", rec)
	}

	rv := connectortest.Must[*delegation.DelegationWriteResult](t, "agent_protocols_delegation_revoke")(w.rita.DelegationRevoke(ctx,
		delegation.DelegationRevokeInput{ID: "review-bob", PrincipalID: w.acme, Reason: "Moved teams."}))
	if c := w.rita.recorded(t)["review-bob"]; !c.Signed || c.Source != store.DelegationFromRevoke || c.Status != "revoked" ||
		c.EventID != rv.Envelope["hash"] || c.Controller != w.rita.id {
		t.Fatalf("rita's record after her revocation: %+v", c)
	}
	connectortest.Must[*delegation.DelegationsListResult](t, "agent_protocols_delegations_list")(w.alice.DelegationsList(ctx,
		delegation.DelegationsListInput{PrincipalID: w.acme}))
	if c := w.alice.recorded(t)["review-bob"]; !c.Signed || c.Source != store.DelegationFromList || c.Status != "revoked" ||
		c.Controller != w.rita.id {
		t.Fatalf("alice's record after listing: %+v", c)
	}
	connectortest.Must[*delegation.DelegationsListResult](t, "agent_protocols_delegations_list")(w.bob.DelegationsList(ctx,
		delegation.DelegationsListInput{}))
	if c := w.bob.recorded(t)["review-bob"]; c.Status != "revoked" || c.Check != nil || c.Source != store.DelegationFromList {
		t.Fatalf("bob's record after listing the revoked credential: %+v", c)
	}
	w.check(w.bob, "", "")
	if c := w.bob.recorded(t)["review-bob"]; c.Check == nil || c.Check.Usable || !slices.Equal(c.Check.Reasons, []string{"status is revoked"}) {
		t.Fatalf("bob's record after checking the revoked credential: %+v", c)
	}
}

// A check's record is written behind the call: a clean close right after
// the call still writes it, and checks recorded behind one another land in
// call order (the last verdict stands).
func TestCheckRecordIsWrittenBehindTheCall(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.grant(w.alice, "review-bob", w.bob.id, nil)
	w.check(w.bob, "", "")
	if err := w.bob.conn.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := w.bob.env.Open()
	list, err := reopened.Store().Read().DelegationCredentials(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Check == nil || !list[0].Check.Usable {
		t.Fatalf("bob's record after a check and a close: %+v", list)
	}

	bob := &agent{Module: reopened.Delegation(), conn: reopened, env: w.bob.env, id: w.bob.id}
	for range 5 {
		w.check(bob, "", "")
	}
	connectortest.Must[*delegation.DelegationWriteResult](t, "agent_protocols_delegation_revoke")(w.alice.DelegationRevoke(ctx,
		delegation.DelegationRevokeInput{ID: "review-bob", PrincipalID: w.acme}))
	w.check(bob, "", "")
	if c := bob.recorded(t)["review-bob"]; c.Check == nil || c.Check.Usable || c.Status != "revoked" {
		t.Fatalf("bob's record after his last check, of a revoked credential: %+v", c)
	}
}
