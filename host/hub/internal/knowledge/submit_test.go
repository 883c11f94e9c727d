package knowledge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
)

// The discovery document validates as a client reads it and advertises
// ranked search in the lexical mode only, with the envelope limit.
func TestDiscovery(t *testing.T) {
	f := newFixture(t)
	d, err := f.kc.Discovery(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !d.RankedSearch() || !slices.Equal(d.SearchModes, []string{rules.ModeLexical}) || d.Limits["max_envelope_bytes"] != rules.DefaultMaxEnvelopeBytes {
		t.Fatalf("discovery %+v", d)
	}
	for _, key := range []string{rules.EndpointEvents, rules.EndpointQuery, rules.EndpointBatch, rules.EndpointSearch} {
		if u, err := d.Endpoint(key); err != nil || u != f.h.Origin()+"/v1/knowledge/"+key {
			t.Errorf("endpoint %s: %q %v", key, u, err)
		}
	}
	if r := f.h.Do(http.MethodGet, "/.well-known/agent-knowledge?x=1", nil, nil); r.ErrorCode() != rules.CodeInvalidRequest {
		t.Errorf("discovery with a parameter: %d %s", r.Status, r.Body)
	}
	if r := f.h.Do(http.MethodPost, "/.well-known/agent-knowledge", "{}", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST discovery: %d", r.Status)
	}
}

// An accepted event gets the next seq and the hub clock as accepted_at; an
// exact resubmission, later, returns the original record and changes
// nothing; no Max-Seen-Nonce is sent.
func TestSubmitAndResubmit(t *testing.T) {
	f := newFixture(t)
	env := f.sign(f.alice, rules.TypePublish, publication("observation", "Cold start", "Cold start takes 40 ms.", nil), 0)
	body, _ := json.Marshal(env)
	r := f.post(body)
	if r.Status != http.StatusOK || r.Header.Get("Max-Seen-Nonce") != "" {
		t.Fatalf("submit: %d %v %s", r.Status, r.Header, r.Body)
	}
	rec, err := rules.ValidateRecord(value(t, json.RawMessage(r.Body)), env.Hash)
	if err != nil || rec.Seq != 1 || rec.AcceptedAt != t0.UnixMilli() {
		t.Fatalf("record %+v %v", rec, err)
	}
	f.clock.Advance(time.Hour)
	// Whitespace and member order do not change the event: the same hash.
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, body, "", "  ")
	again := f.post(pretty.Bytes())
	if again.Status != http.StatusOK || !bytes.Equal(again.Body, r.Body) {
		t.Fatalf("resubmission: %d %s, want %s", again.Status, again.Body, r.Body)
	}
	if cp := f.checkpoint(); cp != 1 {
		t.Fatalf("checkpoint after a resubmission: %d", cp)
	}
	// A JWT is optional; a valid one from anyone (a relay) is accepted, a
	// bad one refused.
	env2 := f.sign(f.alice, rules.TypePublish, publication("question", "Why?", "Why is it slow?", nil), 0)
	b2, _ := json.Marshal(env2)
	relay := hubtest.NewAgent(0x77)
	if r := f.h.Do(http.MethodPost, "/v1/knowledge/events", b2, hubtest.Bearer(relay.Token(t, f.h.Origin(), f.clock.Now(), time.Minute))); r.Status != http.StatusOK {
		t.Fatalf("relayed submission: %d %s", r.Status, r.Body)
	}
	if r := f.h.Do(http.MethodPost, "/v1/knowledge/events", b2, hubtest.Bearer("not-a-jwt")); r.ErrorCode() != identity.CodeInvalidToken {
		t.Fatalf("bad token: %d %s", r.Status, r.Body)
	}
}

// Knowledge submissions are not live writes: old events are replicated,
// two events may carry one nonce, and only a future beyond the skew is
// refused.
func TestSubmitTimeAndNonce(t *testing.T) {
	f := newFixture(t)
	old := f.alice.Sign(t, rules.NewEvent(rules.TypePublish, f.alice.ID, t0.Add(-365*24*time.Hour).UnixMilli(), 5, value(t, publication("observation", "Old", "An old one.", nil))))
	same := f.alice.Sign(t, rules.NewEvent(rules.TypePublish, f.alice.ID, t0.UnixMilli(), 5, value(t, publication("observation", "Same nonce", "Another one.", nil))))
	lower := f.alice.Sign(t, rules.NewEvent(rules.TypePublish, f.alice.ID, t0.UnixMilli(), 1, value(t, publication("observation", "Lower nonce", "A third.", nil))))
	edge := f.sign(f.alice, rules.TypePublish, publication("observation", "Edge", "At the skew.", nil), 5*time.Minute)
	future := f.sign(f.alice, rules.TypePublish, publication("observation", "Future", "Beyond the skew.", nil), 5*time.Minute+time.Millisecond)
	for _, c := range []struct {
		name string
		env  *identity.Envelope
		want string
	}{
		{"a year old", old, "ok"},
		{"the same nonce", same, "ok"},
		{"a lower nonce", lower, "ok"},
		{"300 s ahead", edge, "ok"},
		{"300.001 s ahead", future, identity.CodeTimestampOutOfWindow},
	} {
		_, err := f.kc.Submit(context.Background(), c.env)
		if got := code(err); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if cp := f.checkpoint(); cp != 4 {
		t.Fatalf("checkpoint %d, want 4", cp)
	}
	// The future event becomes acceptable once the clock reaches it.
	f.clock.Advance(time.Second)
	if _, err := f.kc.Submit(context.Background(), future); err != nil {
		t.Fatal(err)
	}
}

// Dependencies resolve against the retained events: missing_dependency
// (409) lists the sorted missing ids; wrong targets are invalid_target
// (400); a refused submission stores nothing.
func TestSubmitDependencies(t *testing.T) {
	f := newFixture(t)
	q := f.publish(f.alice, "question", "Which cache?", "Which cache key is right?", nil)
	h := f.publish(f.alice, "hypothesis", "Language key", "The language belongs in the key.", nil)
	missingA, missingB := digest("a"), digest("b")
	sorted := []string{missingA, missingB}
	slices.Sort(sorted)
	cases := []struct {
		name    string
		a       *hubtest.Agent
		typ     string
		payload obj
		want    string
	}{
		{"addresses a question", f.bob, rules.TypePublish, publication("hypothesis", "Answer", "Use both.", obj{"relations": list{obj{"relation": "addresses", "target": q.ID()}}}), "ok"},
		{"tests a hypothesis", f.bob, rules.TypePublish, publication("observation", "Test", "It holds.", obj{"relations": list{obj{"relation": "tests", "target": h.ID()}}}), "ok"},
		{"addresses a hypothesis", f.bob, rules.TypePublish, publication("hypothesis", "Wrong", "No.", obj{"relations": list{obj{"relation": "addresses", "target": h.ID()}}}), rules.CodeInvalidTarget},
		{"two missing", f.bob, rules.TypePublish, publication("synthesis", "Missing", "Both missing.", obj{"relations": list{obj{"relation": "extends", "target": missingB}, obj{"relation": "extends", "target": missingA}}}), rules.CodeMissingDependency},
		{"supersedes another author", f.bob, rules.TypePublish, publication("hypothesis", "Mine now", "Replace it.", obj{"relations": list{obj{"relation": "supersedes", "target": h.ID()}}}), rules.CodeInvalidTarget},
		{"retracts another author", f.bob, rules.TypeRetract, retraction(q.ID()), rules.CodeInvalidTarget},
		{"assesses", f.bob, rules.TypeAssess, assessment(h.ID(), "supports"), "ok"},
		{"retracts own", f.alice, rules.TypeRetract, retraction(h.ID()), "ok"},
		{"supersedes own", f.alice, rules.TypePublish, publication("hypothesis", "Better", "Corrected.", obj{"relations": list{obj{"relation": "supersedes", "target": h.ID()}}}), "ok"},
	}
	for _, c := range cases {
		before := f.checkpoint()
		env := f.sign(c.a, c.typ, c.payload, 0)
		body, _ := json.Marshal(env)
		r := f.post(body)
		got := r.ErrorCode()
		if got == "" && r.Status == http.StatusOK {
			got = "ok"
		}
		if got != c.want {
			t.Errorf("%s: %d %s, want %s", c.name, r.Status, r.Body, c.want)
			continue
		}
		if c.want != "ok" && f.checkpoint() != before {
			t.Errorf("%s: a refused submission moved the checkpoint", c.name)
		}
		switch c.want {
		case rules.CodeMissingDependency:
			var e struct {
				Error struct {
					Data struct {
						Missing []string `json:"missing"`
					} `json:"data"`
				} `json:"error"`
			}
			r.Decode(t, &e)
			if r.Status != http.StatusConflict || !slices.Equal(e.Error.Data.Missing, sorted) {
				t.Errorf("%s: %d %v, want 409 %v", c.name, r.Status, e.Error.Data.Missing, sorted)
			}
		case rules.CodeInvalidTarget:
			if r.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d", c.name, r.Status)
			}
		}
	}
}

// Bad envelopes are refused with the SDK's codes and store nothing.
func TestSubmitBadInput(t *testing.T) {
	f := newFixture(t)
	good := f.sign(f.alice, rules.TypePublish, publication("observation", "Good", "A good one.", nil), 0)
	goodJSON, _ := json.Marshal(good)
	tampered := strings.Replace(string(goodJSON), "A good one.", "A bad one.", 1)
	var badSig map[string]any
	_ = json.Unmarshal(goodJSON, &badSig)
	sig := []byte(badSig["signature"].(string))
	sig[3] ^= 1
	badSig["signature"] = string(sig)
	badSigJSON, _ := json.Marshal(badSig)
	retractWithLicense := f.alice.SignRaw(t, map[string]any{"protocol": rules.Protocol, "type": rules.TypeRetract, "actor": f.alice.ID,
		"created_at": t0.UnixMilli(), "nonce": 9, "payload": map[string]any{"target": digest("x"), "reason": "r", "license": license}})
	httpLicense := f.sign(f.alice, rules.TypePublish, publication("observation", "HTTP", "Plain HTTP license.", obj{"license": "http://example.com/l"}), 0)
	httpJSON, _ := json.Marshal(httpLicense)
	roomField := f.alice.SignRaw(t, map[string]any{"protocol": rules.Protocol, "type": rules.TypePublish, "actor": f.alice.ID,
		"created_at": t0.UnixMilli(), "nonce": 10, "payload": value(t, publication("observation", "Room", "A room id.", nil)), "room_id": "r1"})
	huge := f.sign(f.alice, rules.TypePublish, publication("observation", "Huge", strings.Repeat("x", rules.DefaultMaxEnvelopeBytes), nil), 0)
	hugeJSON, _ := json.Marshal(huge)
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"not JSON", []byte("{"), identity.CodeInvalidEvent},
		{"duplicate member", []byte(`{"hash":"a","hash":"b"}`), identity.CodeInvalidEvent},
		{"tampered payload", []byte(tampered), identity.CodeInvalidEventHash},
		{"bad signature", badSigJSON, identity.CodeInvalidSignature},
		{"retraction with a license", retractWithLicense, identity.CodeInvalidEvent},
		{"http license", httpJSON, identity.CodeInvalidEvent},
		{"a Discourse field", roomField, identity.CodeInvalidEvent},
		{"envelope over the limit", hugeJSON, identity.CodePayloadTooLarge},
	} {
		if r := f.post(c.body); r.ErrorCode() != c.want {
			t.Errorf("%s: %d %s, want %s", c.name, r.Status, r.Body, c.want)
		}
	}
	if r := f.h.Do(http.MethodPost, "/v1/knowledge/events", goodJSON, http.Header{"Content-Type": {"text/plain"}}); r.Status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", r.Status)
	}
	if cp := f.checkpoint(); cp != 0 {
		t.Fatalf("checkpoint %d after refusals", cp)
	}
}

// Accepted events survive a restart, and seq continues after them.
func TestSubmitDurable(t *testing.T) {
	f := newFixture(t)
	a := f.publish(f.alice, "observation", "Durable", "Kept across restarts.", nil)
	f.h = f.h.Restart()
	f.kc = f.client()
	got, err := f.kc.Event(context.Background(), a.ID())
	if err != nil || got.Seq != a.Seq || got.AcceptedAt != a.AcceptedAt {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	if b := f.publish(f.bob, "observation", "Next", "After the restart.", nil); b.Seq != a.Seq+1 {
		t.Fatalf("seq after restart %d", b.Seq)
	}
}
