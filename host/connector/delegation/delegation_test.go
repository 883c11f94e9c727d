package delegation_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"apconnect/host/connector"
	"apconnect/host/connector/delegation"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	proto "apconnect/host/proto/delegation"
	"apconnect/host/store"
)

// A controller grants, the subject checks it usable, both list it, the
// history verifies, a revocation is seen by the check and listed with its
// reason, and an expired grant is listed not usable.
func TestGrantCheckListRevokeHistory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	res := connectortest.Must[*delegation.PrincipalResolveResult](t, "agent_protocols_principal_resolve")(
		w.bob.PrincipalResolve(ctx, delegation.PrincipalResolveInput{URL: w.acme}))
	if res.CanonicalID != w.acme || res.Alias || res.Principal["delegation_service"] != w.origin {
		t.Fatalf("resolve: %+v", res)
	}
	g := w.grant(w.alice, "review-bob", w.bob.id, nil)
	if g.Credential["status"] != "active" || g.Credential["event_id"] != g.Envelope["hash"] || g.Credential["principal_id"] != w.acme {
		t.Fatalf("grant: %+v", g)
	}
	exp := time.Now().UnixMilli() + 1500
	w.grant(w.rita, "short", w.bob.id, func(in *delegation.DelegationGrantInput) { in.ExpiresAt = &exp })

	ck := w.check(w.bob, "", "")
	if len(ck.Delegations) != 2 || !ck.Complete || ck.QueryURL != w.origin+"/v1/delegations/query" {
		t.Fatalf("check: %+v", ck)
	}
	for _, d := range ck.Delegations {
		if !d.Usable || !d.Verified || len(d.Reasons) != 0 {
			t.Errorf("check %v: %+v", d.Credential["id"], d)
		}
	}
	// Someone else checks bob for another audience: verified, not usable.
	other := connectortest.Must[*delegation.DelegationCheckResult](t, "agent_protocols_delegation_check")(w.carol.DelegationCheck(ctx,
		delegation.DelegationCheckInput{PrincipalID: w.acme, Audience: "https://elsewhere.example", Subject: w.bob.id, ID: "review-bob"}))
	if len(other.Delegations) != 1 || other.Delegations[0].Usable || !other.Delegations[0].Verified ||
		!slices.Equal(other.Delegations[0].Reasons, []string{"audience https://elsewhere.example is not granted"}) {
		t.Errorf("other audience: %+v", other.Delegations)
	}

	mine := connectortest.Must[*delegation.DelegationsListResult](t, "agent_protocols_delegations_list")(w.bob.DelegationsList(ctx, delegation.DelegationsListInput{}))
	if len(mine.Delegations) != 2 {
		t.Errorf("bob's list: %+v", mine)
	}
	// Rita's ceiling holds both; carol is no controller.
	ctl := connectortest.Must[*delegation.DelegationsListResult](t, "agent_protocols_delegations_list")(w.rita.DelegationsList(ctx,
		delegation.DelegationsListInput{PrincipalID: w.acme}))
	if len(ctl.Delegations) != 2 {
		t.Errorf("rita's list: %+v", ctl)
	}
	if _, err := w.carol.DelegationsList(ctx, delegation.DelegationsListInput{PrincipalID: w.acme}); code(err) != proto.CodeControllerNotCurrent {
		t.Errorf("carol lists acme: %v", err)
	}
	if _, err := w.bob.DelegationsList(ctx, delegation.DelegationsListInput{PrincipalID: w.acme, DelegationService: w.origin}); code(err) != engine.CodeInvalidInput {
		t.Errorf("both modes: %v", err)
	}

	rv := connectortest.Must[*delegation.DelegationWriteResult](t, "agent_protocols_delegation_revoke")(w.rita.DelegationRevoke(ctx,
		delegation.DelegationRevokeInput{ID: "review-bob", PrincipalID: w.acme, Reason: "Moved teams."}))
	if rv.Credential["status"] != "revoked" || rv.Credential["controller"] != w.rita.id {
		t.Fatalf("revoke: %+v", rv)
	}
	time.Sleep(time.Until(time.UnixMilli(exp + 50)))
	ck = w.check(w.bob, "", "")
	reasons := map[string][]string{}
	for _, d := range ck.Delegations {
		if d.Usable {
			t.Errorf("usable after revocation or expiry: %+v", d)
		}
		reasons[d.Credential["id"].(string)] = d.Reasons
	}
	if !slices.Equal(reasons["review-bob"], []string{"status is revoked"}) || !slices.Equal(reasons["short"], []string{"status is expired", "expired"}) {
		t.Errorf("reasons: %v", reasons)
	}
	h := connectortest.Must[*delegation.DelegationHistoryResult](t, "agent_protocols_delegation_history")(w.carol.DelegationHistory(ctx,
		delegation.DelegationHistoryInput{PrincipalID: w.acme, ID: "review-bob"}))
	if len(h.Records) != 2 || !h.SignaturesVerified || h.NextCursor != "" || h.Credential["status"] != "revoked" {
		t.Errorf("history: %+v", h)
	}
	// A re-grant replaces the revoked credential; its three records come
	// in pages of two, every page read by the check.
	w.grant(w.alice, "review-bob", w.bob.id, nil)
	h1 := connectortest.Must[*delegation.DelegationHistoryResult](t, "agent_protocols_delegation_history")(w.carol.DelegationHistory(ctx,
		delegation.DelegationHistoryInput{PrincipalID: w.acme, ID: "review-bob"}))
	h2 := connectortest.Must[*delegation.DelegationHistoryResult](t, "agent_protocols_delegation_history")(w.carol.DelegationHistory(ctx,
		delegation.DelegationHistoryInput{PrincipalID: w.acme, ID: "review-bob", Cursor: h1.NextCursor}))
	if len(h1.Records) != 2 || h1.NextCursor == "" || len(h2.Records) != 1 {
		t.Errorf("history pages: %d %q %d", len(h1.Records), h1.NextCursor, len(h2.Records))
	}
	if ck := w.check(w.bob, "", "review-bob"); len(ck.Delegations) != 1 || !ck.Delegations[0].Usable {
		t.Errorf("after re-grant: %+v", ck.Delegations)
	}
}

// Nothing that the service must refuse is signed: a key that is no
// controller, a grant beyond the ceiling, a revocation of nothing, another
// principal's id in use. No nonce is used and nothing is posted.
func TestAuthorityRefusedBeforeSigning(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.grant(w.alice, "taken", w.bob.id, nil)
	other, _, err := hub.AddPrincipalControllers(ctx, w.h.DataDir(), "other", []string{w.alice.id})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		a    *agent
		call func(a *agent) error
		code string
	}{
		{"not a controller", w.bob, func(a *agent) error {
			_, err := a.DelegationGrant(ctx, delegation.DelegationGrantInput{ID: "x", PrincipalID: w.acme, Subject: w.carol.id, Scopes: []string{"review"}, Audiences: []string{w.origin}})
			return err
		}, proto.CodeControllerNotCurrent},
		{"beyond the ceiling", w.rita, func(a *agent) error {
			_, err := a.DelegationGrant(ctx, delegation.DelegationGrantInput{ID: "x", PrincipalID: w.acme, Subject: w.carol.id, Scopes: []string{"admin"}, Audiences: []string{w.origin}})
			return err
		}, proto.CodeDelegationCeilingExceeded},
		{"revoke nothing", w.alice, func(a *agent) error {
			_, err := a.DelegationRevoke(ctx, delegation.DelegationRevokeInput{ID: "nothing", PrincipalID: w.acme})
			return err
		}, proto.CodeCredentialNotFound},
		{"another principal's id", w.alice, func(a *agent) error {
			_, err := a.DelegationGrant(ctx, delegation.DelegationGrantInput{ID: "taken", PrincipalID: other.URL, Subject: w.bob.id, Scopes: []string{"review"}, Audiences: []string{w.origin}})
			return err
		}, proto.CodeCredentialIdentityMismatch},
		{"wildcard scope", w.alice, func(a *agent) error {
			_, err := a.DelegationGrant(ctx, delegation.DelegationGrantInput{ID: "x", PrincipalID: w.acme, Subject: w.bob.id, Scopes: []string{"*"}, Audiences: []string{w.origin}})
			return err
		}, identity.CodeInvalidEvent},
		{"bad subject", w.alice, func(a *agent) error {
			_, err := a.DelegationGrant(ctx, delegation.DelegationGrantInput{ID: "x", PrincipalID: w.acme, Subject: "bob", Scopes: []string{"review"}, Audiences: []string{w.origin}})
			return err
		}, identity.CodeInvalidEvent},
		{"bad id", w.alice, func(a *agent) error {
			_, err := a.DelegationRevoke(ctx, delegation.DelegationRevokeInput{ID: "a/b", PrincipalID: w.acme})
			return err
		}, identity.CodeInvalidRequest},
	}
	for _, tc := range cases {
		nonce := tc.a.lastNonce(t)
		posts := postsTo(w)
		if err := tc.call(tc.a); code(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
		if n := tc.a.lastNonce(t); n != nonce {
			t.Errorf("%s: nonce moved from %d to %d", tc.name, nonce, n)
		}
		if n := postsTo(w) - posts; n != 0 {
			t.Errorf("%s: %d submissions", tc.name, n)
		}
	}
}

// postsTo counts the hub's accepted delegation records.
func postsTo(w *world) int64 {
	var n int64
	_ = w.h.DB().Reader().QueryRow(`SELECT COUNT(*) FROM accepted_envelopes WHERE protocol = ?`, proto.Protocol).Scan(&n)
	return n
}

// After another process of the same Agent ID used greater nonces, the
// grant is refused with Max-Seen-Nonce, re-signed once and accepted.
func TestNonceResync(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	twin := hubtest.NewAgent(0x61) // alice's key, another process
	ahead := time.Now().Add(90 * time.Second)
	p := proto.GrantPayload{ID: "twin", PrincipalID: w.acme, Subject: w.carol.id, Scopes: []string{"review"}, Audiences: []string{w.origin}}
	if r := w.h.Post("/v1/delegations", twin.SignJSON(t, proto.GrantEvent(twin.ID, time.Now().UnixMilli(), ahead.UnixMilli(), p))); r.Status != ok {
		t.Fatalf("twin: %d %s", r.Status, r.Body)
	}
	if before := w.alice.lastNonce(t); before >= ahead.UnixMilli() {
		t.Fatalf("alice's nonce %d is past the twin's already", before)
	}
	g := w.grant(w.alice, "after-twin", w.bob.id, nil)
	raw, _ := json.Marshal(g.Envelope)
	var env struct {
		Event struct{ Nonce int64 }
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Event.Nonce <= ahead.UnixMilli() {
		t.Errorf("nonce %d not past the twin's %d (%v)", env.Event.Nonce, ahead.UnixMilli(), err)
	}
	failed, _ := w.alice.conn.Store().Read().OutboxEntries(ctx, store.OutboxFailed)
	done, _ := w.alice.conn.Store().Read().OutboxEntries(ctx, store.OutboxDone)
	if len(failed) != 1 || !strings.Contains(failed[0].Error, "nonce_not_greater") || len(done) != 1 {
		t.Errorf("outbox: %d failed %v, %d done", len(failed), failed, len(done))
	}
}

// A history the service tampers with does not verify: the check says
// why, the history read fails — also after a check that verified the
// untampered records (whose signatures the module remembers).
func TestTamperedHistory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.grant(w.alice, "review-bob", w.bob.id, nil)
	if ck := w.check(w.bob, "", ""); len(ck.Delegations) != 1 || !ck.Delegations[0].Usable {
		t.Fatalf("untampered check: %+v", ck.Delegations)
	}
	w.proxy.Rewrite = func(path string, body []byte) []byte {
		if !strings.HasSuffix(path, "/events") {
			return body
		}
		return bytes.Replace(body, []byte(`"review"`), []byte(`"reviews"`), 1)
	}
	ck := w.check(w.bob, "", "")
	if len(ck.Delegations) != 1 || ck.Delegations[0].Usable || ck.Delegations[0].Verified || len(ck.Delegations[0].Reasons) == 0 {
		t.Errorf("tampered check: %+v", ck.Delegations)
	}
	if _, err := w.bob.DelegationHistory(ctx, delegation.DelegationHistoryInput{PrincipalID: w.acme, ID: "review-bob"}); code(err) != proto.CodeInvalidDelegation {
		t.Errorf("tampered history: %v", err)
	}
	// A credential the service claims but whose grant it drops.
	w.proxy.Rewrite = func(path string, body []byte) []byte {
		if strings.HasSuffix(path, "/events") {
			return []byte(`{"result":[]}`)
		}
		return body
	}
	if ck := w.check(w.bob, "", ""); ck.Delegations[0].Usable || !slices.Contains(ck.Delegations[0].Reasons, "latest grant record is missing") {
		t.Errorf("dropped history: %+v", ck.Delegations)
	}
}

// An alias resolves to the canonical id, and a grant naming it signs the
// canonical id.
func TestAlias(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alias := w.origin + "/principals/acme-alias"
	doc := map[string]any{"aliases": []any{alias}, "controllers": []any{
		map[string]any{"id": w.alice.id, "source": "local", "valid_from": time.Now().UnixMilli() - 1000, "delegation": "*"}}}
	if _, err := hub.PutPrincipal(ctx, w.h.DataDir(), "acme", doc); err != nil {
		t.Fatal(err)
	}
	res := connectortest.Must[*delegation.PrincipalResolveResult](t, "agent_protocols_principal_resolve")(
		w.bob.PrincipalResolve(ctx, delegation.PrincipalResolveInput{URL: alias}))
	if res.CanonicalID != w.acme || !res.Alias || res.RequestedURL != alias {
		t.Errorf("alias: %+v", res)
	}
	g := w.grant(w.alice, "via-alias", w.bob.id, func(in *delegation.DelegationGrantInput) { in.PrincipalID = alias })
	if g.Credential["principal_id"] != w.acme {
		t.Errorf("signed principal: %v", g.Credential["principal_id"])
	}
	raw, _ := json.Marshal(g.Envelope)
	if !bytes.Contains(raw, []byte(`"principal_id":"`+w.acme+`"`)) {
		t.Errorf("envelope: %s", raw)
	}
}

// A principal read for a check serves the checks of the next PrincipalTTL;
// grants read it every time; the early history read with a check's query
// is used only when it ends with the credential's latest event.
func TestCheckReads(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var mu sync.Mutex
	reads := map[string]int{}
	var stale atomic.Bool // the next history page served lacks its last record
	w.proxy.Rewrite = func(path string, body []byte) []byte {
		mu.Lock()
		reads[path]++
		mu.Unlock()
		if strings.HasSuffix(path, "/events") && stale.CompareAndSwap(true, false) {
			var page struct {
				Result []json.RawMessage `json:"result"`
			}
			_ = json.Unmarshal(body, &page)
			page.Result = page.Result[:len(page.Result)-1]
			body, _ = json.Marshal(page)
		}
		return body
	}
	count := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return reads[path]
	}
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	bob := newAgent(t, w.h, 0x66, connectortest.WithHTTP(w.proxy.Client), func(o *connector.Options) { o.Clock = clock })
	principal := "/principals/acme"
	w.grant(w.alice, "review", bob.id, nil)
	before := count(principal)
	w.check(bob, "", "")
	w.check(bob, "", "")
	if n := count(principal) - before; n != 1 {
		t.Errorf("two checks read the principal %d times", n)
	}
	offset.Store(int64(delegation.PrincipalTTL + time.Second))
	if ck := w.check(bob, "", ""); len(ck.Delegations) != 1 || !ck.Delegations[0].Usable {
		t.Errorf("check after the TTL: %+v", ck.Delegations)
	}
	if n := count(principal) - before; n != 2 {
		t.Errorf("after the TTL: %d reads", n)
	}
	// A history read early that lacks the credential's latest event (here
	// served without it) is read again, and the verdict is the
	// revocation's alone.
	events := count("/v1/delegations/review/events")
	connectortest.Must[*delegation.DelegationWriteResult](t, "agent_protocols_delegation_revoke")(w.alice.DelegationRevoke(ctx,
		delegation.DelegationRevokeInput{ID: "review", PrincipalID: w.acme}))
	stale.Store(true)
	ck := w.check(bob, "", "")
	if len(ck.Delegations) != 1 || ck.Delegations[0].Usable || !slices.Equal(ck.Delegations[0].Reasons, []string{"status is revoked"}) {
		t.Errorf("after the revocation: %+v", ck.Delegations)
	}
	if n := count("/v1/delegations/review/events") - events; n != 2 {
		t.Errorf("history reads after the revocation: %d, want the early one and another", n)
	}
	before = count(principal)
	w.grant(w.alice, "review-2", bob.id, nil)
	w.grant(w.alice, "review-3", bob.id, nil)
	if n := count(principal) - before; n != 2 {
		t.Errorf("two grants read the principal %d times", n)
	}
}
