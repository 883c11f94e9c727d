package knowledge

import (
	"fmt"
	"slices"
	"sort"

	"apconnect/host/identity"
)

// Discovery is a service's discovery document, served at WellKnownPath.
type Discovery struct {
	Service string // the serving origin
	// Endpoints maps endpoint keys (EndpointEvents, …) to absolute URLs on
	// the serving origin. A key without an entry defaults to
	// Service + DefaultEndpointPrefix + key.
	Endpoints   map[string]string
	Features    []string
	Limits      map[string]int64
	SearchModes []string // with FeatureRankedSearch only; includes lexical
	Peers       []string // other origins, at most MaxPeers
}

// NewDiscovery returns the document of a service at origin with the
// events, query and batch endpoints under DefaultEndpointPrefix, and, when
// modes is not empty, ranked search: FeatureRankedSearch, the search
// endpoint and the modes (which must include ModeLexical).
func NewDiscovery(origin string, modes ...string) *Discovery {
	d := &Discovery{Service: origin, Endpoints: map[string]string{}}
	for _, k := range []string{EndpointEvents, EndpointQuery, EndpointBatch} {
		d.Endpoints[k] = origin + DefaultEndpointPrefix + k
	}
	if len(modes) > 0 {
		d.Endpoints[EndpointSearch] = origin + DefaultEndpointPrefix + EndpointSearch
		d.Features = append(d.Features, FeatureRankedSearch)
		d.SearchModes = slices.Clone(modes)
	}
	return d
}

// Value returns the document as a JSON object value.
func (d *Discovery) Value() map[string]any {
	m := map[string]any{"protocol": Protocol, "service": d.Service}
	if d.Endpoints != nil {
		eps := map[string]any{}
		for k, v := range d.Endpoints {
			eps[k] = v
		}
		m["endpoints"] = eps
	}
	if d.Features != nil {
		m["features"] = stringValues(d.Features)
	}
	if d.Limits != nil {
		lim := map[string]any{}
		for k, v := range d.Limits {
			lim[k] = v
		}
		m["limits"] = lim
	}
	if d.SearchModes != nil {
		m["search_modes"] = stringValues(d.SearchModes)
	}
	if d.Peers != nil {
		m["peers"] = stringValues(d.Peers)
	}
	return m
}

func stringValues(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// RankedSearch reports whether the document advertises ranked search.
func (d *Discovery) RankedSearch() bool { return slices.Contains(d.Features, FeatureRankedSearch) }

// Endpoint returns the URL of an endpoint: the document's, or the default
// under DefaultEndpointPrefix. The search endpoint exists only when ranked
// search is advertised; otherwise asking for it is unsupported_search_mode,
// as the SDK's client answers.
func (d *Discovery) Endpoint(key string) (string, error) {
	if key == EndpointSearch && !d.RankedSearch() {
		return "", errorf(CodeUnsupportedSearchMode, "", "ranked search is not advertised by %s", d.Service)
	}
	if u, ok := d.Endpoints[key]; ok {
		return u, nil
	}
	return d.Service + DefaultEndpointPrefix + key, nil
}

// ValidateDiscovery is the client's check of a discovery document read from
// origin (the SDK's validate_knowledge_discovery): the discoveryDocument
// schema (ranked-search requires the search endpoint and search_modes with
// lexical; without it neither may appear), a serialized origin equal to
// origin, every endpoint an HTTPS URL on that origin without query or
// fragment, and peers serialized origins other than origin. Every failure
// is invalid_discovery. A service checks its own document the same way.
func ValidateDiscovery(doc any, origin string) (*Discovery, error) {
	if err := checkStrict(doc, "", 0); err != nil {
		return nil, recode(err, CodeInvalidDiscovery)
	}
	if err := ValidateSchema(doc, "discoveryDocument"); err != nil {
		return nil, recode(err, CodeInvalidDiscovery)
	}
	m := obj(doc)
	d := &Discovery{Service: str(m["service"])}
	if !identity.ValidOrigin(origin) {
		return nil, errorf(CodeInvalidDiscovery, "", "%q is not a serialized HTTPS origin", describe(origin))
	}
	if !identity.ValidOrigin(d.Service) || d.Service != origin {
		return nil, errorf(CodeInvalidDiscovery, "/service", "the document names service %q, not the serving origin %s", describe(d.Service), origin)
	}
	if eps, ok := m["endpoints"].(map[string]any); ok {
		d.Endpoints = map[string]string{}
		keys := make([]string, 0, len(eps))
		for k := range eps {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			u, isString := eps[k].(string)
			if o, ok := endpointOrigin(u); !isString || !ok || o != origin {
				return nil, errorf(CodeInvalidDiscovery, "/endpoints/"+k, "endpoint %s must be an HTTPS URL on %s", k, origin)
			}
			if !isEndpointURL(u) {
				return nil, errorf(CodeInvalidDiscovery, "/endpoints/"+k, "endpoint %s must have no query or fragment", k)
			}
			d.Endpoints[k] = u
		}
	}
	d.Features = stringList(m["features"])
	d.SearchModes = stringList(m["search_modes"])
	if lim, ok := m["limits"].(map[string]any); ok {
		d.Limits = map[string]int64{}
		for k, v := range lim {
			d.Limits[k], _ = intOf(v)
		}
	}
	d.Peers = stringList(m["peers"])
	for i, p := range d.Peers {
		if !identity.ValidOrigin(p) || p == origin {
			return nil, errorf(CodeInvalidDiscovery, fmt.Sprintf("/peers/%d", i), "a peer must be a serialized HTTPS origin other than the service")
		}
	}
	return d, nil
}

// isEndpointURL reports whether u has no query or fragment.
func isEndpointURL(u string) bool {
	for i := 0; i < len(u); i++ {
		if u[i] == '?' || u[i] == '#' {
			return false
		}
	}
	return true
}

func stringList(v any) []string {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = str(x)
	}
	return out
}
