package hub_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
)

// craftToken builds a compact JWT with any header and claims, signed by a.
func craftToken(a *hubtest.Agent, header, claims map[string]any) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	signing := identity.EncodeBase64URL(h) + "." + identity.EncodeBase64URL(c)
	return signing + "." + identity.EncodeBase64URL(a.Signer.SignDigest([]byte(signing)))
}

// TestRequestJWTAuth mounts an endpoint behind the hub's Authenticator and
// checks every rule of Agent Identity 7 over HTTPS.
func TestRequestJWTAuth(t *testing.T) {
	clock := hubtest.NewClock(time.Unix(1_800_000_000, 0))
	h := hubtest.Start(t, hubtest.WithClock(clock))
	h.Handle("GET /x-probe/whoami", h.Auth().Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hubhttp.WriteJSON(w, http.StatusOK, map[string]string{"agent_id": hubhttp.AgentID(r.Context())})
	})))
	a, b := hubtest.NewAgent(40), hubtest.NewAgent(41)
	now := clock.Now()
	iat := now.Unix()
	claims := func(mod func(map[string]any)) map[string]any {
		c := map[string]any{"iss": a.ID, "sub": a.ID, "aud": h.Origin(), "iat": iat, "exp": iat + 300}
		if mod != nil {
			mod(c)
		}
		return c
	}
	hdr := func(mod func(map[string]any)) map[string]any {
		m := map[string]any{"alg": "EdDSA", "typ": "JWT", "kid": a.ID}
		if mod != nil {
			mod(m)
		}
		return m
	}
	valid := a.Token(t, h.Origin(), now, 300*time.Second)
	tampered := valid[:len(valid)-2] + map[bool]string{true: "AA", false: "BA"}[strings.HasSuffix(valid, "BA")]

	for _, c := range []struct {
		name   string
		header http.Header
		ok     bool
	}{
		{"valid", hubtest.Bearer(valid), true},
		{"valid, lower-case scheme", http.Header{"Authorization": {"bearer " + valid}}, true},
		{"issued 30 s ahead (within skew)", hubtest.Bearer(a.Token(t, h.Origin(), now.Add(30*time.Second), time.Minute)), true},
		{"expired 30 s ago (within skew)", hubtest.Bearer(a.Token(t, h.Origin(), now.Add(-90*time.Second), time.Minute)), true},
		{"missing", nil, false},
		{"empty bearer", http.Header{"Authorization": {"Bearer "}}, false},
		{"basic scheme", http.Header{"Authorization": {"Basic " + valid}}, false},
		{"two headers", http.Header{"Authorization": {"Bearer " + valid, "Bearer " + valid}}, false},
		{"expired", hubtest.Bearer(a.Token(t, h.Origin(), now.Add(-400*time.Second), 300*time.Second)), false},
		{"issued in the future", hubtest.Bearer(a.Token(t, h.Origin(), now.Add(120*time.Second), time.Minute)), false},
		{"wrong audience", hubtest.Bearer(a.Token(t, "https://127.0.0.1:1", now, time.Minute)), false},
		{"audience with a path", hubtest.Bearer(craftToken(a, hdr(nil), claims(func(c map[string]any) { c["aud"] = h.Origin() + "/v1" }))), false},
		{"alg HS256", hubtest.Bearer(craftToken(a, hdr(func(m map[string]any) { m["alg"] = "HS256" }), claims(nil))), false},
		{"alg none", hubtest.Bearer(craftToken(a, hdr(func(m map[string]any) { m["alg"] = "none" }), claims(nil))), false},
		// D-18: typ is required, unknown header members (crit) ignored.
		{"no typ", hubtest.Bearer(craftToken(a, hdr(func(m map[string]any) { delete(m, "typ") }), claims(nil))), false},
		{"crit header", hubtest.Bearer(craftToken(a, hdr(func(m map[string]any) { m["crit"] = []any{"x"} }), claims(nil))), true},
		{"extra claim", hubtest.Bearer(craftToken(a, hdr(nil), claims(func(c map[string]any) { c["jti"] = "j1" }))), true},
		{"kid is not iss", hubtest.Bearer(craftToken(a, hdr(func(m map[string]any) { m["kid"] = b.ID }), claims(nil))), false},
		{"sub is not iss", hubtest.Bearer(craftToken(a, hdr(nil), claims(func(c map[string]any) { c["sub"] = b.ID }))), false},
		{"signed by another key", hubtest.Bearer(craftToken(b, hdr(nil), claims(nil))), false},
		{"tampered signature", hubtest.Bearer(tampered), false},
		{"lifetime over 300 s", hubtest.Bearer(craftToken(a, hdr(nil), claims(func(c map[string]any) { c["exp"] = iat + 301 }))), false},
		{"lifetime overflowing a Duration", hubtest.Bearer(craftToken(a, hdr(nil), claims(func(c map[string]any) { c["exp"] = iat + 10_000_000_000 }))), false},
		{"exp equal to iat", hubtest.Bearer(craftToken(a, hdr(nil), claims(func(c map[string]any) { c["exp"] = iat }))), false},
		{"not a JWT", hubtest.Bearer("abc.def"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.Do(http.MethodGet, "/x-probe/whoami", nil, c.header)
			if c.ok {
				wantOK(t, r)
				jsonEqual(t, r.Body, []byte(`{"agent_id":"`+a.ID+`"}`))
				return
			}
			wantError(t, r, http.StatusUnauthorized, identity.CodeInvalidToken)
			if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
			}
		})
	}
}
