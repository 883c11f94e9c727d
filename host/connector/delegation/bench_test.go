package delegation_test

import (
	"slices"
	"testing"
	"time"

	"apconnect/host/connector/delegation"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	proto "apconnect/host/proto/delegation"
)

// BenchmarkCheck times agent_protocols_delegation_check of one credential
// with a 10-event history (grants and revocations, the latest a grant)
// against the local hub — principal read, public query, the history page,
// every record's signature, the verdict — beside one GET of the same
// credential from the same hub with the same client, alternating, and
// reports both medians and their ratio. The check's local record of its
// verdict is written behind the call (record.go): the loop waits for it
// between the two timings, so it slows neither. The ratio is issue 23's
// row: check-p50 / get-p50 <= 3 (test/benchreport
// "delegation/check-10-events-vs-get").
func BenchmarkCheck(b *testing.B) {
	h := connectortest.StartHub(b)
	alice := hubtest.NewAgent(0x61)
	bob := newAgent(b, h, 0x63)
	p, _, err := hub.AddPrincipalControllers(ctx, h.DataDir(), "acme", []string{alice.ID})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		now := time.Now()
		var body []byte
		if i%2 == 1 && i < 9 {
			body = alice.SignJSON(b, proto.RevokeEvent(alice.ID, now.UnixMilli(), alice.NextNonce(now), proto.RevokePayload{ID: "bench", PrincipalID: p.URL}))
		} else {
			body = alice.SignJSON(b, proto.GrantEvent(alice.ID, now.UnixMilli(), alice.NextNonce(now), proto.GrantPayload{ID: "bench",
				PrincipalID: p.URL, Subject: bob.id, Scopes: []string{"review"}, Audiences: []string{h.Origin()}}))
		}
		if r := h.Post("/v1/delegations", body); r.Status != ok {
			b.Fatalf("event %d: %d %s", i, r.Status, r.Body)
		}
	}
	in := delegation.DelegationCheckInput{PrincipalID: p.URL, Audience: h.Origin()}
	check := func() {
		res, err := bob.DelegationCheck(ctx, in)
		if err != nil || len(res.Delegations) != 1 || !res.Delegations[0].Usable {
			b.Fatalf("check: %v %+v", err, res)
		}
	}
	get := bob.BenchGet(b, h.Origin(), "bench")
	check() // discovery and connections, once
	get()
	var checks, gets []float64
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		check()
		t1 := time.Now()
		bob.Flush() // the check's record, written behind it, is not the GET's cost
		t2 := time.Now()
		get()
		checks = append(checks, float64(t1.Sub(t0).Microseconds())/1000)
		gets = append(gets, float64(time.Since(t2).Microseconds())/1000)
	}
	b.StopTimer()
	c, g := median(checks), median(gets)
	b.ReportMetric(c, "check-p50-ms")
	b.ReportMetric(g, "get-p50-ms")
	b.ReportMetric(c/g, "check/get")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
