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

// TestValidatorSDKCases: PROTOCOL-0.12 §3.1 (D-25) — the 0.12.6 schema and
// the URL host rule give the SDK's verdicts.
func TestValidatorSDKCases(t *testing.T) {
	v, err := NewValidator(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	const actor = "did:agent:_RckOFqgx1tk-3jNYC-h2ZH96_drE8WO1wLqyDXp9hg"
	base := `"id":"` + actor + `","name":"n"`
	hint := func(id, principal string) string {
		return `,"delegations":[{` + id + `"principal":` + principal + `}]`
	}
	for _, c := range []struct {
		name, fragment string
		valid          bool
	}{
		{"avatar_url without a host", `,"avatar_url":"https://"`, false},
		{"avatar_url with a host", `,"avatar_url":"https://cdn.example/a.png"`, true},
		{"avatar_url with only a port", `,"avatar_url":"https://:8443/a.png"`, false},
		{"avatar_url with only user info", `,"avatar_url":"https://user@/a.png"`, false},
		{"endpoint url without a host", `,"service_endpoints":[{"type":"mcp","url":"https://"}]`, false},
		{"endpoint url with a host", `,"service_endpoints":[{"type":"mcp","url":"https://api.example/mcp"}]`, true},
		{"link url without a host", `,"links":[{"name":"home","url":"http://","rel":"home"}]`, false},
		{"link url over http", `,"links":[{"name":"home","url":"http://x.example","rel":"home"}]`, true},
		{"link url over ftp", `,"links":[{"name":"home","url":"ftp://x.example","rel":"home"}]`, false},
		{"delegation id .", hint(`"id":".",`, `{"id":"https://org.example"}`), false},
		{"delegation id ..", hint(`"id":"..",`, `{"id":"https://org.example"}`), false},
		{"delegation id ...", hint(`"id":"...",`, `{"id":"https://org.example"}`), true},
		{"principal id without a host", hint(``, `{"id":"https://"}`), false},
		{"principal with an extra member", hint(``, `{"id":"https://org.example","logo":"x"}`), true},
		{"top-level username", `,"username":"alice"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := v.Validate(parse(t, `{`+base+c.fragment+`}`), actor)
			if c.valid {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if e := hubhttp.AsError(err); err == nil || e.Code != identity.CodeInvalidEvent {
				t.Fatalf("err = %v, want invalid_event", err)
			}
		})
	}
}

func TestURLHasHost(t *testing.T) {
	for s, want := range map[string]bool{
		"https://a.example": true, "https://a.example:8443/x?y#z": true, "https://u:p@a.example/": true,
		"https:///a.example/x": true, // WHATWG skips the extra slash
		"https://[::1]:8443":   true, "https://": false, "https://:1": false, "https://u@": false,
		"https://[]": false, "http://a.example": false, "https:a.example": true,
	} {
		if got := urlHasHost(s, "https"); got != want {
			t.Errorf("urlHasHost(%q) = %v, want %v", s, got, want)
		}
	}
}
