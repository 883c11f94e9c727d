package knowledge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	rules "apconnect/host/proto/knowledge"
	"apconnect/host/store"
)

// Item is the flattened view of a verified acceptance record
// (KnowledgeItem).
type Item = rules.Item

// Scope is what every read answers with: the service, its checkpoint and
// its clock.
type Scope struct {
	Service    string `json:"service"`
	Checkpoint int64  `json:"checkpoint"`
	AsOf       int64  `json:"as_of"`
}

func scopeOf(s rules.Scope) Scope {
	return Scope{Service: s.Service, Checkpoint: s.Checkpoint, AsOf: s.AsOf}
}

func items(rs []*rules.Record) []Item {
	out := make([]Item, len(rs))
	for i, r := range rs {
		out[i] = r.Item()
	}
	return out
}

// SubmitInput is the input of agent_protocols_knowledge_submit.
type SubmitInput struct {
	Services []string        `json:"services"`
	Type     string          `json:"type"`
	Payload  json.RawMessage `json:"payload"`
}

// SubmitResult is the result of agent_protocols_knowledge_submit: the
// signed envelope and what each service made of it.
type SubmitResult struct {
	ID       string             `json:"id"`
	Envelope map[string]any     `json:"envelope"`
	Results  []SubmissionResult `json:"results"`
}

// SubmissionResult is one service's answer: the accepted item, or the
// error.
type SubmissionResult struct {
	Service string     `json:"service"`
	Item    *Item      `json:"item,omitempty"`
	Error   *ToolError `json:"error,omitempty"`
}

// ToolError is a service's refusal in a submission result.
type ToolError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func toolError(err error) *ToolError {
	e := engine.AsError(err)
	return &ToolError{Code: e.Code, Message: e.Message, Data: e.Data}
}

// Submit is agent_protocols_knowledge_submit: check the payload for its
// type (invalid_event with up to 16 {path, message} relative to the
// payload), sign it once, and send the envelope to one to eight services,
// each a configured origin granting knowledge.write (checked, like the
// budget, before anything is signed). It fails only when every service
// fails. A service whose answer stays unknown after three attempts is left
// to the background resubmission of the same envelope (idempotent at
// every service), and its result says submission_pending.
func (c *Module) Submit(ctx context.Context, sess engine.SessionID, in SubmitInput) (*SubmitResult, error) {
	origins, err := c.submitOrigins(in.Services)
	if err != nil {
		return nil, err
	}
	if !rules.IsEventType(in.Type) {
		return nil, engine.Invalid("unknown Knowledge event type %q", in.Type)
	}
	payload, err := parsePayload(in.Payload)
	if err != nil {
		return nil, err
	}
	if err := rules.ValidatePayload(in.Type, payload); err != nil {
		return nil, err
	}
	if _, err := c.Take("knowledge:submit", c.Config.Limits.KnowledgeSubmits(), time.Minute); err != nil {
		return nil, err
	}
	w := &engine.Write{Kind: OutboxKnowledgeSubmit, Origin: origins[0], Capability: capability.KnowledgeWrite,
		Event: rules.NewEvent(in.Type, c.Self, c.NowMS(), 0, payload), Ref: strings.Join(origins, " ")}
	env, id, err := c.Sign(ctx, w)
	if err != nil {
		return nil, err
	}
	// A malformed contribution fails here, before anything is disclosed.
	if err := checkEnvelope(env); err != nil {
		c.CloseOutbox(ctx, id, store.OutboxFailed, nil, err.Error())
		return nil, err
	}
	out := &SubmitResult{ID: env.Hash, Envelope: env.Value(), Results: []SubmissionResult{}}
	var firstErr error
	accepted, unknown := false, false
	for _, origin := range origins {
		rec, err := c.send(ctx, origin, env)
		switch {
		case err == nil:
			item := rec.Item()
			accepted = true
			out.Results = append(out.Results, SubmissionResult{Service: origin, Item: &item})
			continue
		case engine.UnknownOutcome(err):
			unknown = true
			err = &engine.Error{Code: engine.CodeSubmissionPending, Err: err, Data: map[string]any{"event_id": env.Hash},
				Message: "the service could not be reached to confirm the submission; the same envelope is resubmitted in the background"}
		}
		out.Results = append(out.Results, SubmissionResult{Service: origin, Error: toolError(err)})
		if firstErr == nil {
			firstErr = err
		}
	}
	if accepted {
		c.record(ctx, env, out.Results)
	}
	c.settle(ctx, id, out, accepted, unknown, firstErr)
	if !accepted {
		return nil, engine.Wrap(firstErr)
	}
	return out, nil
}

// submitOrigins checks the services of a submission: one to eight
// distinct configured origins, each granting knowledge.write.
func (c *Module) submitOrigins(services []string) ([]string, error) {
	if len(services) == 0 || len(services) > rules.MaxSubmitServices {
		return nil, engine.Invalid("services must name one to %d services", rules.MaxSubmitServices)
	}
	var origins []string
	for _, s := range services {
		o, err := c.Configured(s)
		if err != nil {
			return nil, err
		}
		if slices.Contains(origins, o) {
			return nil, engine.Invalid("services: %s is listed twice", o)
		}
		if err := c.Allow(o, capability.KnowledgeWrite); err != nil {
			return nil, err
		}
		origins = append(origins, o)
	}
	return origins, nil
}

// parsePayload reads the payload strictly (duplicate members, unpaired
// surrogates and unsafe integers are refused).
func parsePayload(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, engine.Invalid("payload is required")
	}
	v, err := identity.ParseStrict(raw)
	if err != nil {
		e := identity.NewError(identity.CodeInvalidEvent, "", "the payload is not strict I-JSON: %v", err)
		e.Data = map[string]any{"errors": []any{map[string]any{"path": "", "message": err.Error()}}}
		return nil, e
	}
	return v, nil
}

// checkEnvelope runs rules.ValidateEnvelope on a signed envelope, as a
// service will.
func checkEnvelope(env *identity.Envelope) error {
	b, err := env.MarshalJSON()
	if err != nil {
		return engine.Wrap(err)
	}
	_, err = rules.ParseEnvelope(b)
	return err
}

// send submits env to one service, resending the same envelope up to
// three times while the outcome is unknown.
func (c *Module) send(ctx context.Context, origin string, env *identity.Envelope) (*rules.Record, error) {
	ks, err := c.service(origin, capability.KnowledgeWrite)
	if err != nil {
		return nil, err
	}
	gctx, err := c.Need(ctx, ks.Origin(), capability.KnowledgeWrite)
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := range 3 {
		if attempt > 0 {
			if err := client.Sleep(ctx, time.Duration(attempt*attempt)*150*time.Millisecond); err != nil {
				break
			}
		}
		rec, err := ks.Submit(gctx, env)
		if err == nil || !engine.UnknownOutcome(err) {
			return rec, err
		}
		last = err
	}
	return nil, last
}

// settle closes the submission's outbox entry: released to the background
// resubmission while any service's outcome is unknown, else done (with the
// results) when a service accepted it, else failed.
func (c *Module) settle(ctx context.Context, id int64, out *SubmitResult, accepted, unknown bool, firstErr error) {
	switch {
	case unknown:
		c.ReleaseOutbox(ctx, id, firstErr)
	case accepted:
		raw, _ := json.Marshal(out.Results)
		c.Done(ctx, id, raw)
	default:
		c.CloseOutbox(ctx, id, store.OutboxFailed, nil, firstErr.Error())
	}
}

// resubmitter resubmits a submission whose outcome stayed unknown at some
// service (engine.Submitter): the same envelope to every service of the
// entry, which each answer idempotently.
type resubmitter struct{ c *Module }

func (r resubmitter) Resubmit(ctx context.Context, e *store.OutboxEntry, env *identity.Envelope) (engine.Outcome, []byte, error) {
	var results []SubmissionResult
	accepted, unknown := false, false
	var firstErr error
	for _, origin := range strings.Fields(e.Ref) {
		ks, err := r.c.service(origin, capability.KnowledgeWrite)
		var rec *rules.Record
		if err == nil {
			var gctx context.Context
			if gctx, err = r.c.Need(ctx, ks.Origin(), capability.KnowledgeWrite); err == nil {
				rec, err = ks.Submit(gctx, env)
			}
		}
		if err == nil {
			item := rec.Item()
			accepted = true
			results = append(results, SubmissionResult{Service: origin, Item: &item})
			continue
		}
		unknown = unknown || engine.UnknownOutcome(err) || engine.AsError(err).Code == engine.CodePermissionDenied
		results = append(results, SubmissionResult{Service: origin, Error: toolError(err)})
		if firstErr == nil {
			firstErr = err
		}
	}
	if accepted {
		r.c.record(ctx, env, results)
	}
	switch {
	case unknown:
		return engine.Unknown, nil, firstErr
	case accepted:
		raw, _ := json.Marshal(results)
		return engine.Accepted, raw, nil
	}
	return engine.Refused, nil, firstErr
}

// QueryInput is the input of agent_protocols_knowledge_query: the service
// and the query's members (the SDK's query request, flat).
type QueryInput struct {
	Service       string `json:"service"`
	Actor         string `json:"actor,omitempty"`
	Type          string `json:"type,omitempty"`
	Kind          string `json:"kind,omitempty"`
	Target        string `json:"target,omitempty"`
	Relation      string `json:"relation,omitempty"`
	Tag           string `json:"tag,omitempty"`
	Profile       string `json:"profile,omitempty"`
	Language      string `json:"language,omitempty"`
	Verdict       string `json:"verdict,omitempty"`
	CreatedFrom   *int64 `json:"created_from,omitempty"`
	CreatedBefore *int64 `json:"created_before,omitempty"`
	AfterSeq      *int64 `json:"after_seq,omitempty"`
	Cursor        string `json:"cursor,omitempty"`
	Limit         *int64 `json:"limit,omitempty"`
}

// QueryResult is one verified page of a query.
type QueryResult struct {
	Items []Item `json:"items"`
	Scope
	NextCursor string `json:"next_cursor,omitempty"`
}

// Query is agent_protocols_knowledge_query: one page of an exact query,
// every record verified and checked against the filters, the page's scope
// (service, checkpoint fixed by the first page, as_of). Reads the host.
func (c *Module) Query(ctx context.Context, sess engine.SessionID, in QueryInput) (*QueryResult, error) {
	ks, ctx, err := c.reader(ctx, in.Service)
	if err != nil {
		return nil, err
	}
	q, err := in.query()
	if err != nil {
		return nil, err
	}
	page, err := ks.Query(ctx, q)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	return &QueryResult{Items: items(page.Result), Scope: scopeOf(page.Scope), NextCursor: page.NextCursor}, nil
}

// query builds the rules' query of the input (QueryFromValue: the SDK's
// checks, invalid_request).
func (in QueryInput) query() (*rules.Query, error) {
	m := map[string]any{}
	for k, v := range map[string]string{"actor": in.Actor, "type": in.Type, "kind": in.Kind, "target": in.Target, "relation": in.Relation,
		"tag": in.Tag, "profile": in.Profile, "language": in.Language, "verdict": in.Verdict, "cursor": in.Cursor} {
		if v != "" {
			m[k] = v
		}
	}
	for k, v := range map[string]*int64{"created_from": in.CreatedFrom, "created_before": in.CreatedBefore, "after_seq": in.AfterSeq, "limit": in.Limit} {
		if v != nil {
			m[k] = json.Number(itoa(*v))
		}
	}
	return rules.QueryFromValue(m)
}

// reader returns the client of a service the operator granted
// knowledge.read, and the context its requests must carry.
func (c *Module) reader(ctx context.Context, service string) (*client.KnowledgeService, context.Context, error) {
	ks, err := c.service(service, capability.KnowledgeRead)
	if err != nil {
		return nil, nil, err
	}
	gctx, err := c.Need(ctx, ks.Origin(), capability.KnowledgeRead)
	if err != nil {
		return nil, nil, err
	}
	return ks, gctx, nil
}

// GetInput is the input of agent_protocols_knowledge_get.
type GetInput struct {
	Service string   `json:"service"`
	IDs     []string `json:"ids"`
}

// GetResult is a verified batch read: the items held and the ids missing,
// each in request order.
type GetResult struct {
	Items   []Item   `json:"items"`
	Missing []string `json:"missing"`
	Scope
}

// Get is agent_protocols_knowledge_get: up to 100 events by id, every
// record verified and the answer an ordered partition of the ids. Reads the
// host.
func (c *Module) Get(ctx context.Context, sess engine.SessionID, in GetInput) (*GetResult, error) {
	ks, ctx, err := c.reader(ctx, in.Service)
	if err != nil {
		return nil, err
	}
	page, err := ks.Batch(ctx, in.IDs)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	missing := page.Missing
	if missing == nil {
		missing = []string{}
	}
	return &GetResult{Items: items(page.Result), Missing: missing, Scope: scopeOf(page.Scope)}, nil
}

// SearchInput is the input of agent_protocols_knowledge_search.
type SearchInput struct {
	Service string          `json:"service"`
	Text    string          `json:"text"`
	Mode    string          `json:"mode"`
	Filters json.RawMessage `json:"filters,omitempty"`
	Limit   *int64          `json:"limit,omitempty"`
}

// SearchHit is one ranked hit.
type SearchHit struct {
	Item        Item   `json:"item"`
	Explanation string `json:"explanation,omitempty"`
}

// SearchResult is one verified search page.
type SearchResult struct {
	Hits     []SearchHit    `json:"hits"`
	Ranking  rules.Ranking  `json:"ranking"`
	Coverage rules.Coverage `json:"coverage"`
	Scope
}

// Search is agent_protocols_knowledge_search: a service's ranked search in
// a mode it advertises (never substituted: unsupported_search_mode), every
// hit verified and checked against the exact filters and, in the lexical
// mode, the SDK's match rule. Reads the host.
func (c *Module) Search(ctx context.Context, sess engine.SessionID, in SearchInput) (*SearchResult, error) {
	ks, ctx, err := c.reader(ctx, in.Service)
	if err != nil {
		return nil, err
	}
	req := map[string]any{"text": in.Text, "mode": in.Mode}
	if len(in.Filters) > 0 {
		f, err := identity.ParseStrict(in.Filters)
		if err != nil {
			return nil, engine.Invalid("filters: %v", err)
		}
		req["filters"] = f
	}
	if in.Limit != nil {
		req["limit"] = json.Number(itoa(*in.Limit))
	}
	page, err := ks.Search(ctx, req)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &SearchResult{Hits: make([]SearchHit, len(page.Result)), Ranking: page.Ranking, Coverage: page.Coverage, Scope: scopeOf(page.Scope)}
	if out.Coverage.Reasons == nil {
		out.Coverage.Reasons = []string{}
	}
	for i, h := range page.Result {
		out.Hits[i] = SearchHit{Item: h.Record.Item(), Explanation: h.Explanation}
	}
	return out, nil
}

// StatusInput is the input of agent_protocols_knowledge_status.
type StatusInput struct {
	Service string `json:"service"`
	ID      string `json:"id"`
}

// StatusResult is the lifecycle of one item at one service.
type StatusResult struct {
	Item Item `json:"item"`
	rules.StatusView
	Scope
}

// Status is agent_protocols_knowledge_status: the item (a batch read),
// then the pages of target={id} (at most 10 × 1000, one checkpoint); only
// the author's later retractions and successors count, every assessment
// does. status is reported only when the scan read every page (complete).
// Reads the host.
func (c *Module) Status(ctx context.Context, sess engine.SessionID, in StatusInput) (*StatusResult, error) {
	if !rules.ValidID(in.ID) {
		return nil, identity.NewError(rules.CodeInvalidRequest, "/id", "id must canonically encode 32 bytes in unpadded base64url")
	}
	ks, ctx, err := c.reader(ctx, in.Service)
	if err != nil {
		return nil, err
	}
	batch, err := ks.Batch(ctx, []string{in.ID})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if len(batch.Result) == 0 {
		return nil, engine.Errorf(engine.CodeNotFound, "event %s not found at %s", in.ID, ks.Origin())
	}
	target := batch.Result[0]
	tr, err := ks.Traverse(&rules.Query{Filters: rules.Filters{Target: in.ID}, Limit: engine.Ptr(c.statusLimit)})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	var links []*identity.Envelope
	var scope *rules.Scope
	for range c.statusPages {
		page, err := tr.Next(ctx)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		if scope == nil {
			scope = &page.Scope
		}
		for _, r := range page.Result {
			links = append(links, r.Envelope)
		}
		if tr.Complete() {
			break
		}
	}
	view := rules.Status(in.ID, &target.Envelope.Event, links, tr.Complete())
	return &StatusResult{Item: target.Item(), StatusView: view, Scope: scopeOf(*scope)}, nil
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
