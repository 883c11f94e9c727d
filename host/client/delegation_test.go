package client

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/proto/delegation"
)

// The delegation client runs against the real hub's Agent Delegation
// service and the principal it hosts.
func TestHubDelegations(t *testing.T) {
	h, hc := realHub(t, hubtest.WithOptions(func(o *hub.Options) { o.Limits.Delegation.EventsPage = 2 }))
	ctl, subj := hubtest.NewAgent(31), hubtest.NewAgent(32)
	p, _, err := hub.AddPrincipalControllers(ctxT(t), h.DataDir(), "acme", []string{ctl.ID})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	body, final, err := FetchPrincipal(ctx, hc, p.URL)
	if err != nil || final != p.URL {
		t.Fatalf("fetch: %v %q", err, final)
	}
	doc, err := delegation.ParsePrincipalDocument(body)
	if err != nil || doc.ID != p.URL {
		t.Fatalf("principal: %v", err)
	}
	ds, err := NewDelegationService(h.Origin(), hc, subj.Signer, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := ds.Endpoints(ctx)
	if err != nil || ep.Delegations != h.Origin()+"/v1/delegations" || ep.Query != h.Origin()+"/v1/delegations/query" {
		t.Fatalf("endpoints %+v %v", ep, err)
	}
	// No credential yet: not_found, HTTP 404.
	var se *Error
	if _, _, err := ds.Credential(ctx, "d1"); !errors.As(err, &se) || se.Status != http.StatusNotFound || se.Code != "not_found" {
		t.Fatalf("missing credential: %v", err)
	}
	now := time.Now()
	grant := func(n int64) *delegation.Credential {
		t.Helper()
		env := ctl.Sign(t, delegation.GrantEvent(ctl.ID, now.UnixMilli(), n, delegation.GrantPayload{ID: "d1", PrincipalID: p.URL,
			Subject: subj.ID, Scopes: []string{"review"}, Audiences: []string{h.Origin()}}))
		res, err := ds.Submit(ctx, env)
		if err != nil || res.Credential.EventID != env.Hash || res.MaxSeenNonce == "" {
			t.Fatalf("submit: %v %+v", err, res)
		}
		return res.Credential
	}
	grant(now.UnixMilli())
	grant(now.UnixMilli() + 1)
	grant(now.UnixMilli() + 2)
	cred, raw, err := ds.Credential(ctx, "d1")
	if err != nil || cred.Subject != subj.ID || raw["status"] != "active" {
		t.Fatalf("credential: %v %+v", err, cred)
	}
	page, err := ds.Events(ctx, "d1", "")
	if err != nil || len(page.Items) != 2 || page.NextCursor == "" {
		t.Fatalf("events page 1: %v %+v", err, page)
	}
	all, err := ds.AllEvents(ctx, "d1")
	if err != nil || len(all) != 3 || all[2].Envelope.Hash != cred.EventID {
		t.Fatalf("all events: %v %d", err, len(all))
	}
	pub, err := ds.Query(ctx, &delegation.QueryRequest{Subject: subj.ID, PrincipalID: p.URL}, false)
	if err != nil || len(pub.Credentials) != 1 || pub.URL != ep.Query {
		t.Fatalf("public query: %v %+v", err, pub)
	}
	mine, err := ds.Query(ctx, &delegation.QueryRequest{Subject: subj.ID}, true)
	if err != nil || len(mine.Credentials) != 1 {
		t.Fatalf("enumeration: %v", err)
	}
	// A public query must name both: refused before anything is sent.
	if _, err := ds.Query(ctx, &delegation.QueryRequest{Subject: subj.ID}, false); delegation.ErrorCode(err) != delegation.CodeInvalidRequest {
		t.Fatalf("public query without principal: %v", err)
	}
	// Enumeration as someone else's subject: permission_denied from the hub.
	if _, err := ds.Query(ctx, &delegation.QueryRequest{Subject: ctl.ID}, true); !errors.As(err, &se) || se.Code != "permission_denied" {
		t.Fatalf("foreign enumeration: %v", err)
	}
}

// FetchPrincipal follows no redirect, reads at most the bound, and wants
// 200.
func TestFetchPrincipalBounds(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/doc", http.StatusMovedPermanently)
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat(" ", delegation.MaxPrincipalDocumentBytes+1)))
		case "/doc":
			if r.Header.Get("Accept") != "application/json" {
				http.Error(w, "accept", http.StatusNotAcceptable)
				return
			}
			_, _ = w.Write([]byte(`{}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := ctxT(t)
	hc := srv.Client()
	if b, u, err := FetchPrincipal(ctx, hc, srv.URL+"/doc"); err != nil || string(b) != "{}" || u != srv.URL+"/doc" {
		t.Errorf("doc: %q %q %v", b, u, err)
	}
	if _, _, err := FetchPrincipal(ctx, hc, srv.URL+"/redirect"); !errors.Is(err, ErrPrincipalRedirect) {
		t.Errorf("redirect: %v", err)
	}
	if _, _, err := FetchPrincipal(ctx, hc, srv.URL+"/big"); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("big: %v", err)
	}
	if _, _, err := FetchPrincipal(ctx, hc, srv.URL+"/none"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404: %v", err)
	}
	if _, _, err := FetchPrincipal(ctx, hc, "http://example.com/p"); err == nil {
		t.Error("http accepted")
	}
}
