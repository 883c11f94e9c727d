package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"

	"apconnect/host/identity"
)

// MaxDiscoveryBytes bounds a discovery document.
const MaxDiscoveryBytes = 256 << 10

// Discovery is a protocol discovery document (Agent Identity 8.4), with the
// members ADP adds (15.1) and the whole document kept raw.
type Discovery struct {
	Protocol  string            `json:"protocol"`            // "agent-discourse/1.0" or "agent-profile/1.0"
	Service   string            `json:"service"`             // the service origin (JWT audience)
	Endpoints map[string]string `json:"endpoints,omitempty"` // absolute URLs by endpoint name
	Features  []string          `json:"features,omitempty"`  // feature strings
	// RegisteredPacks is ADP's registered_packs.
	RegisteredPacks []string `json:"registered_packs,omitempty"`
	// Profile is ADP's profile object as sent: the closed
	// {service, required?} of SDK 0.12.6, or the {mode, service, protocol}
	// older apconnect hubs sent. Read it with ProfileService.
	Profile map[string]any `json:"profile,omitempty"`
	// Raw is the whole document as parsed; nil for the empty document that
	// stands for a service without one.
	Raw map[string]any `json:"-"`
}

// Has reports whether the document lists a feature.
func (d *Discovery) Has(feature string) bool { return slices.Contains(d.Features, feature) }

// Endpoint returns the URL listed for an endpoint name, "" when none.
func (d *Discovery) Endpoint(name string) string { return d.Endpoints[name] }

// ProfileService returns the profile member's service origin and whether
// the host requires a verified profile, in either shape of Profile; ""
// when the document names no profile service (the older {"mode":
// "optional"} included).
func (d *Discovery) ProfileService() (service string, required bool) {
	service, _ = d.Profile["service"].(string)
	required, _ = d.Profile["required"].(bool)
	return service, required
}

// FetchDiscovery reads GET {origin}/.well-known/{name} and checks it: the
// protocol matches want, service is origin itself, and every endpoint is an
// absolute https URL on that same origin (an endpoint elsewhere would send
// signed writes or tokens to a host the operator never configured). It makes
// one attempt; Host.Discovery adds caching and retries.
func FetchDiscovery(ctx context.Context, hc *http.Client, origin, name, want string) (*Discovery, error) {
	origin, err := identity.NormalizeOrigin(origin)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/.well-known/"+name, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDiscoveryBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s discovery: %w", name, err)
	}
	if len(body) > MaxDiscoveryBytes {
		return nil, fmt.Errorf("%s discovery document is larger than %d bytes", name, MaxDiscoveryBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s discovery: HTTP %d", name, resp.StatusCode)
	}
	return parseDiscovery(body, origin, name, want)
}

// parseDiscovery strictly parses and checks a discovery document.
func parseDiscovery(body []byte, origin, name, want string) (*Discovery, error) {
	v, err := identity.ParseStrict(body)
	if err != nil {
		return nil, fmt.Errorf("%s discovery: %w", name, err)
	}
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s discovery: not a JSON object", name)
	}
	var d Discovery
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, fmt.Errorf("%s discovery: %w", name, err)
	}
	d.Raw = raw
	if d.Protocol != want {
		return nil, fmt.Errorf("%s discovery: protocol %q, want %q", name, d.Protocol, want)
	}
	svc, err := identity.NormalizeOrigin(d.Service)
	if err != nil || svc != origin {
		return nil, fmt.Errorf("%s discovery: service %q is not the configured origin %s", name, d.Service, origin)
	}
	names := make([]string, 0, len(d.Endpoints))
	for k := range d.Endpoints {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := checkOnOrigin(d.Endpoints[k], origin); err != nil {
			return nil, fmt.Errorf("%s discovery: endpoint %s: %w", name, k, err)
		}
	}
	return &d, nil
}

// checkOnOrigin accepts an absolute https URL without user info, query or
// fragment whose origin is origin.
func checkOnOrigin(raw, origin string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Host == "" || u.Opaque != "" {
		return errors.New("not an absolute https URL")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("an endpoint URL carries no query or fragment")
	}
	if o, err := identity.NormalizeOrigin(u.Scheme + "://" + u.Host); err != nil || o != origin {
		return fmt.Errorf("%w (%s)", ErrOtherOrigin, u.Host)
	}
	return nil
}
