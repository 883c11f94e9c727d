package engine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/config"
)

// Gate answers one question: may this process reach this origin with this
// capability. The operator's configuration is the only source of its
// answers (the [[hosts]] entries with their grants, and the identity's
// profile services); nothing an agent can call changes them.
//
// It is asked where a request, a request JWT or a signature is made for an
// origin, so every outbound path goes through it:
//
//   - Allow checks a capability without reaching anything (local reads of
//     what an origin served need the same grant as reading it afresh);
//   - Need checks it and returns a context carrying the grant; the service
//     clients refuse to mint a JWT or send a request whose context carries
//     no grant for its origin (client.Options.Gate), and the engine's HTTP
//     clients refuse such a request again at the transport, so a code path
//     that forgot to ask cannot reach the network (discovery documents
//     excepted: configured discovery needs no grant);
//   - Sign checks it before a nonce is allocated.
type Gate struct {
	hosts  map[string]*config.Host // by origin
	grants map[string]capability.Set
	order  []string // configured origins: hosts in config order, then profile services
}

func newGate(cfg *config.Config, ident *config.Identity) (*Gate, error) {
	g := &Gate{hosts: map[string]*config.Host{}, grants: map[string]capability.Set{}}
	for _, o := range cfg.Origins(ident) {
		g.grants[o.URL] = o.Grants
		if o.Host != nil {
			g.hosts[o.URL] = o.Host
		}
		g.order = append(g.order, o.URL)
	}
	return g, nil
}

// Origins lists the configured origins: the [[hosts]] entries in config
// order, then the identity's profile services that have none.
func (g *Gate) Origins() []string { return slices.Clone(g.order) }

// Hosts lists the origins of the [[hosts]] entries, in config order.
func (g *Gate) Hosts() []string {
	var out []string
	for _, o := range g.order {
		if g.hosts[o] != nil {
			out = append(out, o)
		}
	}
	return out
}

// hostEntry returns the [[hosts]] entry of an origin (nil: none).
func (g *Gate) hostEntry(origin string) *config.Host { return g.hosts[origin] }

// Grants returns an origin's effective grants (none for an origin that is
// not configured).
func (g *Gate) Grants(origin string) capability.Set {
	norm, err := config.NormalizeOrigin(origin)
	if err != nil {
		return capability.Set{}
	}
	return g.grants[norm]
}

// configured normalizes origin and reports host_not_allowed when the
// operator did not configure it.
func (g *Gate) configured(origin string) (string, error) {
	norm, err := config.NormalizeOrigin(origin)
	if err != nil {
		return "", Errorf(CodeHostNotAllowed, "%q is not an https origin", origin)
	}
	if _, ok := g.grants[norm]; !ok {
		return "", &Error{Code: CodeHostNotAllowed, Message: fmt.Sprintf("origin %s is not configured; only the operator can allow origins", norm),
			Data: map[string]any{"allowed": g.Origins()}}
	}
	return norm, nil
}

// Allow returns nil when origin is configured and granted c, and otherwise
// host_not_allowed or permission_denied with data {capability, origin}.
func (g *Gate) Allow(origin string, c capability.Capability) error {
	norm, err := g.configured(origin)
	if err != nil {
		return err
	}
	if !g.grants[norm].Has(c) {
		return &Error{Code: CodePermissionDenied,
			Message: fmt.Sprintf("the operator has not granted %s on %s (config.toml [[hosts]] grants)", c, norm),
			Data:    map[string]any{"capability": c.String(), "origin": norm}}
	}
	return nil
}

// grantKey is the context key of the grants a context carries.
type grantKey struct{}

// held are the origins a context was granted for by Need.
type held []string

// Allow checks the gate (see Gate.Allow).
func (e *Engine) Allow(origin string, c capability.Capability) error { return e.gate.Allow(origin, c) }

// Grants returns an origin's effective grants.
func (e *Engine) Grants(origin string) capability.Set { return e.gate.Grants(origin) }

// Origins lists the configured origins (see Gate.Origins).
func (e *Engine) Origins() []string { return e.gate.Origins() }

// HostOrigins lists the origins of the [[hosts]] entries.
func (e *Engine) HostOrigins() []string { return e.gate.Hosts() }

// Configured normalizes an origin, or says host_not_allowed.
func (e *Engine) Configured(origin string) (string, error) { return e.gate.configured(origin) }

// Need checks that origin is granted c and returns ctx carrying that grant:
// only such a context lets a service client of the engine mint a JWT for,
// or send a request to, that origin.
func (e *Engine) Need(ctx context.Context, origin string, c capability.Capability) (context.Context, error) {
	if err := e.gate.Allow(origin, c); err != nil {
		return ctx, err
	}
	norm, _ := config.NormalizeOrigin(origin)
	prev, _ := ctx.Value(grantKey{}).(held)
	if slices.Contains(prev, norm) {
		return ctx, nil
	}
	return context.WithValue(ctx, grantKey{}, append(slices.Clip(prev), norm)), nil
}

// requestAllowed is the service clients' gate: a request (and its JWT) to
// origin needs a context that Need granted for it.
func (g *Gate) requestAllowed(ctx context.Context, origin string) error {
	hs, _ := ctx.Value(grantKey{}).(held)
	if slices.Contains(hs, origin) {
		return nil
	}
	return &Error{Code: CodePermissionDenied, Message: "no grant was checked for a request to " + origin,
		Data: map[string]any{"origin": origin}}
}

// gatedTransport refuses, before anything is sent, a request to its origin
// whose context carries no grant for it, except a discovery read.
type gatedTransport struct {
	origin string
	next   http.RoundTripper
}

func (t *gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	discovery := r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/.well-known/")
	if !discovery {
		hs, _ := r.Context().Value(grantKey{}).(held)
		if !slices.Contains(hs, t.origin) || r.URL.Scheme+"://"+r.URL.Host != t.origin && !sameOrigin(r, t.origin) {
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, &Error{Code: CodePermissionDenied, Message: "no grant was checked for a request to " + t.origin,
				Data: map[string]any{"origin": t.origin}}
		}
	}
	return t.next.RoundTrip(r)
}

// sameOrigin compares a request's origin with origin after normalization
// (an explicit :443, upper case).
func sameOrigin(r *http.Request, origin string) bool {
	norm, err := config.NormalizeOrigin(r.URL.Scheme + "://" + r.URL.Host)
	return err == nil && norm == origin
}

// CloseIdleConnections releases the next transport's idle connections.
func (t *gatedTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
