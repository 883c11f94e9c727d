package profile

import (
	"strings"
	"testing"

	"apconnect/host/identity"
)

const vectorActor = "did:agent:_RckOFqgx1tk-3jNYC-h2ZH96_drE8WO1wLqyDXp9hg"

func TestValidatorReportsSortedViolations(t *testing.T) {
	v, err := NewValidator(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(parse(t, `{"name":"","links":[{"name":"a","url":"javascript:x","rel":"h","icon":1}]}`), vectorActor)
	e := asError(t, err)
	if e.Code != CodeInvalidEvent || !strings.HasPrefix(e.Pointer, "/event/payload") {
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
	if e.Pointer != "/event/payload"+vs[0].Pointer {
		t.Fatalf("pointer %q is not the first violation's %q", e.Pointer, vs[0].Pointer)
	}
	// A payload that passes: the actor check comes after the schema.
	err = v.Validate(parse(t, `{"id":"did:agent:Q6cucUQBdi32a2jCbfvfJoKq7J8kdOykYT5CSg-6_Tw","name":"x"}`), vectorActor)
	if e := asError(t, err); e.Code != CodeInvalidActor || e.Pointer != "/event/payload/id" {
		t.Fatalf("%+v", e)
	}
	// An avatar that matches the pattern but is not a URI.
	err = v.Validate(parse(t, `{"id":"`+vectorActor+`","name":"x","avatar_url":"https://[::1"}`), vectorActor)
	if e := asError(t, err); e.Code != CodeInvalidEvent || !strings.Contains(e.Message, "avatar_url") {
		t.Fatalf("%+v", e)
	}
}

// TestValidatorSDKCases: PROTOCOL-0.12 §3.1 (D-25) — the 0.12.6 schema and
// the URL host rule give the SDK's verdicts.
func TestValidatorSDKCases(t *testing.T) {
	v, err := NewValidator(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	base := `"id":"` + vectorActor + `","name":"n"`
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
			err := v.Validate(parse(t, `{`+base+c.fragment+`}`), vectorActor)
			if c.valid {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || asError(t, err).Code != CodeInvalidEvent {
				t.Fatalf("err = %v, want invalid_event", err)
			}
		})
	}
}

// Each limit is enforced at its value (one over is payload_too_large with
// the limit as data, the value itself passes), and zero limits default.
func TestValidatorLimits(t *testing.T) {
	l := Limits{NameChars: 3, DescriptionChars: 4, Capabilities: 1, ServiceEndpoints: 1, Links: 1, Delegations: 1, ExtraBytes: 9}
	v, err := NewValidator(l)
	if err != nil {
		t.Fatal(err)
	}
	ep := func(host string) string { return `{"type":"mcp","url":"https://` + host + `.example"}` }
	link := func(rel string) string { return `{"name":"n","url":"https://x.example","rel":"` + rel + `"}` }
	del := `{"principal":{"id":"https://org.example"}}`
	for _, c := range []struct {
		field, ok, over string
		limit           int
	}{
		{"name", `"name":"abc"`, `"name":"abcé"`, 3},
		{"description", `"description":"abcd"`, `"description":"abcdé"`, 4},
		{"capabilities", `"capabilities":["a"]`, `"capabilities":["a","b"]`, 1},
		{"service_endpoints", `"service_endpoints":[` + ep("a") + `]`, `"service_endpoints":[` + ep("a") + `,` + ep("b") + `]`, 1},
		{"links", `"links":[` + link("a") + `]`, `"links":[` + link("a") + `,` + link("b") + `]`, 1},
		{"delegations", `"delegations":[` + del + `]`, `"delegations":[` + del + `,` + del + `]`, 1},
		{"extra", `"extra":{"a":"b"}`, `"extra":{"a":"bc"}`, 9},
	} {
		t.Run(c.field, func(t *testing.T) {
			payload := func(field string) string {
				s := `{"id":"` + vectorActor + `",` + field
				if c.field != "name" {
					s += `,"name":"n"`
				}
				return s + `}`
			}
			if err := v.Validate(parse(t, payload(c.ok)), vectorActor); err != nil {
				t.Fatalf("at the limit: %v", err)
			}
			e := asError(t, v.Validate(parse(t, payload(c.over)), vectorActor))
			if e.Code != CodePayloadTooLarge || e.Pointer != "/event/payload/"+c.field || e.Data["limit"] != c.limit {
				t.Fatalf("over the limit: %+v", e)
			}
		})
	}
	if d, _ := NewValidator(Limits{}); d.Limits() != DefaultLimits() {
		t.Fatalf("zero limits became %+v", d.Limits())
	}
}

func TestCheckEvent(t *testing.T) {
	v, err := NewValidator(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	payload := parse(t, `{"id":"`+vectorActor+`","name":"n"}`)
	for _, c := range []struct {
		protocol, typ, pointer string
	}{
		{Protocol, TypeUpdate, ""},
		{"agent-discourse/1.0", TypeUpdate, "/event/protocol"},
		{Protocol, "profile.delete", "/event/type"},
	} {
		ev := &identity.Event{Protocol: c.protocol, Type: c.typ, Actor: vectorActor, Payload: payload}
		for name, err := range map[string]error{"CheckEvent": CheckEvent(ev), "ValidateEvent": v.ValidateEvent(ev)} {
			if c.pointer == "" {
				if err != nil {
					t.Errorf("%s(%s %s): %v", name, c.protocol, c.typ, err)
				}
				continue
			}
			if e := asError(t, err); e.Code != CodeInvalidEvent || e.Pointer != c.pointer {
				t.Errorf("%s(%s %s) = %+v, want invalid_event at %s", name, c.protocol, c.typ, e, c.pointer)
			}
		}
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

func TestPayloadFields(t *testing.T) {
	fields := PayloadFields()
	if len(fields) != 10 || fields[0] != "id" || fields[9] != "extra" {
		t.Fatalf("fields %v", fields)
	}
	fields[0] = "changed"
	if !IsPayloadField("id") || IsPayloadField("changed") || IsPayloadField(FieldUpdatedAt) || IsPayloadField(FieldEventID) {
		t.Fatal("PayloadFields shares its list, or IsPayloadField is wrong")
	}
	// The list is the schema's: profileUpdatePayload names exactly these.
	s, err := Schema("profileUpdatePayload")
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"id": vectorActor, "name": "n"}
	for _, f := range PayloadFields()[2:] {
		obj[f] = nil // a wrong type: the schema refuses the value, not the member
	}
	if err := s.Validate(obj); err == nil || strings.Contains(err.Error(), "additional") {
		t.Fatalf("the schema does not know every payload field: %v", err)
	}
	obj["username"] = "x" // and it refuses one more
	if err := s.Validate(obj); err == nil || !strings.Contains(err.Error(), "additional properties 'username'") {
		t.Fatalf("the schema took a member outside the list: %v", err)
	}
}
