package identity

import (
	"crypto/ed25519"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// MaxTokenLifetime is the longest request JWT lifetime (exp - iat) that
// apconnect issues or accepts (section 7 recommends 300 s or less).
const MaxTokenLifetime = 300 * time.Second

// DefaultClockSkew is the local hub's tolerance for iat in the future and
// exp in the past. It is host policy, not protocol: SDK 0.12.6 verifies
// with no skew at all, and VerifyToken with skew 0 gives the SDK's
// verdicts (the interop suite checks that). A verifier that tolerates skew
// accepts every token a strict one accepts.
const DefaultClockSkew = 60 * time.Second

// maxTokenLen bounds the size of a compact JWT a verifier will look at.
const maxTokenLen = 4096

// TokenClaims are the verified claims of a request JWT.
type TokenClaims struct {
	AgentID string
	Aud     string
	IssuedAt,
	ExpiresAt time.Time
}

// IssueToken returns a compact request JWT (section 7) for the service at
// origin with iat = now and exp = now + lifetime (lifetime at most
// MaxTokenLifetime). Tokens are minted per request and never stored. A
// client facing hosts whose clocks may run behind its own passes a
// backdated now (and a lifetime grown by the same amount), since SDK
// 0.12.6 hosts refuse an iat even one second in their future.
func IssueToken(s Signer, origin string, now time.Time, lifetime time.Duration) (string, error) {
	aud, err := NormalizeOrigin(origin)
	if err != nil {
		return "", err
	}
	if lifetime <= 0 || lifetime > MaxTokenLifetime {
		return "", fmt.Errorf("request token lifetime must be in (0, %s]", MaxTokenLifetime)
	}
	id := s.AgentID()
	header, err := Canonicalize(map[string]any{"alg": "EdDSA", "typ": "JWT", "kid": id})
	if err != nil {
		return "", err
	}
	iat := now.Unix()
	claims, err := Canonicalize(map[string]any{
		"iss": id, "sub": id, "aud": aud,
		"iat": iat, "exp": iat + int64(lifetime/time.Second),
	})
	if err != nil {
		return "", err
	}
	signing := EncodeBase64URL(header) + "." + EncodeBase64URL(claims)
	return signing + "." + EncodeBase64URL(s.SignDigest([]byte(signing))), nil
}

// VerifyToken checks a compact request JWT by the rules of section 7, as
// SDK 0.12.6's verify_request_jwt reads them, for a service whose origin is
// audience: header alg EdDSA and typ JWT (both required; other header
// members such as crit are ignored, as are extra claims), kid = iss = sub
// naming a valid Agent ID, a strict signature, aud equal to the origin,
// integer iat and exp with exp > iat and exp - iat at most maxLifetime, and
// iat <= now + skew and exp >= now - skew. With skew 0 the verdicts are
// the SDK's (an exp equal to now is still valid); the local hub tolerates
// DefaultClockSkew as its policy. Every failure is an *Error with code
// invalid_token.
func VerifyToken(token, audience string, now time.Time, maxLifetime, skew time.Duration) (*TokenClaims, error) {
	bad := func(format string, args ...any) (*TokenClaims, error) {
		return nil, newError(CodeInvalidToken, "", format, args...)
	}
	if len(token) > maxTokenLen {
		return bad("token is longer than %d bytes", maxTokenLen)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return bad("token is not a compact JWS (three dot-separated parts)")
	}
	headerBytes, err := DecodeBase64URL(parts[0])
	if err != nil {
		return bad("header is not canonical base64url")
	}
	claimBytes, err := DecodeBase64URL(parts[1])
	if err != nil {
		return bad("claims are not canonical base64url")
	}
	sig, err := DecodeBase64URLLen(parts[2], ed25519.SignatureSize)
	if err != nil {
		return bad("signature is not 64 bytes of canonical base64url")
	}
	hv, err := ParseStrict(headerBytes)
	if err != nil {
		return bad("header: %v", err)
	}
	header, ok := hv.(map[string]any)
	if !ok {
		return bad("header must be a JSON object")
	}
	if header["alg"] != "EdDSA" {
		return bad("alg must be EdDSA")
	}
	if header["typ"] != "JWT" {
		return bad("typ must be JWT")
	}
	// Unknown header members, crit included, are ignored as SDK 0.12.6
	// ignores them: a request JWT's meaning is fixed by section 7, and a
	// crit extension cannot loosen any of its checks.
	kid, _ := header["kid"].(string)
	cv, err := ParseStrict(claimBytes)
	if err != nil {
		return bad("claims: %v", err)
	}
	claims, ok := cv.(map[string]any)
	if !ok {
		return bad("claims must be a JSON object")
	}
	iss, _ := claims["iss"].(string)
	sub, _ := claims["sub"].(string)
	if kid == "" || iss != kid || sub != kid {
		return bad("kid, iss and sub must name the same Agent ID")
	}
	pub, err := ParseAgentID(kid)
	if err != nil {
		return bad("kid: %v", err)
	}
	if err := VerifyStrict(pub, []byte(parts[0]+"."+parts[1]), sig); err != nil {
		return bad("signature: %v", err)
	}
	aud, _ := claims["aud"].(string)
	want, err := NormalizeOrigin(audience)
	if err != nil {
		return nil, err
	}
	if aud != want {
		return bad("aud %q is not this service's origin %q", truncate(aud, 100), want)
	}
	iat, ok1 := IntValue(claims["iat"])
	exp, ok2 := IntValue(claims["exp"])
	if !ok1 || !ok2 {
		return bad("iat and exp must be integer NumericDates in seconds")
	}
	if exp <= iat {
		return bad("exp must be greater than iat")
	}
	// Compare in seconds: converting a huge lifetime to a Duration overflows.
	if exp-iat > int64(maxLifetime/time.Second) {
		return bad("token lifetime %ds exceeds %s", exp-iat, maxLifetime)
	}
	nowS := now.Unix()
	sk := int64(skew / time.Second)
	if iat > nowS+sk {
		return bad("token issued in the future")
	}
	if exp+sk < nowS {
		return bad("token expired")
	}
	return &TokenClaims{AgentID: kid, Aud: aud, IssuedAt: time.Unix(iat, 0), ExpiresAt: time.Unix(exp, 0)}, nil
}

// NormalizeOrigin returns the origin form (scheme://host[:port], lowercase,
// default port dropped, no path) of an https URL that has no path, query,
// fragment or user info. It is the request JWT audience of a service.
func NormalizeOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("origin %q: %v", truncate(raw, 100), err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("origin %q: scheme must be https", truncate(raw, 100))
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("origin %q: must be scheme://host[:port] with no path, query, fragment or user info", truncate(raw, 100))
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || port == "443" {
		return "https://" + host, nil
	}
	return "https://" + host + ":" + port, nil
}
