package delegation

import (
	"encoding/json"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// docJSON is a valid principal document with one member replaced (or
// removed, for a nil value) by path.
func docJSON(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	m := testDocument().Value()
	m["aliases"] = []any{"https://example.com/alias"}
	m["retired_controllers"] = []any{map[string]any{"id": other.AgentID(), "source": "local", "valid_from": 100,
		"retired_at": 500, "invalid_from": 300}}
	if edit != nil {
		edit(m)
	}
	data, err := identity.Canonicalize(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func controllerAt(m map[string]any, i int) map[string]any {
	return m["controllers"].([]any)[i].(map[string]any)
}

// TestPrincipalDocumentRules covers the SDK 0.12.6 rules the ported
// vectors do not reach.
func TestPrincipalDocumentRules(t *testing.T) {
	cases := []struct {
		name string
		edit func(m map[string]any)
		ok   bool
	}{
		{"base", nil, true},
		{"delegation_service with a path", func(m map[string]any) { m["delegation_service"] = "https://example.com/v1" }, false},
		{"delegation_service empty", func(m map[string]any) { m["delegation_service"] = "" }, false},
		{"delegation_service non-default port", func(m map[string]any) { m["delegation_service"] = "https://example.com:8443" }, true},
		{"only a retired key delegates, no delegation_service", func(m map[string]any) {
			delete(m, "delegation_service")
			m["controllers"] = []any{}
			m["retired_controllers"] = []any{map[string]any{"id": other.AgentID(), "source": "local", "valid_from": 100,
				"retired_at": 500, "delegation": "*"}}
		}, false},
		{"signing-only keys need no delegation_service", func(m map[string]any) {
			delete(m, "delegation_service")
			m["controllers"] = []any{map[string]any{"id": root.AgentID(), "source": "local", "valid_from": 100}}
		}, true},
		{"Agent ID audience in a ceiling", func(m map[string]any) {
			controllerAt(m, 0)["delegation"] = map[string]any{"scopes": []any{"draft"}, "audiences": []any{other.AgentID()}}
		}, true},
		{"bad Agent ID audience in a ceiling", func(m map[string]any) {
			controllerAt(m, 0)["delegation"] = map[string]any{"scopes": []any{"draft"}, "audiences": []any{"did:agent:short"}}
		}, false},
		{"blank scope", func(m map[string]any) {
			controllerAt(m, 0)["delegation"] = map[string]any{"scopes": []any{" "}, "audiences": []any{testOrigin}}
		}, false},
		{"http id", func(m map[string]any) { m["id"] = "http://example.com/p" }, false},
		{"id without host", func(m map[string]any) { m["id"] = "https://" }, false},
		{"id with a bad port", func(m map[string]any) { m["id"] = "https://example.com:65536/p" }, false},
		{"http alias", func(m map[string]any) { m["aliases"] = []any{"http://example.com/a"} }, false},
		{"duplicate aliases", func(m map[string]any) { m["aliases"] = []any{"https://a.test/x", "https://a.test/x"} }, false},
		{"empty aliases", func(m map[string]any) { m["aliases"] = []any{} }, true},
		{"http avatar", func(m map[string]any) { m["avatar_url"] = "http://example.com/a.png" }, false},
		{"retired_at after updated_at", func(m map[string]any) {
			m["retired_controllers"].([]any)[0].(map[string]any)["retired_at"] = 2001
		}, false},
		{"invalid_from before valid_from", func(m map[string]any) {
			m["retired_controllers"].([]any)[0].(map[string]any)["invalid_from"] = 99
		}, false},
		{"blank controller name", func(m map[string]any) { controllerAt(m, 0)["name"] = "  " }, false},
		{"empty controller name", func(m map[string]any) { controllerAt(m, 0)["name"] = "" }, false},
		{"null retired_at on a current key", func(m map[string]any) { controllerAt(m, 0)["retired_at"] = nil }, false},
		{"unknown controller member ignored", func(m map[string]any) { controllerAt(m, 0)["supersedes"] = []any{other.AgentID()} }, true},
		{"unknown document member ignored", func(m map[string]any) { m["delegation_query_url"] = "https://example.com/q" }, true},
		{"display name not a string", func(m map[string]any) { m["name"] = 5 }, false},
		{"links", func(m map[string]any) {
			m["links"] = []any{map[string]any{"name": "home", "url": "https://example.com", "rel": "home"}}
		}, true},
		{"link without rel", func(m map[string]any) { m["links"] = []any{map[string]any{"name": "home", "url": "x"}} }, false},
		{"extra not an object", func(m map[string]any) { m["extra"] = "x" }, false},
		{"controllers missing", func(m map[string]any) { delete(m, "controllers") }, false},
		{"updated_at float", func(m map[string]any) { m["updated_at"] = json.Number("2000.5") }, false},
	}
	for _, c := range cases {
		_, err := ParsePrincipalDocument(docJSON(t, c.edit))
		if (err == nil) != c.ok {
			t.Errorf("%s: ok=%v, got %v", c.name, c.ok, err)
		}
		if err != nil && ErrorCode(err) != CodePrincipalUnresolvable {
			t.Errorf("%s: code %s", c.name, ErrorCode(err))
		}
	}
}

func TestPrincipalResolutionAndAliases(t *testing.T) {
	doc, err := ParsePrincipalDocument(docJSON(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPrincipalResolution(doc, testPrincipal); err != nil {
		t.Error(err)
	}
	for _, u := range []string{"https://impostor.example.com/p", "https://example.com/alias", "https://EXAMPLE.com/p", testPrincipal + "/"} {
		if got := code(CheckPrincipalResolution(doc, u)); got != CodePrincipalUnresolvable {
			t.Errorf("served at %s: %s", u, got)
		}
	}
	if !doc.IsAlias("https://example.com/alias") || doc.IsAlias("https://impostor.example.com/p") {
		t.Error("IsAlias")
	}
	var raw any
	_ = json.Unmarshal(docJSON(t, nil), &raw)
	if id, ok := PrincipalID(raw); !ok || id != testPrincipal {
		t.Errorf("PrincipalID = %q %v", id, ok)
	}
	if _, ok := PrincipalID([]any{}); ok {
		t.Error("PrincipalID of an array")
	}
	if c := doc.FindController(other.AgentID(), false); c != nil {
		t.Error("a retired key found as current")
	}
	if c := doc.FindController(other.AgentID(), true); c == nil || c.BoundAt(300) || !c.BoundAt(299) || c.BoundAt(99) {
		t.Errorf("retired key interval: %+v", c)
	}
}

func TestValidateControllerDirectly(t *testing.T) {
	ok := Controller{ID: root.AgentID(), Source: "local", ValidFrom: 1, Delegation: &Authority{Unrestricted: true}}
	if err := ValidateController(&ok, false); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Delegation = &Authority{Unrestricted: true, Scopes: []string{"x"}}
	if err := ValidateController(&bad, false); err == nil || !strings.Contains(err.Error(), "/delegation") {
		t.Errorf("unrestricted with a scope list: %v", err)
	}
	if err := ValidateController(&ok, true); code(err) != CodePrincipalUnresolvable {
		t.Errorf("retired without retired_at: %v", err)
	}
}
