package profile_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/profile"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
)

// withSecondHost adds h2 as a configured host and profile service.
func withSecondHost(h2 *hubtest.Hub) agentOpt {
	return func(o *connector.Options) {
		o.Config.Hosts = append(o.Config.Hosts, config.Host{URL: h2.Origin(), Label: "hub2", CAFile: h2.CAFile()})
		o.Config.Identities[0].ProfileServices = append(o.Config.Identities[0].ProfileServices, h2.Origin())
	}
}

func publish(t *testing.T, a *agent, svc, name string) {
	t.Helper()
	must[*profile.ProfileUpdateResult](t, "agent_protocols_profile_update")(a.ProfileUpdate(ctx, a.sess,
		profile.ProfileUpdateInput{ProfileService: svc, Profile: map[string]any{"name": name}}))
}

func profileNames(r *profile.ProfilesGetResult) []string {
	var out []string
	for _, raw := range r.Profiles {
		var d struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &d)
		out = append(out, d.Name)
	}
	return out
}

// A profile is pinned to the greatest nonce seen for its Agent ID, across
// services and restarts: once the newer profile from one service is
// verified, the older one another service still serves is refused with
// stale_profile, and the pin stays, also after a restart.
func TestProfilesGetPinsAcrossServicesAndRestarts(t *testing.T) {
	t.Parallel()
	h1, h2 := startHub(t), startHub(t)
	alice := newAgent(t, h1, 0xA1, "", withSecondHost(h2))
	bob := newAgent(t, h1, 0xB2, "", withSecondHost(h2))
	publish(t, alice, h1.Origin(), "Alice, old")
	publish(t, alice, h2.Origin(), "Alice, new") // a greater nonce: the latest

	got := must[*profile.ProfilesGetResult](t, "agent_protocols_profiles_get")(bob.ProfilesGet(ctx, bob.sess,
		profile.ProfilesGetInput{ProfileService: h2.Origin(), IDs: []string{alice.id}}))
	if names := profileNames(got); len(names) != 1 || names[0] != "Alice, new" || got.ProfileService != h2.Origin() {
		t.Fatalf("from the newer service: %+v", got)
	}
	pinned, err := bob.Store.Read().Profile(ctx, alice.id)
	if err != nil || !strings.Contains(string(pinned.Document), "Alice, new") {
		t.Fatalf("pin %v, %v", pinned, err)
	}
	stale := func(b *agent) {
		t.Helper()
		_, err := b.ProfilesGet(ctx, b.sess, profile.ProfilesGetInput{ProfileService: h1.Origin(), IDs: []string{alice.id}})
		var ce *engine.Error
		if !asErr(err, &ce) || ce.Code != profile.CodeStaleProfile || ce.Data["pinned_nonce"] == nil || ce.Data["served_nonce"] == nil {
			t.Fatalf("the older service's profile: %v, want stale_profile with both nonces", err)
		}
		p, err := b.Store.Read().Profile(ctx, alice.id)
		if err != nil || p.Nonce != pinned.Nonce || p.EventID != pinned.EventID {
			t.Fatalf("the pin moved: %+v, %v", p, err)
		}
	}
	stale(bob)
	bob = bob.reopen(withSecondHost(h2))
	stale(bob)
	// The newer service still answers, from the pin.
	again := must[*profile.ProfilesGetResult](t, "agent_protocols_profiles_get")(bob.ProfilesGet(ctx, bob.sess,
		profile.ProfilesGetInput{ProfileService: h2.Origin(), IDs: []string{alice.id}}))
	if names := profileNames(again); len(names) != 1 || names[0] != "Alice, new" {
		t.Fatalf("after the restart: %+v", again)
	}
	// History reads never move the pin, whatever they show.
	hist := must[*profile.ProfileHistoryResult](t, "agent_protocols_profile_history")(bob.ProfileHistory(ctx, bob.sess,
		profile.ProfileHistoryInput{ProfileService: h1.Origin(), AgentID: alice.id}))
	if len(hist.Envelopes) != 1 {
		t.Fatalf("history on the older service: %+v", hist)
	}
	if p, _ := bob.Store.Read().Profile(ctx, alice.id); p.EventID != pinned.EventID {
		t.Fatal("a history read moved the pin")
	}
}

// profiles_get batches: one POST for every Agent ID, verified envelopes
// only for those whose pin is not current, unknown IDs in missing.
func TestProfilesGetBatches(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	p := newProxy(t, h)
	var mu sync.Mutex
	paths := map[string]int{}
	p.Rewrite = func(path string, body []byte) []byte {
		mu.Lock()
		paths[path]++
		mu.Unlock()
		return body
	}
	reader := newAgent(t, h, 0xB2, "", withHTTP(p.Client))
	var ids []string
	for i := byte(0); i < 5; i++ {
		a := newAgent(t, h, 0x10+i, "")
		publish(t, a, h.Origin(), "Agent "+string(rune('A'+i)))
		ids = append(ids, a.id)
	}
	nobody := hubtest.NewAgent(0x77).Signer.AgentID()
	in := profile.ProfilesGetInput{IDs: append(append([]string{}, ids...), nobody)}
	got := must[*profile.ProfilesGetResult](t, "agent_protocols_profiles_get")(reader.ProfilesGet(ctx, reader.sess, in))
	if len(got.Profiles) != 5 || len(got.Missing) != 1 || got.Missing[0] != nobody || got.ProfileService != h.Origin() {
		t.Fatalf("batch: %+v", got)
	}
	// Fetched concurrently, answered in the order asked.
	for i, doc := range got.Profiles {
		var d struct{ ID string }
		if err := json.Unmarshal(doc, &d); err != nil || d.ID != ids[i] {
			t.Fatalf("profile %d is %q (%v), want %s", i, d.ID, err, ids[i])
		}
	}
	count := func() (batch, history int) {
		mu.Lock()
		defer mu.Unlock()
		for path, n := range paths {
			switch {
			case strings.HasSuffix(path, "/profiles/batch"):
				batch += n
			case strings.HasSuffix(path, "/events"):
				history += n
			}
		}
		return
	}
	if b, hh := count(); b != 1 || hh != 5 {
		t.Fatalf("first read: %d batch and %d history requests, want 1 and 5", b, hh)
	}
	// Pinned and unchanged: one batch request, no envelope read again.
	must[*profile.ProfilesGetResult](t, "agent_protocols_profiles_get")(reader.ProfilesGet(ctx, reader.sess, in))
	if b, hh := count(); b != 2 || hh != 5 {
		t.Fatalf("second read: %d batch and %d history requests, want 2 and 5", b, hh)
	}
	if _, err := reader.ProfilesGet(ctx, reader.sess, profile.ProfilesGetInput{IDs: []string{"did:agent:nope"}}); code(err) != engine.CodeInvalidInput {
		t.Fatalf("an invalid id: %v", err)
	}
}

// Every envelope of a profile history page is verified: a flipped
// signature byte fails the call.
func TestProfileHistoryVerifiesEveryEnvelope(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	publish(t, alice, h.Origin(), "v1")
	publish(t, alice, h.Origin(), "v2")
	p := newProxy(t, h)
	reader := newAgent(t, h, 0xB2, "", withHTTP(p.Client))
	page := must[*profile.ProfileHistoryResult](t, "agent_protocols_profile_history")(reader.ProfileHistory(ctx, reader.sess,
		profile.ProfileHistoryInput{AgentID: alice.id, Limit: 1}))
	if len(page.Envelopes) != 1 || page.NextCursor == "" || page.Envelopes[0].Event.Nonce == 0 {
		t.Fatalf("page 1: %+v", page)
	}
	next := must[*profile.ProfileHistoryResult](t, "agent_protocols_profile_history")(reader.ProfileHistory(ctx, reader.sess,
		profile.ProfileHistoryInput{AgentID: alice.id, Limit: 1, Cursor: page.NextCursor}))
	if len(next.Envelopes) != 1 || next.Envelopes[0].Event.Nonce >= page.Envelopes[0].Event.Nonce {
		t.Fatalf("page 2: %+v", next)
	}
	p.Lock()
	p.Rewrite = func(path string, body []byte) []byte {
		if !strings.HasSuffix(path, "/events") || !strings.Contains(path, "/profiles/") {
			return body
		}
		var doc map[string]any
		_ = json.Unmarshal(body, &doc)
		env := doc["result"].([]any)[0].(map[string]any)
		sig := []byte(env["signature"].(string))
		if sig[5] == 'A' {
			sig[5] = 'B'
		} else {
			sig[5] = 'A'
		}
		env["signature"] = string(sig)
		out, _ := json.Marshal(doc)
		return out
	}
	p.Unlock()
	_, err := reader.ProfileHistory(ctx, reader.sess, profile.ProfileHistoryInput{AgentID: alice.id})
	if c := code(err); c == "" || c == engine.CodeInternal {
		t.Fatalf("a tampered envelope: %v, want a verification error", err)
	}
}
