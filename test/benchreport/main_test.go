package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
pkg: apconnect/host/identity
BenchmarkVerifyStrict-2    	   1000	     50000 ns/op	       0 B/op	       0 allocs/op
BenchmarkParseEnvelope-2   	   1000	     70000 ns/op	  21.70 MB/s
pkg: apconnect/host/hub
BenchmarkDiscourseWrites/rooms=8-2   	 2000	 347813 ns/op	 0.1083 verify-share	 2500 writes/s
PASS
`

func TestParseAndDerive(t *testing.T) {
	ms, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 8 {
		t.Fatalf("parsed %d metrics: %+v", len(ms), ms)
	}
	if ms[0].Name != "identity/VerifyStrict" || ms[0].Unit != "ns/op" || ms[0].Value != 50000 {
		t.Fatalf("first metric = %+v", ms[0])
	}
	got := map[string]Metric{}
	for _, m := range derive(ms) {
		got[m.Name] = m
	}
	over := got["identity/envelope-verify-overhead"]
	if over.Value != 1.4 || over.Numerator.Value != 70000 || over.Denominator.Value != 50000 || !*over.Meets {
		t.Fatalf("overhead = %+v", over)
	}
	// 2500 writes/s over 1e9/50000 = 20000 verifications/s.
	hub := got["hub/discourse-writes-vs-verify-rate"]
	if hub.Value != 0.125 || hub.Denominator.Unit != "ops/s" || !*hub.Meets {
		t.Fatalf("hub ratio = %+v", hub)
	}
}

func TestDeriveSkipsMissingInputs(t *testing.T) {
	if d := derive([]Metric{{Name: "identity/VerifyStrict", Value: 1, Unit: "ns/op"}}); len(d) != 0 {
		t.Fatalf("derived %+v from missing inputs", d)
	}
}
