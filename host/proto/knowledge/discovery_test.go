package knowledge

import "testing"

func TestNewDiscoveryValidates(t *testing.T) {
	for _, modes := range [][]string{nil, {ModeLexical}, {ModeLexical, ModeSemantic}} {
		d := NewDiscovery(service, modes...)
		got, err := ValidateDiscovery(val(t, d.Value()), service)
		if err != nil {
			t.Fatalf("modes %v: %v", modes, err)
		}
		search, err := got.Endpoint(EndpointSearch)
		if len(modes) == 0 {
			if code(err) != CodeUnsupportedSearchMode || got.RankedSearch() {
				t.Fatalf("no search: %q %v", search, err)
			}
		} else if err != nil || search != service+"/v1/knowledge/search" {
			t.Fatalf("search endpoint %q %v", search, err)
		}
	}
	d, _ := ValidateDiscovery(val(t, m{"protocol": Protocol, "service": service}), service)
	if u, err := d.Endpoint(EndpointEvents); err != nil || u != service+"/v1/knowledge/events" {
		t.Fatalf("default endpoint %q %v", u, err)
	}
}

func TestValidateDiscoveryRefusals(t *testing.T) {
	base := func(extra m) m {
		d := m{"protocol": Protocol, "service": service}
		for k, v := range extra {
			d[k] = v
		}
		return d
	}
	search := m{"search": service + "/s"}
	tests := []struct {
		name   string
		doc    m
		origin string
	}{
		{"other service", base(m{"service": "https://other.example"}), service},
		{"service with a slash", base(m{"service": service + "/"}), service},
		{"non-canonical origin", base(m{"service": "https://Knowledge.example"}), "https://Knowledge.example"},
		{"wrong protocol", base(m{"protocol": "agent-knowledge/2.0"}), service},
		{"ranked search without lexical", base(m{"features": a{FeatureRankedSearch}, "endpoints": search, "search_modes": a{ModeSemantic}}), service},
		{"ranked search without endpoint", base(m{"features": a{FeatureRankedSearch}, "search_modes": a{ModeLexical}}), service},
		{"search endpoint without the feature", base(m{"endpoints": search}), service},
		{"modes without the feature", base(m{"search_modes": a{ModeLexical}}), service},
		{"cross-origin endpoint", base(m{"endpoints": m{"events": "https://other.example/e"}}), service},
		{"endpoint with a query", base(m{"endpoints": m{"events": service + "/e?x"}}), service},
		{"endpoint with a percent host", base(m{"endpoints": m{"events": "https://%6Bnowledge.example/e"}}), service},
		{"self peer", base(m{"peers": a{service}}), service},
		{"peer with a path", base(m{"peers": a{"https://p.example/"}}), service},
		{"limit zero", base(m{"limits": m{"x": 0}}), service},
	}
	for _, tc := range tests {
		if _, err := ValidateDiscovery(val(t, tc.doc), tc.origin); code(err) != CodeInvalidDiscovery {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
	ok := base(m{"endpoints": m{"events": "https://KNOWLEDGE.example:443/e", "mirror": service + "/m"}, "peers": a{"https://p.example:8443"}, "x": 1})
	if _, err := ValidateDiscovery(val(t, ok), service); err != nil {
		t.Errorf("accepted forms: %v", err)
	}
}
