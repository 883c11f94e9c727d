package client

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/profile"
)

// The profile client runs against the real hub's Agent Profile service.

func TestHubProfiles(t *testing.T) {
	h, hc := realHub(t)
	ps, err := NewProfileService(h.Origin(), hc, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	d, err := ps.Discovery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Protocol != profile.Protocol || d.Endpoint("profiles") != h.Origin()+"/v1/profiles" || !d.Has("batch-read") {
		t.Fatalf("discovery %+v", d)
	}

	a, b := hubtest.NewAgent(21), hubtest.NewAgent(22)
	now := time.Now()
	n1 := now.UnixMilli()
	env1 := profileUpdate(t, a, now, n1, "first")
	res, err := ps.UpdateProfile(ctx, env1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Profile.ID != a.ID || res.Profile.Name != "first" || res.Profile.EventID != env1.Hash || res.MaxSeenNonce != strconv.FormatInt(n1, 10) {
		t.Fatalf("update %+v / %+v", res, res.Profile)
	}
	if len(res.Profile.Capabilities) != 1 || res.Profile.Raw["name"] != "first" {
		t.Fatalf("document %+v", res.Profile)
	}

	env2 := profileUpdate(t, a, now, n1+1, "second")
	if _, err := ps.UpdateProfile(ctx, env2); err != nil {
		t.Fatal(err)
	}
	// an exact resubmission is idempotent: the current document
	again, err := ps.UpdateProfile(ctx, env1)
	if err != nil || again.Profile.EventID != env2.Hash {
		t.Fatalf("resubmission %+v %v", again, err)
	}

	// a stale nonce: nonce_not_greater with Max-Seen-Nonce
	stale := profileUpdate(t, a, now, n1-5, "stale")
	_, err = ps.UpdateProfile(ctx, stale)
	var se *Error
	if !errors.As(err, &se) || se.Code != identity.CodeNonceNotGreater || se.MaxSeenNonce != strconv.FormatInt(n1+1, 10) || se.Status != http.StatusConflict && se.Status != http.StatusBadRequest {
		t.Fatalf("stale: %v (%+v)", err, se)
	}
	if next, err := identity.ApplyMaxSeenNonce(n1-5, now.UnixMilli(), se.MaxSeenNonce); err != nil || next != n1+2 {
		t.Fatalf("ApplyMaxSeenNonce %d %v", next, err)
	}

	doc, err := ps.Profile(ctx, a.ID)
	if err != nil || doc.Name != "second" || doc.EventID != env2.Hash {
		t.Fatalf("profile %+v %v", doc, err)
	}
	_, err = ps.Profile(ctx, b.ID)
	if !errors.As(err, &se) || se.Status != http.StatusNotFound || se.Code != identity.CodeNotFound {
		t.Fatalf("unknown profile: %v", err)
	}
	if _, err := ps.Profile(ctx, "did:agent:nope"); err == nil {
		t.Fatal("invalid Agent ID accepted")
	}

	// history: newest first, limit 1 by default, paginated
	hist, err := ps.History(ctx, a.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Items) != 1 || hist.Items[0].Hash != env2.Hash || hist.NextCursor == "" {
		t.Fatalf("history %+v", hist)
	}
	if err := hist.Items[0].Verify(); err != nil {
		t.Fatalf("history envelope does not verify: %v", err)
	}
	older, err := ps.History(ctx, a.ID, 1, hist.NextCursor)
	if err != nil || len(older.Items) != 1 || older.Items[0].Hash != env1.Hash || older.NextCursor != "" {
		t.Fatalf("older %+v %v", older, err)
	}
	all, err := ps.History(ctx, a.ID, 10, "")
	if err != nil || len(all.Items) != 2 {
		t.Fatalf("all %+v %v", all, err)
	}

	// batch: unknown profiles omitted, order kept
	if _, err := ps.UpdateProfile(ctx, profileUpdate(t, b, now, n1, "bee")); err != nil {
		t.Fatal(err)
	}
	c := hubtest.NewAgent(23)
	docs, err := ps.Batch(ctx, []string{b.ID, c.ID, a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].ID != b.ID || docs[1].ID != a.ID {
		t.Fatalf("batch %+v", docs)
	}
	if docs, err := ps.Batch(ctx, nil); err != nil || len(docs) != 0 {
		t.Fatalf("empty batch %v %v", docs, err)
	}
	tooMany := make([]string, MaxBatchIDs+1)
	for i := range tooMany {
		tooMany[i] = a.ID
	}
	if _, err := ps.Batch(ctx, tooMany); err == nil {
		t.Fatal("a batch over 1000 ids was sent")
	}
}
