package identity

import (
	"strings"
	"testing"
	"time"
)

func TestTokenRoundTrip(t *testing.T) {
	s := testSigner(t, "alice")
	now := time.Unix(1779753600, 0)
	tok, err := IssueToken(s, "https://Hub.Example:443/", now, MaxTokenLifetime)
	if err != nil {
		t.Fatal(err)
	}
	c, err := VerifyToken(tok, "https://hub.example", now.Add(10*time.Second), MaxTokenLifetime, DefaultClockSkew)
	if err != nil {
		t.Fatal(err)
	}
	if c.AgentID != s.AgentID() || c.Aud != "https://hub.example" || c.ExpiresAt.Sub(c.IssuedAt) != MaxTokenLifetime {
		t.Fatalf("claims = %+v", c)
	}
	if _, err := IssueToken(s, "https://h", now, MaxTokenLifetime+time.Second); err == nil {
		t.Fatal("over-long token issued")
	}
	if _, err := IssueToken(s, "https://h/path", now, time.Minute); err == nil {
		t.Fatal("token for a URL with a path issued")
	}
}

// forge builds a compact JWT from raw header and claims JSON, signed by s.
func forge(s *KeySigner, header, claims string) string {
	in := EncodeBase64URL([]byte(header)) + "." + EncodeBase64URL([]byte(claims))
	return in + "." + EncodeBase64URL(s.SignDigest([]byte(in)))
}

func TestVerifyTokenRejections(t *testing.T) {
	s, other := testSigner(t, "alice"), testSigner(t, "mallory")
	id := s.AgentID()
	now := time.Unix(1779753600, 0)
	hdr := `{"alg":"EdDSA","typ":"JWT","kid":"` + id + `"}`
	claims := func(iss, sub, aud string, iat, exp int64) string {
		return `{"iss":"` + iss + `","sub":"` + sub + `","aud":"` + aud + `","iat":` + itoa(iat) + `,"exp":` + itoa(exp) + `}`
	}
	good := claims(id, id, "https://hub.example", now.Unix(), now.Unix()+300)
	valid := forge(s, hdr, good)
	if _, err := VerifyToken(valid, "https://hub.example", now, MaxTokenLifetime, DefaultClockSkew); err != nil {
		t.Fatalf("valid token: %v", err)
	}
	cases := []struct{ name, token, reason string }{
		{"alg none", forge(s, `{"alg":"none","typ":"JWT","kid":"`+id+`"}`, good), "alg"},
		{"alg HS256", forge(s, `{"alg":"HS256","kid":"`+id+`"}`, good), "alg"},
		{"no typ", forge(s, `{"alg":"EdDSA","kid":"`+id+`"}`, good), "typ"},
		{"typ jwt", forge(s, `{"alg":"EdDSA","typ":"jwt","kid":"`+id+`"}`, good), "typ"},
		{"kid differs from iss", forge(s, hdr, claims(other.AgentID(), id, "https://hub.example", now.Unix(), now.Unix()+60)), "same Agent ID"},
		{"sub differs", forge(s, hdr, claims(id, other.AgentID(), "https://hub.example", now.Unix(), now.Unix()+60)), "same Agent ID"},
		{"signed by another key", forge(other, hdr, good), "signature"},
		{"wrong audience", forge(s, hdr, claims(id, id, "https://evil.example", now.Unix(), now.Unix()+60)), "aud"},
		{"audience with path", forge(s, hdr, claims(id, id, "https://hub.example/v1", now.Unix(), now.Unix()+60)), "aud"},
		{"exp equals iat", forge(s, hdr, claims(id, id, "https://hub.example", now.Unix(), now.Unix())), "exp must be greater"},
		{"lifetime overflowing a Duration", forge(s, hdr, claims(id, id, "https://hub.example", now.Unix(), now.Unix()+10_000_000_000)), "lifetime"},
		{"lifetime too long", forge(s, hdr, claims(id, id, "https://hub.example", now.Unix(), now.Unix()+301)), "lifetime"},
		{"expired", forge(s, hdr, claims(id, id, "https://hub.example", now.Unix()-400, now.Unix()-100)), "expired"},
		{"issued in the future", forge(s, hdr, claims(id, id, "https://hub.example", now.Unix()+120, now.Unix()+180)), "future"},
		{"duplicate claim", forge(s, hdr, `{"iss":"`+id+`","iss":"`+id+`"}`), "duplicate"},
		{"two parts", strings.Join(strings.Split(valid, ".")[:2], "."), "three"},
		{"padded signature", valid + "=", "signature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := VerifyToken(tc.token, "https://hub.example", now, MaxTokenLifetime, DefaultClockSkew)
			if ErrorCode(err) != CodeInvalidToken {
				t.Fatalf("err = %v, want invalid_token", err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.reason)
			}
		})
	}
}

// TestVerifyTokenSDKVerdicts: the request JWT cases of PROTOCOL-0.12 §2.7
// (aud https://api.example.com, now 1779753700) with skew 0 give SDK
// 0.12.6's verdicts; the hub's 60 s skew accepts the two clock cases too.
func TestVerifyTokenSDKVerdicts(t *testing.T) {
	s := testSigner(t, "alice")
	id := s.AgentID()
	const aud = "https://api.example.com"
	const now = int64(1779753700)
	hdr := `{"alg":"EdDSA","typ":"JWT","kid":"` + id + `"}`
	claims := func(aud string, iat, exp string, extra string) string {
		return `{"iss":"` + id + `","sub":"` + id + `","aud":"` + aud + `","iat":` + iat + `,"exp":` + exp + extra + `}`
	}
	n := func(d int64) string { return itoa(now + d) }
	for _, c := range []struct {
		name           string
		token          string
		strict, skewed bool // valid with skew 0, valid with DefaultClockSkew
	}{
		{"iat=now exp=now+300", forge(s, hdr, claims(aud, n(0), n(300), "")), true, true},
		{"iat=now+1", forge(s, hdr, claims(aud, n(1), n(300), "")), false, true},
		{"iat=now-300 exp=now", forge(s, hdr, claims(aud, n(-300), n(0), "")), true, true},
		{"exp=now-1", forge(s, hdr, claims(aud, n(-299), n(-1), "")), false, true},
		{"exp-iat=301", forge(s, hdr, claims(aud, n(-1), n(300), "")), false, false},
		{"header without typ", forge(s, `{"alg":"EdDSA","kid":"`+id+`"}`, claims(aud, n(0), n(300), "")), false, false},
		{"header with crit", forge(s, `{"alg":"EdDSA","typ":"JWT","kid":"`+id+`","crit":["x"]}`, claims(aud, n(0), n(300), "")), true, true},
		{"extra claim jti", forge(s, hdr, claims(aud, n(0), n(300), `,"jti":"abc"`)), true, true},
		{"aud with a trailing slash", forge(s, hdr, claims(aud+"/", n(0), n(300), "")), false, false},
		{"iat as a float", forge(s, hdr, claims(aud, n(0)+".0", n(300), "")), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := VerifyToken(c.token, aud, time.Unix(now, 0), MaxTokenLifetime, 0)
			if (err == nil) != c.strict {
				t.Errorf("skew 0: err = %v, want valid=%v", err, c.strict)
			}
			if err != nil && ErrorCode(err) != CodeInvalidToken {
				t.Errorf("skew 0: code %q, want invalid_token", ErrorCode(err))
			}
			if _, err := VerifyToken(c.token, aud, time.Unix(now, 0), MaxTokenLifetime, DefaultClockSkew); (err == nil) != c.skewed {
				t.Errorf("skew %s: err = %v, want valid=%v", DefaultClockSkew, err, c.skewed)
			}
		})
	}
}

func itoa(n int64) string {
	b, _ := Canonicalize(n)
	return string(b)
}

func TestNormalizeOrigin(t *testing.T) {
	good := map[string]string{
		"https://Example.COM":     "https://example.com",
		"https://example.com/":    "https://example.com",
		"https://example.com:443": "https://example.com",
		"https://127.0.0.1:8443":  "https://127.0.0.1:8443",
		"https://[::1]:9000":      "https://[::1]:9000",
	}
	for in, want := range good {
		if got, err := NormalizeOrigin(in); err != nil || got != want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"http://example.com", "https://example.com/v1", "https://u@example.com", "https://example.com?x=1", "https://example.com#f", "example.com", "https://"} {
		if _, err := NormalizeOrigin(bad); err == nil {
			t.Errorf("NormalizeOrigin(%q) accepted", bad)
		}
	}
}
