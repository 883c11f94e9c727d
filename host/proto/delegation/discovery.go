package delegation

import (
	"net/url"
	"strings"

	"apconnect/host/identity"
)

// Paths of the service (Agent Delegation 9): the discovery document at the
// service origin, and the RECOMMENDED base of the credential reads and
// submission; the query endpoint defaults to {delegations}/query, a
// credential to {delegations}/{id} and its history to {delegations}/{id}/events.
const (
	WellKnownPath          = "/.well-known/agent-delegation"
	DefaultDelegationsPath = "/v1/delegations"
)

// Endpoints are a delegation service's endpoint URLs; empty is absent.
type Endpoints struct {
	Delegations string
	Query       string
}

// Discovery is the discovery document at WellKnownPath.
type Discovery struct {
	Protocol  string
	Service   string
	Endpoints Endpoints
	Features  []string
}

// DefaultEndpoints are the RECOMMENDED endpoints of the service at origin.
func DefaultEndpoints(origin string) Endpoints {
	d := strings.TrimRight(origin, "/") + DefaultDelegationsPath
	return Endpoints{Delegations: d, Query: d + "/query"}
}

// NewDiscovery is the discovery document a service at origin serves, with
// both endpoints at their RECOMMENDED paths.
func NewDiscovery(origin string, features ...string) Discovery {
	return Discovery{Protocol: Protocol, Service: origin, Endpoints: DefaultEndpoints(origin), Features: cloneStrings(features)}
}

// DiscoveryFromValue reads a parsed discovery document: the protocol must
// be Protocol and service an origin; endpoints is an object whose members
// delegations and query are optional HTTPS URLs; features, when present, an
// array of strings. Errors carry invalid_request.
func DiscoveryFromValue(v any) (*Discovery, error) {
	o, err := asObject(v, "", CodeInvalidRequest, "discovery document")
	if err != nil {
		return nil, err
	}
	d := &Discovery{}
	if d.Protocol, _, err = o.str("protocol", true); err != nil {
		return nil, err
	}
	if d.Protocol != Protocol {
		return nil, newError(o.code, "/protocol", "expected %s, got %s", Protocol, trunc(d.Protocol))
	}
	if d.Service, _, err = o.str("service", true); err != nil {
		return nil, err
	}
	if !identity.ValidOrigin(d.Service) {
		return nil, newError(o.code, "/service", "service must be a serialized HTTPS origin")
	}
	ep, ok := o.m["endpoints"]
	if !ok {
		return nil, o.missing("endpoints")
	}
	eo, err := asObject(ep, "/endpoints", o.code, "endpoints")
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"delegations", &d.Endpoints.Delegations}, {"query", &d.Endpoints.Query}} {
		s, has, err := eo.str(f.key, false)
		if err != nil {
			return nil, err
		}
		if has && !validHTTPSURL(s) {
			return nil, newError(o.code, eo.at(f.key), "%s must be an HTTPS URL", f.key)
		}
		*f.dst = s
	}
	if d.Features, err = o.strs("features", false); err != nil {
		return nil, err
	}
	return d, nil
}

// ResolveEndpoints returns the endpoints a client of the service at origin
// uses: the discovered ones, which clients MUST prefer, with the
// RECOMMENDED paths for those the document omits (or for all of them when d
// is nil: discovery is optional). The query default derives from the
// delegations endpoint, as the SDK's client derives it.
func ResolveEndpoints(origin string, d *Discovery) Endpoints {
	out := DefaultEndpoints(origin)
	if d == nil {
		return out
	}
	if d.Endpoints.Delegations != "" {
		out.Delegations = strings.TrimRight(d.Endpoints.Delegations, "/")
		out.Query = out.Delegations + "/query"
	}
	if d.Endpoints.Query != "" {
		out.Query = d.Endpoints.Query
	}
	return out
}

// CredentialURL is the URL of a credential under a delegations endpoint;
// the id must be valid (ValidateID), so it needs no escaping.
func CredentialURL(delegations, id string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	return strings.TrimRight(delegations, "/") + "/" + id, nil
}

// EventsURL is the URL of a credential's accepted records, with the page
// cursor when one is given.
func EventsURL(delegations, id, cursor string) (string, error) {
	u, err := CredentialURL(delegations, id)
	if err != nil {
		return "", err
	}
	u += "/events"
	if cursor != "" {
		u += "?cursor=" + url.QueryEscape(cursor)
	}
	return u, nil
}

// Value returns the document as a JSON object value.
func (d *Discovery) Value() map[string]any {
	ep := map[string]any{}
	if d.Endpoints.Delegations != "" {
		ep["delegations"] = d.Endpoints.Delegations
	}
	if d.Endpoints.Query != "" {
		ep["query"] = d.Endpoints.Query
	}
	m := map[string]any{"protocol": d.Protocol, "service": d.Service, "endpoints": ep}
	if len(d.Features) > 0 {
		m["features"] = cloneStrings(d.Features)
	}
	return m
}

// MarshalJSON writes the document in canonical (JCS) form.
func (d Discovery) MarshalJSON() ([]byte, error) { return identity.Canonicalize(d.Value()) }
