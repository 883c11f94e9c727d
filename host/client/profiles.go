package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"apconnect/host/identity"
	"apconnect/host/proto/profile"
	"apconnect/host/text"
)

// MaxBatchIDs is the most Agent IDs one batch read may carry (Agent
// Profile 7.3).
const MaxBatchIDs = profile.MaxBatchIDs

// ProfileService is the client of one Agent Profile 1.0 service (section
// 7). Reads are anonymous; updates are signed envelopes. It is safe for
// concurrent use.
type ProfileService struct {
	svc *service
}

// ProfileDocument is a materialized profile (Agent Profile 4): service data,
// not verified — the signed history (History) is the evidence. Raw holds
// the whole document as strictly parsed.
type ProfileDocument struct {
	ID               string            `json:"id"`                          // Agent ID
	Name             string            `json:"name"`                        // display name (untrusted)
	Description      string            `json:"description,omitempty"`       // untrusted text
	AvatarURL        string            `json:"avatar_url,omitempty"`        // https URL
	Provider         string            `json:"provider,omitempty"`          // self-declared provider
	Capabilities     []string          `json:"capabilities,omitempty"`      // capability tags
	ServiceEndpoints []ServiceEndpoint `json:"service_endpoints,omitempty"` // protocol endpoints
	Links            []ProfileLink     `json:"links,omitempty"`             // auxiliary links
	// Delegations are the delegation hints as sent.
	Delegations []map[string]any `json:"delegations,omitempty"`
	Extra       map[string]any   `json:"extra,omitempty"` // opaque
	UpdatedAt   int64            `json:"updated_at"`      // Unix ms of the accepted update
	EventID     string           `json:"event_id"`        // event ID of that update
	// Raw is the whole document as strictly parsed.
	Raw map[string]any `json:"-"`
}

// ServiceEndpoint is a profile's service_endpoints item.
type ServiceEndpoint struct {
	Type      string   `json:"type"`                // purpose, such as "agent-api"
	URL       string   `json:"url"`                 // https URL
	Protocols []string `json:"protocols,omitempty"` // protocols served there
}

// ProfileLink is a profile's links item.
type ProfileLink struct {
	Name string `json:"name"` // display label
	URL  string `json:"url"`  // destination (render only http/https)
	Rel  string `json:"rel"`  // relationship: homepage, documentation, …
}

// ProfileUpdateResult is the response to a profile.update.
type ProfileUpdateResult struct {
	// Profile is the accepted (current) profile document.
	Profile *ProfileDocument
	// MaxSeenNonce is the Max-Seen-Nonce response header ("" if absent).
	MaxSeenNonce string
}

// NewProfileService returns the client of the profile service at origin
// (an https origin from the config). hc carries its CA; its redirect policy
// is replaced so that no redirect is followed.
func NewProfileService(origin string, hc *http.Client, opts Options) (*ProfileService, error) {
	svc, err := newService(origin, hc, DiscoveryProfile, profile.Protocol, opts)
	if err != nil {
		return nil, err
	}
	return &ProfileService{svc: svc}, nil
}

// Origin returns the service's normalized origin.
func (p *ProfileService) Origin() string { return p.svc.origin }

// Discovery returns the service's discovery document (cached like a
// Host's).
func (p *ProfileService) Discovery(ctx context.Context) (*Discovery, error) {
	return p.svc.discovery(ctx)
}

// UpdateProfile submits a signed profile.update envelope (POST /v1/profiles)
// and returns the accepted profile document, which must be the signer's. An
// exact resubmission is answered with the current document, which may come
// from a later update. It is not retried; a *NetworkError means the outcome
// is unknown.
func (p *ProfileService) UpdateProfile(ctx context.Context, env *identity.Envelope) (*ProfileUpdateResult, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	if err := profile.CheckEvent(&env.Event); err != nil {
		return nil, fmt.Errorf("client: UpdateProfile takes a profile.update envelope, not %s %s", env.Event.Protocol, env.Event.Type)
	}
	u, err := p.profilesURL(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := p.svc.postEnvelope(ctx, u, env, p.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	doc, err := parseProfile(http.MethodPost, u, resp)
	if err != nil {
		return nil, err
	}
	if doc.ID != env.Event.Actor {
		return nil, bad(http.MethodPost, u, resp.status, fmt.Errorf("/id: profile of %s, not of the signer %s", doc.ID, env.Event.Actor))
	}
	return &ProfileUpdateResult{Profile: doc, MaxSeenNonce: resp.header.Get(HeaderMaxSeenNonce)}, nil
}

// Profile reads the latest profile of an agent (GET /v1/profiles/{id}); an
// unknown profile is the *Error not_found.
func (p *ProfileService) Profile(ctx context.Context, agentID string) (*ProfileDocument, error) {
	u, err := p.profileURL(ctx, agentID)
	if err != nil {
		return nil, err
	}
	resp, err := p.svc.do(ctx, call{method: http.MethodGet, url: u, maxBytes: p.svc.opts.MaxResourceBytes})
	if err != nil {
		return nil, err
	}
	doc, err := parseProfile(http.MethodGet, u, resp)
	if err != nil {
		return nil, err
	}
	if doc.ID != agentID {
		return nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("/id: profile of %s, want %s", doc.ID, agentID))
	}
	return doc, nil
}

// History reads an agent's accepted profile.update envelopes, newest first
// (GET /v1/profiles/{id}/events). limit 0 is the service default (1, the
// latest). Envelopes are shape-checked and must be profile.update events
// of agentID naming it as payload.id (profile.CheckUpdateOf), in
// descending nonce order; their hashes and signatures are not verified.
func (p *ProfileService) History(ctx context.Context, agentID string, limit int, cursor string) (*Page[*identity.Envelope], error) {
	if limit < 0 {
		return nil, errors.New("client: negative limit")
	}
	base, err := p.profileURL(ctx, agentID)
	if err != nil {
		return nil, err
	}
	u := base + "/events"
	qs := url.Values{}
	setInt(qs, "limit", int64(limit))
	setStr(qs, "cursor", cursor)
	resp, err := p.svc.do(ctx, call{method: http.MethodGet, url: u, query: qs, maxBytes: p.svc.opts.MaxResponseBytes})
	if err != nil {
		return nil, err
	}
	return decodePage(u, resp, limit, func(v any, ptr string, prev []*identity.Envelope) (*identity.Envelope, error) {
		env, err := identity.EnvelopeFromValue(v, ptr)
		if err != nil {
			return nil, err
		}
		if err := profile.CheckUpdateOf(env, agentID); err != nil {
			return nil, fmt.Errorf("%s: not a profile.update of %s: %w", ptr, agentID, err)
		}
		if len(prev) > 0 && env.Event.Nonce >= prev[len(prev)-1].Event.Nonce {
			return nil, fmt.Errorf("%s: history is not newest first by nonce", ptr)
		}
		return env, nil
	})
}

// Batch reads up to MaxBatchIDs profiles in one request
// (POST /v1/profiles/batch); unknown profiles are omitted. Every returned
// profile must be one of ids. A batch read changes nothing, so it is
// retried like a read.
func (p *ProfileService) Batch(ctx context.Context, ids []string) ([]*ProfileDocument, error) {
	if len(ids) > MaxBatchIDs {
		return nil, fmt.Errorf("client: %d ids in one batch; at most %d", len(ids), MaxBatchIDs)
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !identity.ValidAgentID(id) {
			return nil, fmt.Errorf("client: invalid Agent ID %q", text.Truncate(id, 80))
		}
		want[id] = true
	}
	if ids == nil {
		ids = []string{}
	}
	u, err := p.svc.endpoint(ctx, profile.EndpointBatch, profile.PathBatch)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]any{"ids": ids})
	if err != nil {
		return nil, err
	}
	resp, err := p.svc.do(ctx, call{method: http.MethodPost, url: u, body: body, maxBytes: p.svc.opts.MaxResponseBytes})
	if err != nil {
		return nil, err
	}
	items, _, err := parseList(resp.body)
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	out := make([]*ProfileDocument, 0, len(items))
	for i, it := range items {
		doc, err := profileFromValue(it, itemPointer(i))
		if err != nil {
			return nil, bad(http.MethodPost, u, resp.status, err)
		}
		if !want[doc.ID] {
			return nil, bad(http.MethodPost, u, resp.status, fmt.Errorf("%s: profile %s was not asked for", itemPointer(i), doc.ID))
		}
		out = append(out, doc)
	}
	return out, nil
}

// profilesURL is the profiles endpoint.
func (p *ProfileService) profilesURL(ctx context.Context) (string, error) {
	return p.svc.endpoint(ctx, profile.EndpointProfiles, profile.PathProfiles)
}

// profileURL is the profiles endpoint extended with a checked Agent ID.
func (p *ProfileService) profileURL(ctx context.Context, agentID string) (string, error) {
	if !identity.ValidAgentID(agentID) {
		return "", fmt.Errorf("client: invalid Agent ID %q", text.Truncate(agentID, 80))
	}
	base, err := p.profilesURL(ctx)
	if err != nil {
		return "", err
	}
	return base + "/" + url.PathEscape(agentID), nil
}

// parseProfile reads a single profile document.
func parseProfile(method, u string, resp *response) (*ProfileDocument, error) {
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		return nil, bad(method, u, resp.status, err)
	}
	doc, err := profileFromValue(v, "")
	if err != nil {
		return nil, bad(method, u, resp.status, err)
	}
	return doc, nil
}
