package delegation

import (
	"encoding/json"
	"testing"

	"apconnect/host/identity"
)

func TestDiscovery(t *testing.T) {
	d := NewDiscovery("https://hub.example:8443", "grants", "revocations", "event-history")
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"endpoints":{"delegations":"https://hub.example:8443/v1/delegations","query":"https://hub.example:8443/v1/delegations/query"},` +
		`"features":["grants","revocations","event-history"],"protocol":"agent-delegation/1.0","service":"https://hub.example:8443"}`
	if string(data) != want {
		t.Fatalf("discovery\n got %s\nwant %s", data, want)
	}
	v, _ := identity.ParseStrict(data)
	back, err := DiscoveryFromValue(v)
	if err != nil || back.Endpoints != d.Endpoints {
		t.Fatalf("parse back: %+v %v", back, err)
	}
	cases := []struct {
		name string
		body string
		ok   bool
		want Endpoints
	}{
		{"no endpoints named", `{"protocol":"agent-delegation/1.0","service":"https://s.test","endpoints":{}}`, true,
			Endpoints{"https://s.test/v1/delegations", "https://s.test/v1/delegations/query"}},
		{"delegations only", `{"protocol":"agent-delegation/1.0","service":"https://s.test","endpoints":{"delegations":"https://api.s.test/d/"}}`, true,
			Endpoints{"https://api.s.test/d", "https://api.s.test/d/query"}},
		{"query only", `{"protocol":"agent-delegation/1.0","service":"https://s.test","endpoints":{"query":"https://s.test/q"}}`, true,
			Endpoints{"https://s.test/v1/delegations", "https://s.test/q"}},
		{"other protocol", `{"protocol":"agent-profile/1.0","service":"https://s.test","endpoints":{}}`, false, Endpoints{}},
		{"http endpoint", `{"protocol":"agent-delegation/1.0","service":"https://s.test","endpoints":{"query":"http://s.test/q"}}`, false, Endpoints{}},
		{"service not an origin", `{"protocol":"agent-delegation/1.0","service":"https://s.test/","endpoints":{}}`, false, Endpoints{}},
		{"no endpoints object", `{"protocol":"agent-delegation/1.0","service":"https://s.test"}`, false, Endpoints{}},
	}
	for _, c := range cases {
		v, err := identity.ParseStrict([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		d, err := DiscoveryFromValue(v)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err == nil {
			if got := ResolveEndpoints("https://s.test", d); got != c.want {
				t.Errorf("%s: %+v", c.name, got)
			}
		}
	}
	if got := ResolveEndpoints("https://s.test/", nil); got != (Endpoints{"https://s.test/v1/delegations", "https://s.test/v1/delegations/query"}) {
		t.Errorf("defaults: %+v", got)
	}
	if u, err := EventsURL("https://s.test/v1/delegations/", "del_1", "a b&c"); err != nil || u != "https://s.test/v1/delegations/del_1/events?cursor=a+b%26c" {
		t.Errorf("EventsURL: %s %v", u, err)
	}
	if _, err := CredentialURL("https://s.test/v1/delegations", ".."); code(err) != CodeInvalidRequest {
		t.Errorf("dot segment id in a URL: %v", err)
	}
}
