package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"

	"apconnect/host/identity"
)

// MaxDiscoveryBytes bounds a discovery document.
const MaxDiscoveryBytes = 256 << 10

// Discovery is a protocol discovery document (Agent Identity 8.4), with the
// members ADP adds kept raw.
type Discovery struct {
	Protocol  string            `json:"protocol"`
	Service   string            `json:"service"`
	Endpoints map[string]string `json:"endpoints,omitempty"`
	Features  []string          `json:"features,omitempty"`
	// Raw is the whole document as parsed.
	Raw map[string]any `json:"-"`
}

// FetchDiscovery reads GET {origin}/.well-known/{name} and checks it: the
// protocol matches want, service is origin itself, and every endpoint is an
// absolute https URL on that same origin (an endpoint elsewhere would send
// signed writes or tokens to a host the operator never configured).
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
		u, err := url.Parse(d.Endpoints[k])
		if err != nil || u.Scheme != "https" || u.User != nil {
			return nil, fmt.Errorf("%s discovery: endpoint %s is not an absolute https URL", name, k)
		}
		if o, err := identity.NormalizeOrigin(u.Scheme + "://" + u.Host); err != nil || o != origin {
			return nil, fmt.Errorf("%s discovery: endpoint %s is on another origin (%s); refused", name, k, u.Host)
		}
	}
	return &d, nil
}
