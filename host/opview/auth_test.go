package opview_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"apconnect/host/opview"
)

// The login token works once, is exchanged for an HttpOnly, SameSite=Strict
// cookie named after the port, and leaves the URL; pages need the cookie.
func TestLoginTokenOnceAndCookie(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{})
	login := f.view.LoginURL()
	u, err := url.Parse(login)
	if err != nil || u.Host != f.addr || u.Path != opview.LoginPath || len(u.Query().Get("token")) < 40 {
		t.Fatalf("login URL %q", login)
	}
	c := browser(t)
	if a := f.get(t, c, "/", nil); a.status != http.StatusUnauthorized || !strings.Contains(a.body, "apconnect view") {
		t.Fatalf("a page without a session: %d %s", a.status, a.body)
	}
	a := f.get(t, c, login, nil)
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/" {
		t.Fatalf("login: %d %v", a.status, a.header)
	}
	cookies := a.header.Values("Set-Cookie")
	_, port, _ := strings.Cut(f.addr, ":")
	if len(cookies) != 1 || !strings.HasPrefix(cookies[0], "apconnect_view_"+port+"=") || !strings.Contains(cookies[0], "HttpOnly") ||
		!strings.Contains(cookies[0], "SameSite=Strict") || !strings.Contains(cookies[0], "Path=/") {
		t.Fatalf("cookie %q", cookies)
	}
	if a := f.get(t, c, "/", nil); a.status != http.StatusOK || !strings.Contains(a.body, "Processes") || !strings.Contains(a.body, f.hub.Origin()) {
		t.Fatalf("status page after login: %d", a.status)
	}
	// The same token opens nothing a second time, in this browser or another.
	for _, cl := range []*http.Client{c, browser(t)} {
		if a := f.get(t, cl, login, nil); a.status != http.StatusForbidden || len(a.header.Values("Set-Cookie")) != 0 {
			t.Fatalf("a used token: %d %v", a.status, a.header)
		}
	}
	// Unknown and missing tokens are refused the same way.
	for _, bad := range []string{"/login", "/login?token=", "/login?token=" + strings.Repeat("A", 43)} {
		if a := f.get(t, browser(t), bad, nil); a.status != http.StatusForbidden {
			t.Fatalf("%s: %d", bad, a.status)
		}
	}
	// A forged cookie is no session.
	jar := browser(t)
	jar.Jar.SetCookies(&url.URL{Scheme: "http", Host: f.addr}, []*http.Cookie{{Name: "apconnect_view_" + port, Value: strings.Repeat("x", 43)}})
	if a := f.get(t, jar, "/rooms", nil); a.status != http.StatusUnauthorized {
		t.Fatalf("a forged cookie: %d", a.status)
	}
}

// An unused token expires.
func TestLoginTokenExpires(t *testing.T) {
	t.Parallel()
	now := time.Now()
	clock := func() time.Time { return now }
	f := newFixture(t, opview.Options{Now: func() time.Time { return clock() }, TokenTTL: time.Minute})
	login := f.view.LoginURL()
	now = now.Add(time.Minute + time.Second)
	if a := f.get(t, browser(t), login, nil); a.status != http.StatusForbidden {
		t.Fatalf("an expired token: %d", a.status)
	}
}

// Host (DNS rebinding), Origin (cross-origin writes) and bearer refusals;
// the CSP and the other security headers on every answer, refusals
// included.
func TestGuards(t *testing.T) {
	t.Parallel()
	f := newFixture(t, opview.Options{})
	c := f.login(t, browser(t))
	_, port, _ := strings.Cut(f.addr, ":")
	for _, tc := range []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		status int
	}{
		{"rebinding name", "GET", "/", map[string]string{"Host": "evil.example:" + port}, http.StatusMisdirectedRequest},
		{"rebinding name on login", "GET", "/login?token=x", map[string]string{"Host": "attacker.test:" + port}, http.StatusMisdirectedRequest},
		{"other port", "GET", "/", map[string]string{"Host": "127.0.0.1:1"}, http.StatusMisdirectedRequest},
		{"no port", "GET", "/", map[string]string{"Host": "localhost"}, http.StatusMisdirectedRequest},
		// localhost passes the Host allowlist; a cookie of 127.0.0.1 is not
		// one of localhost's, so it needs a session of its own.
		{"localhost", "GET", "/", map[string]string{"Host": "localhost:" + port}, http.StatusUnauthorized},
		{"loopback", "GET", "/", map[string]string{"Host": "127.0.0.1:" + port}, http.StatusOK},
		{"cross-site POST", "POST", opview.TokenPath, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site",
			"Authorization": "Bearer " + f.bearer}, http.StatusForbidden},
		{"cross-origin POST without fetch metadata", "POST", opview.TokenPath, map[string]string{"Origin": "https://evil.example",
			"Authorization": "Bearer " + f.bearer}, http.StatusForbidden},
		{"token without bearer", "POST", opview.TokenPath, nil, http.StatusUnauthorized},
		{"token with a wrong bearer", "POST", opview.TokenPath, map[string]string{"Authorization": "Bearer " + strings.Repeat("c", 43)}, http.StatusUnauthorized},
		{"token with the bearer", "POST", opview.TokenPath, map[string]string{"Authorization": "Bearer " + f.bearer}, http.StatusOK},
		{"no writes", "POST", "/", nil, http.StatusMethodNotAllowed},
		{"no deletes", "DELETE", "/rooms", nil, http.StatusMethodNotAllowed},
		{"static", "GET", "/static/app.js", nil, http.StatusOK},
		{"no listing", "GET", "/static/", nil, http.StatusNotFound},
		{"unknown room", "GET", "/rooms/999", nil, http.StatusNotFound},
		{"bad room key", "GET", "/rooms/x'", nil, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := f.do(t, c, tc.method, tc.path, tc.hdr)
			if a.status != tc.status {
				t.Fatalf("%s %s: %d, want %d: %s", tc.method, tc.path, a.status, tc.status, a.body)
			}
			if got := a.header.Get("Content-Security-Policy"); got != "default-src 'self'; frame-ancestors 'none'" {
				t.Fatalf("CSP %q", got)
			}
			if a.header.Get("X-Content-Type-Options") != "nosniff" || a.header.Get("X-Frame-Options") != "DENY" ||
				a.header.Get("Referrer-Policy") != "no-referrer" || a.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("headers %v", a.header)
			}
		})
	}
	// The bearer's answer is a login URL for this identity that works once.
	ans, err := opview.RequestLogin(bg, f.addr, f.bearer)
	if err != nil || ans.Identity != "default" || ans.AgentID != f.alice.AgentID() {
		t.Fatalf("RequestLogin: %+v %v", ans, err)
	}
	b := browser(t)
	if a := f.get(t, b, ans.URL, nil); a.status != http.StatusSeeOther {
		t.Fatalf("the requested URL: %d", a.status)
	}
	if a := f.get(t, b, "/inbox", nil); a.status != http.StatusOK {
		t.Fatalf("inbox after the requested login: %d", a.status)
	}
	if _, err := opview.RequestLogin(bg, f.addr, strings.Repeat("z", 43)); err == nil {
		t.Fatal("RequestLogin with a wrong bearer succeeded")
	}
}

// New refuses what cannot be a loopback listener.
func TestNewRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	src := opview.FromConnector(newConnector(t, startHub(t), 0xC1), "")
	for _, addr := range []string{"0.0.0.0:8765", "192.0.2.1:8765", "127.0.0.1:0", "127.0.0.1", "example.com:80"} {
		if _, err := opview.New(src, opview.Options{Addr: addr}); err == nil {
			t.Errorf("New accepted %q", addr)
		}
	}
	if _, err := opview.New(nil, opview.Options{Addr: "127.0.0.1:8765"}); err == nil {
		t.Error("New accepted no source")
	}
}
