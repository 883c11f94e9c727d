package knowledge

import "testing"

func TestValidHTTPSURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://example.com", true},
		{"https://example.com/a/b?c=d&e#f", true},
		{"https://EXAMPLE.com:8443/x", true},
		{"https://example.com:/x", true},
		{"https://example.com:0443/", true},
		{"https://127.0.0.1/", true},
		{"https://0x7f.1/", true},
		{"https://[::1]:8443/", true},
		{"https://[::ffff:1.2.3.4]/", true},
		{"https://%41.example/", true},
		{"https://a..b/", true},
		{"https://example.com/~u/%20x;p=1,2!$&'()*+@:", true},
		{"https://example.com?q=/?#/?", true},
		{"http://example.com", false},
		{"HTTPS://example.com", false},
		{"https:/example.com", false},
		{"https://", false},
		{"https:///x", false},
		{"https://u@example.com", false},
		{"https://:443/", false},
		{"https://example.com:65536/", false},
		{"https://example.com:8a/", false},
		{"https://exa mple.com", false},
		{"https://example.com/\tx", false},
		{"https://example.com\\x", false},
		{"https://example.com/café", false},
		{"https://example.com/a\x7fb", false},
		{"https://example.com/<x>", false},
		{"https://example.com/[x]", false},
		{"https://example.com/%zz", false},
		{"https://example.com/%4", false},
		{"https://example.com/#a#b", false},
		{"https://ex^ample.com/", false},
		{"https://a%2Fb.example/", false},
		{"https://a%C3%A9.example/", false},
		{"https://[fe80::1%25eth0]/", false},
		{"https://[v1.x]/", false},
		{"https://[1.2.3.4]/", false},
		{"https://[::1/", false},
		{"https://[::1]x/", false},
		{"https://1.2.3.999/", false},
		{"https://1.2.3.4.5/", false},
		{"https://08/", false},
		{"https://1..2/", false},
	}
	for _, tc := range tests {
		if got := ValidHTTPSURL(tc.url); got != tc.ok {
			t.Errorf("ValidHTTPSURL(%q) = %v, want %v", tc.url, got, tc.ok)
		}
	}
}

func TestEndpointOrigin(t *testing.T) {
	tests := []struct {
		url, origin string
		ok          bool
	}{
		{"https://Hub.Example/v1/x", "https://hub.example", true},
		{"https://hub.example:443/x", "https://hub.example", true},
		{"https://hub.example:/x", "https://hub.example", true},
		{"https://hub.example:08443/x", "https://hub.example:8443", true},
		{"https://[2001:db8:0:0:0:0:0:1]/x", "https://[2001:db8::1]", true},
		{"https://[::ffff:1.2.3.4]/x", "https://[::ffff:102:304]", true},
		{"https://hub.example/café", "https://hub.example", true},
		{"https://%68ub.example/x", "", false},
		{"https://hub.example/a b", "", false},
		{"http://hub.example/x", "", false},
	}
	for _, tc := range tests {
		got, ok := endpointOrigin(tc.url)
		if ok != tc.ok || got != tc.origin {
			t.Errorf("endpointOrigin(%q) = %q, %v; want %q, %v", tc.url, got, ok, tc.origin, tc.ok)
		}
	}
}
