package identity

import (
	"net/netip"
	"testing"
)

func TestValidOriginIPv6Serialization(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"https://[2001:db8::1]", true},
		{"https://[2001:db8:0:0:1:0:0:1]", false}, // the first longest run is compressed
		{"https://[2001:db8::1:0:0:1]", true},
		{"https://[0:0:1::]", true},          // the longer run wins
		{"https://[::1:0:0:0:0:0:0]", false}, // that is 0:1::
		{"https://[1::]", true},
		{"https://[1:0:0:0:0:0:0:0]", false},
		{"https://[1:2:3:4:5:6:7:8]", true},
		{"https://[1:2:3:4:5:6:0:8]", true}, // one zero piece stays
		{"https://[1:2:3:4:5:6::8]", false},
		{"https://[::ffff:102:304]", true}, // IPv4-mapped: hexadecimal pieces
		{"https://[::ffff:1.2.3.4]", false},
		{"https://[fe80::1%25eth0]", false},
		{"https://[::1]:8443", true},
		{"https://[::1]8443", false},
		{"https://[::1]:", false},
		{"https://[::1", false},
	} {
		if got := ValidOrigin(tc.in); got != tc.want {
			t.Errorf("ValidOrigin(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSerializeIPv6MatchesNetipForPlainAddresses(t *testing.T) {
	// netip's String follows RFC 5952, which agrees with WHATWG except for
	// IPv4-mapped and embedded forms; compare on addresses without them.
	for _, s := range []string{"::", "::1", "1::", "2001:db8::1", "2001:db8:0:1:1:1:1:1", "1:0:0:1::", "a:b:c:d:e:f:1:2"} {
		a := netip.MustParseAddr(s)
		if got := serializeIPv6(a.As16()); got != a.String() {
			t.Errorf("serializeIPv6(%s) = %s, want %s", s, got, a.String())
		}
	}
}

func FuzzValidOriginIsExact(f *testing.F) {
	for _, s := range []string{"https://api.example.com", "https://[::1]:8443", "https://127.0.0.1", "https://API.example.com:443/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidOrigin(s) {
			return
		}
		// A valid origin is its own normalization.
		n, err := NormalizeOrigin(s)
		if err != nil || n != s {
			t.Fatalf("valid origin %q normalizes to %q (%v)", s, n, err)
		}
	})
}
