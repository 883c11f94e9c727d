package profile

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"apconnect/host/hub/hubhttp"
	"apconnect/host/identity"
)

func parse(t *testing.T, s string) any {
	t.Helper()
	v, err := identity.ParseStrict([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidatorReportsSortedViolations(t *testing.T) {
	v, err := NewValidator(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	const actor = "did:agent:_RckOFqgx1tk-3jNYC-h2ZH96_drE8WO1wLqyDXp9hg"
	err = v.Validate(parse(t, `{"name":"","links":[{"name":"a","url":"javascript:x","rel":"h","icon":1}]}`), actor)
	e := hubhttp.AsError(err)
	if e.Code != identity.CodeInvalidEvent || e.Data["pointer"] != "/event/payload" {
		t.Fatalf("%+v", e)
	}
	vs := e.Data["violations"].([]SchemaViolation)
	if len(vs) != 4 {
		t.Fatalf("violations %+v", vs)
	}
	for i := 1; i < len(vs); i++ {
		if vs[i-1].Pointer > vs[i].Pointer {
			t.Fatalf("unsorted %+v", vs)
		}
	}
	// A payload that passes: the actor check comes after the schema.
	err = v.Validate(parse(t, `{"id":"did:agent:Q6cucUQBdi32a2jCbfvfJoKq7J8kdOykYT5CSg-6_Tw","name":"x"}`), actor)
	if e := hubhttp.AsError(err); e.Code != identity.CodeInvalidActor {
		t.Fatalf("%+v", e)
	}
	// An avatar that matches the pattern but is not a URI.
	err = v.Validate(parse(t, `{"id":"`+actor+`","name":"x","avatar_url":"https://[::1"}`), actor)
	if e := hubhttp.AsError(err); e.Code != identity.CodeInvalidEvent || !strings.Contains(e.Message, "avatar_url") {
		t.Fatalf("%+v", e)
	}
}

func TestMaterializeKeepsPayloadAsSigned(t *testing.T) {
	seed := make([]byte, 32)
	s := identity.NewKeySigner(ed25519.NewKeyFromSeed(seed))
	env, err := identity.SignEvent(s, identity.Event{
		Protocol: Protocol, Type: UpdateType, Actor: s.AgentID(), CreatedAt: 5, Nonce: 1,
		Payload: parse(t, `{"id":"`+s.AgentID()+`","name":"n","links":[],"extra":{"a":{"b":[1,2]}}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Materialize(env)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event_id":"` + env.Hash + `","extra":{"a":{"b":[1,2]}},"id":"` + s.AgentID() + `","links":[],"name":"n","updated_at":5}`
	if string(doc) != want {
		t.Fatalf("document\n got %s\nwant %s", doc, want)
	}
}
