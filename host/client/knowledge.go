package client

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"apconnect/host/identity"
	"apconnect/host/proto/knowledge"
)

// DiscoveryKnowledge is the discovery name of Agent Knowledge.
const DiscoveryKnowledge = "agent-knowledge"

// maxKnowledgePageBytes bounds one query, batch or search answer: a page
// of Agent Knowledge records may hold up to 1000 of them, each up to the
// envelope limit, far beyond a list page of the other protocols.
const maxKnowledgePageBytes = 64 << 20

// KnowledgeService is the client of one Agent Knowledge 1.0 service, as
// the SDK's KnowledgeClient: the discovery document is required (read once
// and cached; every endpoint comes from it, on the service's origin), no
// redirect is followed, and every answer is checked with the rules
// package's response validators before it is returned — a record must
// verify and be the one asked for, a page must hold the service's origin,
// stay within its checkpoint, keep seq order and match the request's
// filters (and, for a lexical search, its text). An answer that fails is a
// *ResponseError wrapping an invalid_response *identity.Error. Reads are
// anonymous; a submission carries a request JWT when the client has a
// signer. It is safe for concurrent use.
type KnowledgeService struct {
	svc    *service
	signer identity.Signer

	mu   sync.Mutex
	disc *knowledge.Discovery
	raw  map[string]any
}

// NewKnowledgeService returns the client of the knowledge service at origin
// (an https origin from the config). hc carries its CA; its redirect policy
// is replaced so that no redirect is followed. signer may be nil: the
// client then submits anonymously.
func NewKnowledgeService(origin string, hc *http.Client, signer identity.Signer, opts Options) (*KnowledgeService, error) {
	svc, err := newService(origin, hc, DiscoveryKnowledge, knowledge.Protocol, opts)
	if err != nil {
		return nil, err
	}
	return &KnowledgeService{svc: svc, signer: signer}, nil
}

// Origin returns the service's normalized origin.
func (k *KnowledgeService) Origin() string { return k.svc.origin }

// Discovery returns the service's discovery document, validated
// (knowledge.ValidateDiscovery: the serving origin, endpoints on it,
// ranked search with the lexical mode or neither). It is read once and
// cached; a service without one (404) cannot be used.
func (k *KnowledgeService) Discovery(ctx context.Context) (*knowledge.Discovery, error) {
	d, _, err := k.discovery(ctx)
	return d, err
}

// DiscoveryDocument returns the discovery document as the service sent it
// (validated like Discovery).
func (k *KnowledgeService) DiscoveryDocument(ctx context.Context) (map[string]any, error) {
	_, raw, err := k.discovery(ctx)
	return raw, err
}

// InvalidateDiscovery drops the cached discovery document.
func (k *KnowledgeService) InvalidateDiscovery() {
	k.mu.Lock()
	k.disc, k.raw = nil, nil
	k.mu.Unlock()
}

func (k *KnowledgeService) discovery(ctx context.Context) (*knowledge.Discovery, map[string]any, error) {
	k.mu.Lock()
	d, raw := k.disc, k.raw
	k.mu.Unlock()
	if d != nil {
		return d, raw, nil
	}
	u := k.svc.origin + knowledge.WellKnownPath
	resp, err := k.svc.do(ctx, call{method: http.MethodGet, url: u, auth: authNone, maxBytes: MaxDiscoveryBytes, discovery: true})
	if err != nil {
		return nil, nil, err
	}
	v, err := k.parse(http.MethodGet, u, resp)
	if err != nil {
		return nil, nil, err
	}
	if d, err = knowledge.ValidateDiscovery(v, k.svc.origin); err != nil {
		return nil, nil, bad(http.MethodGet, u, resp.status, err)
	}
	raw, _ = v.(map[string]any)
	k.mu.Lock()
	k.disc, k.raw = d, raw
	k.mu.Unlock()
	return d, raw, nil
}

// endpoint returns the URL of a discovery endpoint (knowledge.Discovery
// Endpoint: the document's, or the default path; search only with ranked
// search, else unsupported_search_mode).
func (k *KnowledgeService) endpoint(ctx context.Context, key string) (string, error) {
	d, err := k.Discovery(ctx)
	if err != nil {
		return "", err
	}
	return d.Endpoint(key)
}

// parse strictly parses a 200 answer: any other success status, or a body
// that is not strict I-JSON, is invalid_response.
func (k *KnowledgeService) parse(method, u string, resp *response) (any, error) {
	if resp.status != http.StatusOK {
		return nil, bad(method, u, resp.status, identity.NewError(knowledge.CodeInvalidResponse, "", "the service answered HTTP %d, not 200", resp.status))
	}
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		e := identity.NewError(knowledge.CodeInvalidResponse, "", "the answer is not strict I-JSON: %v", err)
		e.Err = err
		return nil, bad(method, u, resp.status, e)
	}
	return v, nil
}

// pageBytes bounds an answer of up to n records.
func (k *KnowledgeService) pageBytes(n int) int64 {
	b := int64(n)*(knowledge.DefaultMaxEnvelopeBytes+1024) + 64<<10
	return min(max(b, k.svc.opts.MaxResponseBytes), maxKnowledgePageBytes)
}

// Submit sends a signed Knowledge envelope (POST {events}) and returns its
// acceptance record, which must be the envelope's (an exact resubmission
// returns the original record). The envelope is validated first
// (knowledge.ValidateEnvelope); the request carries a request JWT when the
// client has a signer. It is not retried: a *NetworkError means the
// outcome is unknown, and resending the same envelope is safe.
func (k *KnowledgeService) Submit(ctx context.Context, env *identity.Envelope) (*knowledge.Record, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	body, err := env.MarshalJSON()
	if err != nil {
		return nil, err
	}
	v, err := identity.ParseStrict(body)
	if err != nil {
		return nil, err
	}
	if _, err := knowledge.ValidateEnvelope(v); err != nil {
		return nil, err
	}
	u, err := k.endpoint(ctx, knowledge.EndpointEvents)
	if err != nil {
		return nil, err
	}
	resp, err := k.svc.do(ctx, call{method: http.MethodPost, url: u, body: body, auth: authIfSigner, signer: k.signer, write: true,
		maxBytes: k.pageBytes(1)})
	if err != nil {
		return nil, err
	}
	return k.record(http.MethodPost, u, resp, env.Hash)
}

// record checks a single acceptance record answer.
func (k *KnowledgeService) record(method, u string, resp *response, id string) (*knowledge.Record, error) {
	v, err := k.parse(method, u, resp)
	if err != nil {
		return nil, err
	}
	rec, err := knowledge.ValidateRecord(v, id)
	if err != nil {
		return nil, bad(method, u, resp.status, err)
	}
	return rec, nil
}

// Event reads one acceptance record (GET {events}/{id}); an unknown id is
// the *Error not_found.
func (k *KnowledgeService) Event(ctx context.Context, id string) (*knowledge.Record, error) {
	if !knowledge.ValidID(id) {
		return nil, identity.NewError(knowledge.CodeInvalidRequest, "", "the event id must canonically encode 32 bytes in unpadded base64url")
	}
	base, err := k.endpoint(ctx, knowledge.EndpointEvents)
	if err != nil {
		return nil, err
	}
	u := base + "/" + id
	resp, err := k.svc.do(ctx, call{method: http.MethodGet, url: u, auth: authNone, maxBytes: k.pageBytes(1)})
	if err != nil {
		return nil, err
	}
	return k.record(http.MethodGet, u, resp, id)
}

// Query reads one page of an exact query (GET {query}?…), checked with
// knowledge.ValidateQueryResponse. q comes from knowledge.QueryFromValue
// or ParseQuery. Follow a traversal with Traverse, which also checks that
// its pages belong together.
func (k *KnowledgeService) Query(ctx context.Context, q *knowledge.Query) (*knowledge.QueryPage, error) {
	if q == nil {
		q = &knowledge.Query{}
	}
	v, u, err := k.queryValue(ctx, q)
	if err != nil {
		return nil, err
	}
	page, err := knowledge.ValidateQueryResponse(v, q, k.svc.origin)
	if err != nil {
		return nil, bad(http.MethodGet, u, http.StatusOK, err)
	}
	return page, nil
}

// queryValue sends q and returns the strictly parsed answer and the URL.
func (k *KnowledgeService) queryValue(ctx context.Context, q *knowledge.Query) (any, string, error) {
	if _, err := knowledge.QueryFromValue(valueOf(q.Value())); err != nil {
		return nil, "", err
	}
	u, err := k.endpoint(ctx, knowledge.EndpointQuery)
	if err != nil {
		return nil, "", err
	}
	resp, err := k.svc.do(ctx, call{method: http.MethodGet, url: u, query: q.Params(), auth: authNone, maxBytes: k.pageBytes(q.EffectiveLimit())})
	if err != nil {
		return nil, "", err
	}
	v, err := k.parse(http.MethodGet, u, resp)
	return v, u, err
}

// valueOf returns v with its integers as json.Number, the strictly parsed
// form the rules' validators read.
func valueOf(v map[string]any) any {
	b, err := identity.Canonicalize(v)
	if err != nil {
		return v
	}
	out, err := identity.ParseStrict(b)
	if err != nil {
		return v
	}
	return out
}

// KnowledgeTraversal reads every page of one query under the checkpoint
// of its first page, with knowledge.PageTracker: each page must carry the
// same scope, continue in seq order and repeat no event. It is not safe for
// concurrent use.
type KnowledgeTraversal struct {
	k       *KnowledgeService
	q       *knowledge.Query
	tracker *knowledge.PageTracker
}

// Traverse starts a traversal of q, which must carry no cursor.
func (k *KnowledgeService) Traverse(q *knowledge.Query) (*KnowledgeTraversal, error) {
	if q == nil {
		q = &knowledge.Query{}
	}
	if q.Cursor != "" {
		return nil, identity.NewError(knowledge.CodeInvalidRequest, "/cursor", "a traversal must start without a cursor")
	}
	t, err := knowledge.NewPageTracker(k.svc.origin)
	if err != nil {
		return nil, err
	}
	return &KnowledgeTraversal{k: k, q: q, tracker: t}, nil
}

// ErrTraversalComplete is Next's error once the last page was read.
var ErrTraversalComplete = errors.New("client: the knowledge traversal has read its last page")

// Next reads the next page.
func (t *KnowledgeTraversal) Next(ctx context.Context) (*knowledge.QueryPage, error) {
	if t.tracker.Complete() {
		return nil, ErrTraversalComplete
	}
	q := t.q.WithCursor(t.tracker.NextCursor())
	v, u, err := t.k.queryValue(ctx, q)
	if err != nil {
		return nil, err
	}
	page, err := t.tracker.Accept(q, v)
	if err != nil {
		return nil, bad(http.MethodGet, u, http.StatusOK, err)
	}
	return page, nil
}

// Complete reports whether the last page was read.
func (t *KnowledgeTraversal) Complete() bool { return t.tracker.Complete() }

// Checkpoint returns the after_seq of the next poll, once every page was
// read.
func (t *KnowledgeTraversal) Checkpoint() (int64, bool) { return t.tracker.Checkpoint() }

// Batch reads up to knowledge.MaxBatchHashes events by id (POST {batch}):
// the records held and the ids missing, each in request order, checked
// with knowledge.ValidateBatchResponse. A repeated or malformed id is
// invalid_request before anything is sent.
func (k *KnowledgeService) Batch(ctx context.Context, ids []string) (*knowledge.BatchPage, error) {
	hashes := make([]any, len(ids))
	for i, id := range ids {
		hashes[i] = id
	}
	body := map[string]any{"hashes": hashes}
	if _, err := knowledge.ParseBatchRequest(body); err != nil {
		return nil, err
	}
	raw, err := identity.Canonicalize(body)
	if err != nil {
		return nil, err
	}
	u, err := k.endpoint(ctx, knowledge.EndpointBatch)
	if err != nil {
		return nil, err
	}
	resp, err := k.svc.do(ctx, call{method: http.MethodPost, url: u, body: raw, auth: authNone, maxBytes: k.pageBytes(len(ids))})
	if err != nil {
		return nil, err
	}
	v, err := k.parse(http.MethodPost, u, resp)
	if err != nil {
		return nil, err
	}
	page, err := knowledge.ValidateBatchResponse(v, ids, k.svc.origin)
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	return page, nil
}

// Search runs a ranked search (POST {search}). request is the search
// request as a JSON object value (strictly parsed, or Go values that
// canonicalize alike); it is validated against the modes the service
// advertises first — a mode it does not advertise, or a service without
// ranked search, is unsupported_search_mode and nothing is sent — and the
// answer is checked with knowledge.ValidateSearchResponse: at most the
// limit, the requested mode, and every hit within the exact filters and,
// for a lexical search, matching the text.
func (k *KnowledgeService) Search(ctx context.Context, request any) (*knowledge.SearchPage, error) {
	d, err := k.Discovery(ctx)
	if err != nil {
		return nil, err
	}
	if m, ok := request.(map[string]any); ok {
		request = valueOf(m)
	}
	r, err := knowledge.ParseSearchRequest(request, d.SearchModes)
	if err != nil {
		return nil, err
	}
	u, err := d.Endpoint(knowledge.EndpointSearch)
	if err != nil {
		return nil, err
	}
	raw, err := identity.Canonicalize(r.Value())
	if err != nil {
		return nil, err
	}
	resp, err := k.svc.do(ctx, call{method: http.MethodPost, url: u, body: raw, auth: authNone, maxBytes: k.pageBytes(r.EffectiveLimit())})
	if err != nil {
		return nil, err
	}
	v, err := k.parse(http.MethodPost, u, resp)
	if err != nil {
		return nil, err
	}
	page, err := knowledge.ValidateSearchResponse(v, r, k.svc.origin)
	if err != nil {
		return nil, bad(http.MethodPost, u, resp.status, err)
	}
	return page, nil
}
