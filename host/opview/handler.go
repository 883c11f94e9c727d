package opview

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// CSP is the Content-Security-Policy of every response: scripts, styles,
// fetches and the event stream from the view itself only (no inline script
// or style, nothing from elsewhere), and no framing.
const CSP = "default-src 'self'; frame-ancestors 'none'"

// Paths of the view.
const (
	LoginPath      = "/login"      // GET ?token=…: the one-time login
	TokenPath      = "/view/login" // POST with the bearer token: a fresh login URL
	EventsPath     = "/events"     // the Server-Sent Events stream
	staticPrefix   = "/static/"
	fragmentQuery  = "fragment"
	tokenQuery     = "token"
	cookiePrefix   = "apconnect_view_"
	maxTokenAnswer = 4096
)

// Defaults of Options.
const (
	DefaultPoll = 500 * time.Millisecond
	DefaultPing = 5 * time.Second
)

// Options configure New.
type Options struct {
	// Addr is the address the listener is bound to (a loopback IP and the
	// bound port): the only Host a request may name, besides
	// localhost:port. Required.
	Addr string
	// Bearer is the home's bearer token (the MCP endpoint's): presented on
	// POST TokenPath, it gets a fresh login URL (`apconnect view`). Empty
	// disables TokenPath.
	Bearer string
	// Identity and AgentID name the identity served, for TokenPath's
	// answer and the pages' heading.
	Identity, AgentID string
	// Logger receives refusals at debug level (discarded when nil).
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// TokenTTL bounds an unused login token's life (DefaultTokenTTL);
	// SessionTTL a session's since its last use (DefaultSessionTTL).
	TokenTTL, SessionTTL time.Duration
	// Poll paces the checks for changes made by other processes
	// (DefaultPoll); Ping the stream's keep-alive events (DefaultPing).
	Poll, Ping time.Duration
	// OnAuthenticated is called with each request that presented a valid
	// session or bearer token (serve marks its connection as the token
	// holder's, so the connection cap never closes it to make room).
	OnAuthenticated func(*http.Request)
}

// Handler serves the operator's view of one identity. It is read-only: it
// holds a Source and its own login state, and nothing it serves changes
// the connector's state.
type Handler struct {
	src       Source
	o         Options
	port      string
	cookie    string
	bearerSum secretSum
	tokens    *secrets
	sessions  *secrets
	pages     map[string]*template.Template
	feed      *feed
	root      http.Handler
}

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// New returns the view of src.
func New(src Source, o Options) (*Handler, error) {
	if src == nil {
		return nil, errors.New("opview: a source is required")
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil || port == "0" || port == "" {
		return nil, fmt.Errorf("opview: Addr %q must be the bound host:port", o.Addr)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("opview: Addr %q is not a loopback address", o.Addr)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Ping <= 0 {
		o.Ping = DefaultPing
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	h := &Handler{src: src, o: o, port: port, cookie: cookiePrefix + port, tokens: newSecrets(maxTokens),
		sessions: newSecrets(maxSessions), pages: pages}
	if o.Bearer != "" {
		h.bearerSum = sum(o.Bearer)
	}
	h.feed = newFeed(src, o.Poll, o.Logger)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+LoginPath, h.login)
	mux.HandleFunc("POST "+TokenPath, h.issue)
	mux.HandleFunc("GET "+staticPrefix+"{name}", serveStatic)
	mux.HandleFunc("GET "+EventsPath, h.authed(h.events))
	for _, p := range pageList {
		mux.HandleFunc("GET "+p.pattern, h.authed(h.page(p)))
	}
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.refuse(w, r, http.StatusForbidden, "cross-origin requests are refused")
	}))
	h.root = cop.Handler(mux)
	return h, nil
}

// ServeHTTP applies the guards every request passes, in order: the
// security headers (on every response, refusals included), a loopback
// peer, a Host naming this listener (DNS rebinding), then Go's
// cross-origin protection, then the routes (each page and the stream
// behind a session).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	if !loopbackPeer(r.RemoteAddr) {
		h.refuse(w, r, http.StatusForbidden, "the view answers loopback clients only")
		return
	}
	if !h.hostAllowed(r.Host) {
		h.refuse(w, r, http.StatusMisdirectedRequest, "the Host header must name this loopback listener")
		return
	}
	h.root.ServeHTTP(w, r)
}

// LoginURL issues a one-time login token and returns the URL that uses it.
func (h *Handler) LoginURL() string {
	tok := h.tokens.add(h.o.Now().Add(h.o.TokenTTL))
	host, _, _ := net.SplitHostPort(h.o.Addr)
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, h.port), Path: LoginPath, RawQuery: tokenQuery + "=" + tok}
	return u.String()
}

// refuse answers a refusal as plain text, closing the connection.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.o.Logger.Debug("operator view: refused", "status", status, "reason", msg, "path", r.URL.Path, "remote", r.RemoteAddr)
	w.Header().Set("Connection", "close")
	http.Error(w, http.StatusText(status)+": "+msg, status)
}

// hostAllowed accepts 127.0.0.1, [::1] and localhost with the listener's
// port.
func (h *Handler) hostAllowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port != h.port {
		return false
	}
	switch strings.ToLower(host) {
	case "127.0.0.1", "::1", "localhost":
		return true
	}
	return false
}

// loopbackPeer reports whether the request came from a loopback address.
func loopbackPeer(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// login exchanges a one-time token for a session cookie and redirects to
// the status page, so the token leaves the address bar and the history.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	now := h.o.Now()
	if !h.tokens.take(r.URL.Query().Get(tokenQuery), now) {
		h.o.Logger.Debug("operator view: refused a used, expired or unknown login token", "remote", r.RemoteAddr)
		h.errorPage(w, r, http.StatusForbidden, "This login link was already used, has expired or is not one of this process's.",
			"Run `apconnect view` (with the same --home and --agent) for a new one.")
		return
	}
	sid := h.sessions.add(now.Add(h.o.SessionTTL))
	http.SetCookie(w, &http.Cookie{Name: h.cookie, Value: sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// issue answers POST TokenPath: with the bearer token, a fresh login URL.
func (h *Handler) issue(w http.ResponseWriter, r *http.Request) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	given := sum(strings.TrimSpace(tok))
	if h.o.Bearer == "" || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(given[:], h.bearerSum[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="apconnect"`)
		h.refuse(w, r, http.StatusUnauthorized, "present the home's bearer token")
		return
	}
	if h.o.OnAuthenticated != nil {
		h.o.OnAuthenticated(r)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(TokenAnswer{URL: h.LoginURL(), Identity: h.o.Identity, AgentID: h.o.AgentID})
}

// serveStatic serves the embedded script and style sheet (no listing).
func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, err := fs.ReadFile(staticFiles, "static/"+name)
	if err != nil || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case strings.HasSuffix(name, ".svg"):
		w.Header().Set("Content-Type", "image/svg+xml")
	default:
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(data)
}

// TokenAnswer is the answer of POST TokenPath.
type TokenAnswer struct {
	URL      string `json:"url"`
	Identity string `json:"identity"`
	AgentID  string `json:"agent_id"`
}

// authed lets a request through with a valid session cookie (extending
// the session), else answers 401 with how to log in.
func (h *Handler) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		now := h.o.Now()
		c, err := r.Cookie(h.cookie)
		if err != nil || !h.sessions.touch(c.Value, now, now.Add(h.o.SessionTTL)) {
			h.o.Logger.Debug("operator view: no valid session", "path", r.URL.Path, "remote", r.RemoteAddr)
			h.errorPage(w, r, http.StatusUnauthorized, "You are not logged in to this operator view.",
				"Open the `operator view:` URL that `apconnect serve` printed, or run `apconnect view` for a new one.")
			return
		}
		if h.o.OnAuthenticated != nil {
			h.o.OnAuthenticated(r)
		}
		next(w, r)
	}
}
