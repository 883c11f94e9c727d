package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/delegation"
	"apconnect/host/text"
)

// DiscoveryDelegation is the discovery name of Agent Delegation.
const DiscoveryDelegation = "agent-delegation"

// MaxDelegationEventPages bounds the pages AllEvents reads for one
// credential (a service that never stops paging is refused, not followed).
const MaxDelegationEventPages = 100

// DelegationService is the client of one Agent Delegation 1.0 service
// (section 9), as the SDK's DelegationClient speaks to it: the discovery
// document (optional: the RECOMMENDED paths apply without one), credential
// reads, their accepted records, signed submissions and queries. Endpoints
// must be on the service's origin. Reads are anonymous; an enumeration
// query carries a request JWT minted with the signer. It is safe for
// concurrent use.
type DelegationService struct {
	svc    *service
	signer identity.Signer
}

// DelegationSubmitResult is the response to a submitted grant or
// revocation.
type DelegationSubmitResult struct {
	// Credential is the credential after the event.
	Credential *delegation.Credential
	// Raw is the credential as the service sent it.
	Raw map[string]any
	// MaxSeenNonce is the Max-Seen-Nonce response header ("" if absent).
	MaxSeenNonce string
}

// NewDelegationService returns the client of the delegation service at
// origin (an https origin from the config). hc carries its CA; its redirect
// policy is replaced so that no redirect is followed. signer may be nil: the
// client then refuses enumeration queries with ErrNoSigner.
func NewDelegationService(origin string, hc *http.Client, signer identity.Signer, opts Options) (*DelegationService, error) {
	svc, err := newService(origin, hc, DiscoveryDelegation, delegation.Protocol, opts)
	if err != nil {
		return nil, err
	}
	return &DelegationService{svc: svc, signer: signer}, nil
}

// Origin returns the service's normalized origin.
func (d *DelegationService) Origin() string { return d.svc.origin }

// Discovery returns the service's discovery document (cached like a
// Host's); a service without one yields an empty document.
func (d *DelegationService) Discovery(ctx context.Context) (*Discovery, error) {
	return d.svc.discovery(ctx)
}

// Endpoints returns the endpoints the client uses: the discovered ones,
// with the RECOMMENDED paths for those the document omits (the query
// endpoint derives from the delegations endpoint, as the SDK derives it).
func (d *DelegationService) Endpoints(ctx context.Context) (delegation.Endpoints, error) {
	disc, err := d.svc.discovery(ctx)
	if err != nil {
		return delegation.Endpoints{}, err
	}
	return delegation.ResolveEndpoints(d.svc.origin, &delegation.Discovery{
		Endpoints: delegation.Endpoints{Delegations: disc.Endpoint("delegations"), Query: disc.Endpoint("query")},
	}), nil
}

// Credential reads a credential (GET {delegations}/{id}); an unknown one is
// the *Error not_found (HTTP 404). The credential must be the one asked
// for; its rules are the caller's (delegation.VerifyCredential).
func (d *DelegationService) Credential(ctx context.Context, id string) (*delegation.Credential, map[string]any, error) {
	ep, err := d.Endpoints(ctx)
	if err != nil {
		return nil, nil, err
	}
	u, err := delegation.CredentialURL(ep.Delegations, id)
	if err != nil {
		return nil, nil, err
	}
	resp, err := d.svc.do(ctx, call{method: http.MethodGet, url: u, maxBytes: d.svc.opts.MaxResourceBytes})
	if err != nil {
		return nil, nil, err
	}
	cred, raw, err := parseCredential(resp.body, "")
	if err != nil {
		return nil, nil, bad(http.MethodGet, u, resp.status, err)
	}
	if cred.ID != id {
		return nil, nil, bad(http.MethodGet, u, resp.status, fmt.Errorf("/id: credential %q, want %q", text.Truncate(cred.ID, 130), id))
	}
	return cred, raw, nil
}

// Events reads one page of a credential's accepted records, in acceptance
// order (GET {delegations}/{id}/events?cursor). Records are shape-checked
// (delegation.RecordFromValue); their signatures and rules are the
// caller's.
func (d *DelegationService) Events(ctx context.Context, id, cursor string) (*Page[*delegation.Record], error) {
	ep, err := d.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	u, err := delegation.CredentialURL(ep.Delegations, id)
	if err != nil {
		return nil, err
	}
	u += "/events"
	qs := url.Values{}
	setStr(qs, "cursor", cursor)
	resp, err := d.svc.do(ctx, call{method: http.MethodGet, url: u, query: qs, maxBytes: d.svc.opts.MaxResponseBytes})
	if err != nil {
		return nil, err
	}
	return decodePage(u, resp, 0, func(v any, ptr string, _ []*delegation.Record) (*delegation.Record, error) {
		return delegation.RecordFromValue(v, ptr)
	})
}

// AllEvents reads every accepted record of a credential, following
// next_cursor for at most MaxDelegationEventPages pages.
func (d *DelegationService) AllEvents(ctx context.Context, id string) ([]delegation.Record, error) {
	var out []delegation.Record
	cursor := ""
	for range MaxDelegationEventPages {
		page, err := d.Events(ctx, id, cursor)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Items {
			out = append(out, *r)
		}
		if page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("client: the history of %s has more than %d pages", id, MaxDelegationEventPages)
}

// Submit POSTs a signed delegation.grant or delegation.revoke envelope to
// the delegations endpoint and returns the credential after it. It is not
// retried; a *NetworkError means the outcome is unknown (an exact
// resubmission is answered idempotently).
func (d *DelegationService) Submit(ctx context.Context, env *identity.Envelope) (*DelegationSubmitResult, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	if env.Event.Protocol != delegation.Protocol || (env.Event.Type != delegation.TypeGrant && env.Event.Type != delegation.TypeRevoke) {
		return nil, fmt.Errorf("client: Submit takes a delegation envelope, not %s %s", env.Event.Protocol, env.Event.Type)
	}
	ep, err := d.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := d.svc.postEnvelope(ctx, ep.Delegations, env, d.svc.opts.MaxResourceBytes)
	if err != nil {
		return nil, err
	}
	cred, raw, err := parseCredential(resp.body, "")
	if err != nil {
		return nil, bad(http.MethodPost, ep.Delegations, resp.status, err)
	}
	payload, _ := env.Event.Payload.(map[string]any)
	if id, _ := payload["id"].(string); cred.ID != id {
		return nil, bad(http.MethodPost, ep.Delegations, resp.status, fmt.Errorf("/id: credential %q, not the submitted %q", text.Truncate(cred.ID, 130), id))
	}
	return &DelegationSubmitResult{Credential: cred, Raw: raw, MaxSeenNonce: resp.header.Get(HeaderMaxSeenNonce)}, nil
}

// DelegationQueryResult is one page of a query.
type DelegationQueryResult struct {
	// Credentials are the credentials as parsed, Raw as sent.
	Credentials []*delegation.Credential
	Raw         []map[string]any
	// NextCursor is next_cursor ("" on the last page).
	NextCursor string
	// URL is the query endpoint asked.
	URL string
}

// Query POSTs a query (POST {query}). A public query is an existence check
// and names both subject and principal_id; with enumerate the request
// carries a request JWT (the subject's own credentials, or a controller's
// enumeration of its principal). The request is checked first
// (delegation.ValidateQueryRequest), so a query the service must refuse is
// never sent. A query that changes nothing is retried like a read.
func (d *DelegationService) Query(ctx context.Context, q *delegation.QueryRequest, enumerate bool) (*DelegationQueryResult, error) {
	if err := delegation.ValidateQueryRequest(q, enumerate); err != nil {
		return nil, err
	}
	ep, err := d.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	c := call{method: http.MethodPost, url: ep.Query, body: body, maxBytes: d.svc.opts.MaxResponseBytes}
	if enumerate {
		c.auth, c.signer = authRequired, d.signer
	}
	resp, err := d.svc.do(ctx, c)
	if err != nil {
		return nil, err
	}
	items, next, err := parseList(resp.body)
	if err != nil {
		return nil, bad(http.MethodPost, ep.Query, resp.status, err)
	}
	out := &DelegationQueryResult{NextCursor: next, URL: ep.Query, Credentials: make([]*delegation.Credential, 0, len(items)),
		Raw: make([]map[string]any, 0, len(items))}
	for i, it := range items {
		cred, err := delegation.CredentialFromValue(it, itemPointer(i))
		if err != nil {
			return nil, bad(http.MethodPost, ep.Query, resp.status, err)
		}
		out.Credentials = append(out.Credentials, cred)
		out.Raw = append(out.Raw, it.(map[string]any))
	}
	return out, nil
}

// parseCredential strictly parses a credential and keeps it as sent.
func parseCredential(body []byte, ptr string) (*delegation.Credential, map[string]any, error) {
	obj, err := parseObject(body)
	if err != nil {
		return nil, nil, err
	}
	cred, err := delegation.CredentialFromValue(obj, ptr)
	if err != nil {
		return nil, nil, err
	}
	return cred, obj, nil
}

// ErrPrincipalRedirect is a principal read answered with a redirect:
// principal URLs are read without following any.
var ErrPrincipalRedirect = errors.New("the principal URL answered with a redirect; apconnect follows none (name the principal by its canonical id)")

// FetchPrincipal reads a principal document (Agent Delegation 3) with hc:
// one GET with Accept: application/json, no redirect followed (a redirect
// is ErrPrincipalRedirect), within delegation.PrincipalFetchTimeout and
// delegation.MaxPrincipalDocumentBytes; any status but 200 is an error. It
// returns the body and the URL read, which without redirects is the URL
// asked: a delegation.PrincipalReader. Which URLs may be read at all is the
// caller's decision (the connector allows only granted [[hosts]] origins).
func FetchPrincipal(ctx context.Context, hc *http.Client, u string) ([]byte, string, error) {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "https" || parsed.Host == "" || parsed.User != nil {
		return nil, "", errors.New("a principal URL is an absolute https URL without user info")
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return ErrPrincipalRedirect }
	if c.Timeout <= 0 || c.Timeout > delegation.PrincipalFetchTimeout {
		c.Timeout = delegation.PrincipalFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, delegation.PrincipalFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	began := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, ErrPrincipalRedirect) {
			return nil, "", ErrPrincipalRedirect
		}
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, "", ErrPrincipalRedirect
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("HTTP %d after %s", resp.StatusCode, time.Since(began).Round(time.Millisecond))
	}
	if resp.ContentLength > delegation.MaxPrincipalDocumentBytes {
		return nil, "", fmt.Errorf("the principal document is %d bytes; at most %d are read", resp.ContentLength, delegation.MaxPrincipalDocumentBytes)
	}
	body, err := readBounded(resp.Body, delegation.MaxPrincipalDocumentBytes, resp.ContentLength)
	if err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	return body, u, nil
}
