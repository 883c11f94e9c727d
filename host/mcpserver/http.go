package mcpserver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Loopback Streamable HTTP (connector spec 3).
//
// The endpoint binds 127.0.0.1 or ::1 only and serves MCP at /mcp. Binding
// loopback is not authentication — any local process can connect — so
// every request must carry the bearer token from the home's token file
// (compared in constant time). A request whose Host header does not name
// the loopback listener is refused (DNS rebinding: a web page whose name
// resolves to 127.0.0.1 sends its own name as Host), and so is a request
// from a browser page of another origin (Origin, when present, must be a
// loopback origin).
//
// Both MCP eras are served at the one URL (httproute.go): 2025-11-25 and
// earlier in stateful sessions (Mcp-Session-Id), each with its own
// presented heads, and 2026-07-28 statelessly, with presented heads kept
// per client (see server.go).

// HTTPPath is where the MCP endpoint is served.
const HTTPPath = "/mcp"

// DefaultSessionTimeout closes HTTP sessions idle for this long.
const DefaultSessionTimeout = 2 * time.Hour

// minTokenLen bounds the bearer token a token file may hold.
const minTokenLen = 32

// CheckListen accepts a listen address only when its host is the IPv4 or
// IPv6 loopback address literally (127.0.0.1 or ::1) and its port a number.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v (use 127.0.0.1:PORT or [::1]:PORT)", addr, err)
	}
	if host != "127.0.0.1" && host != "::1" {
		return fmt.Errorf("listen address %q: apconnect serves HTTP on 127.0.0.1 or ::1 only", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("listen address %q: the port must be a number", addr)
	}
	return nil
}

// LoadToken reads the bearer token from path. When the file does not exist
// and create is set, it generates a 256-bit random token and writes it
// there with mode 0600 (created reports that). A token file readable or
// writable by group or others is refused.
func LoadToken(path string, create bool) (token string, created bool, err error) {
	data, err := readTokenFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", false, err
		}
		token = base64.RawURLEncoding.EncodeToString(b[:])
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", false, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return LoadToken(path, false) // created by someone else meanwhile
		}
		if err != nil {
			return "", false, fmt.Errorf("token file: %w", err)
		}
		if _, err := f.WriteString(token + "\n"); err != nil {
			f.Close()
			os.Remove(path)
			return "", false, fmt.Errorf("token file: %w", err)
		}
		if err := f.Close(); err != nil {
			return "", false, fmt.Errorf("token file: %w", err)
		}
		return token, true, nil
	}
	if err != nil {
		return "", false, err
	}
	token = strings.TrimSpace(string(data))
	if len(token) < minTokenLen || strings.ContainsAny(token, " \t\r\n") {
		return "", false, fmt.Errorf("token file %s: the token must be one line of at least %d characters", path, minTokenLen)
	}
	return token, false, nil
}

func readTokenFile(path string) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("token file %s is not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token file %s is accessible by group or others (mode %04o); chmod 600 it", path, st.Mode().Perm())
	}
	if st.Size() > 4096 {
		return nil, fmt.Errorf("token file %s is too large", path)
	}
	return os.ReadFile(path)
}

// HTTPOptions configure HTTPHandler.
type HTTPOptions struct {
	// Addr is the address the listener is bound to (host:port, port not
	// 0): the only Host a request may name, besides localhost:port.
	Addr string
	// Token is the bearer token every request must present.
	Token string
	// Logger receives refusals at debug level (discarded when nil).
	Logger *slog.Logger
	// SessionTimeout closes idle sessions (DefaultSessionTimeout when 0).
	SessionTimeout time.Duration
	// MaxBodyBytes bounds a request body (DefaultMaxMessageBytes when 0).
	MaxBodyBytes int
	// MaxDepth bounds the nesting of a message (DefaultMaxDepth when 0).
	MaxDepth int
}

// HTTPHandler serves srv as Streamable HTTP at HTTPPath behind the
// loopback guards: Host, Origin and the bearer token, in that order.
func HTTPHandler(srv *mcp.Server, o HTTPOptions) (http.Handler, error) {
	if err := CheckListen(o.Addr); err != nil {
		return nil, err
	}
	if len(o.Token) < minTokenLen {
		return nil, fmt.Errorf("mcpserver: the bearer token must have at least %d characters", minTokenLen)
	}
	_, port, _ := net.SplitHostPort(o.Addr)
	if port == "0" {
		return nil, errors.New("mcpserver: HTTPHandler needs the bound port, not 0")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	h := newRouter(srv, o)
	sum := sha256.Sum256([]byte(o.Token))
	return &guard{next: h, port: port, tokenSum: sum, log: o.Logger}, nil
}

type guard struct {
	next     http.Handler
	port     string
	tokenSum [32]byte
	log      *slog.Logger
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		g.log.Debug("refused: Host is not the loopback listener", "host", r.Host, "remote", r.RemoteAddr)
		w.Header().Set("Connection", "close")
		http.Error(w, "Forbidden: the Host header must name the loopback listener", http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
		g.log.Debug("refused: foreign Origin", "origin", origin, "remote", r.RemoteAddr)
		w.Header().Set("Connection", "close")
		http.Error(w, "Forbidden: cross-origin requests are not allowed", http.StatusForbidden)
		return
	}
	if !g.authorized(r.Header.Get("Authorization")) {
		g.log.Debug("refused: missing or wrong bearer token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="apconnect"`)
		w.Header().Set("Connection", "close") // an unauthenticated client keeps no connection
		http.Error(w, "Unauthorized: present the token of the apconnect home's token file as a bearer token", http.StatusUnauthorized)
		return
	}
	markAuthenticated(r.Context())
	if r.URL.Path != HTTPPath {
		http.NotFound(w, r)
		return
	}
	g.next.ServeHTTP(w, r)
}

// authorized compares the presented bearer token with ours in constant
// time (digests of equal length, so not even the length leaks).
func (g *guard) authorized(header string) bool {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) == 1
}

// hostAllowed accepts 127.0.0.1, [::1] and localhost, with the listener's
// port.
func (g *guard) hostAllowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port != g.port {
		return false
	}
	return isLoopbackName(host)
}

func isLoopbackName(host string) bool {
	switch strings.ToLower(host) {
	case "127.0.0.1", "::1", "localhost":
		return true
	}
	return false
}

// loopbackOrigin accepts http or https origins on a loopback name.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false
	}
	return isLoopbackName(u.Hostname())
}
