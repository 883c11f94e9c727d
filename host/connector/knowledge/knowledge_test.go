package knowledge_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"apconnect/host/client"
	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/knowledge"
	"apconnect/host/engine"
	"apconnect/host/hub/hubtest"
	rules "apconnect/host/proto/knowledge"
	"apconnect/host/store"
)

var ctx = context.Background()

const license = "https://creativecommons.org/licenses/by/4.0/"

type obj = map[string]any

// agent is one connector under test: its Knowledge module.
type agent struct {
	*knowledge.Module
	conn *connector.Connector
	env  *connectortest.Agent
}

func newAgent(t *testing.T, h *hubtest.Hub, seed byte, opts ...connectortest.Option) *agent {
	t.Helper()
	return open(connectortest.NewAgent(t, h, seed, ""), opts...)
}

func open(env *connectortest.Agent, opts ...connectortest.Option) *agent {
	c := env.Open(opts...)
	for _, m := range c.Modules() {
		if k, ok := m.(*knowledge.Module); ok {
			return &agent{Module: k, conn: c, env: env}
		}
	}
	env.T.Fatal("the connector has no knowledge module")
	return nil
}

func must[T any](t testing.TB, tool string) func(v T, err error) T {
	return connectortest.Must[T](t, tool)
}

func code(err error) string { return connectortest.Code(engine.Wrap(err)) }

func payload(t testing.TB, v obj) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scope() obj {
	return obj{"scope": "Go services on Linux", "conditions": []any{}, "limitations": []any{"one machine"}}
}

func publication(kind, title, statement string, extra obj) obj {
	p := obj{"license": license, "kind": kind, "title": title, "statement": statement, "language": "en", "context": scope(), "basis": "Measured."}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// publish submits a publication to the agent's hub.
func (a *agent) publish(t *testing.T, kind, title, statement string, extra obj) string {
	t.Helper()
	res := must[*knowledge.SubmitResult](t, "agent_protocols_knowledge_submit")(a.Submit(ctx, "s1", knowledge.SubmitInput{
		Services: []string{a.env.Cfg.Hosts[0].URL}, Type: rules.TypePublish, Payload: payload(t, publication(kind, title, statement, extra))}))
	return res.ID
}

func (a *agent) lastNonce(t *testing.T) int64 {
	t.Helper()
	n, err := a.conn.Store().Read().LastNonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The tools against the hub: an item published by one agent is read,
// found and statused by another, every result within its output schema.
func TestPublishReadSearchStatus(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	alice, bob := newAgent(t, h, 0x11), newAgent(t, h, 0x12)
	H := h.Origin()
	q := alice.publish(t, "question", "Which cache key?", "Which cache key keeps languages apart?", obj{"tags": []any{"caching"}})
	hy := alice.publish(t, "hypothesis", "Key by language", "The cache key needs the language.",
		obj{"relations": []any{obj{"relation": "addresses", "target": q}}})
	as := must[*knowledge.SubmitResult](t, "agent_protocols_knowledge_submit")(bob.Submit(ctx, "s1", knowledge.SubmitInput{
		Services: []string{H}, Type: rules.TypeAssess, Payload: payload(t, obj{"license": license, "target": hy, "verdict": "supports",
			"summary": "It reproduces.", "context": scope(), "basis": "Ran it."})}))
	if as.Results[0].Item == nil || as.Results[0].Item.Actor != bob.env.ID || as.Results[0].Item.Seq != 3 || as.Envelope["hash"] != as.ID {
		t.Fatalf("assessment: %+v", as)
	}

	got := must[*knowledge.GetResult](t, "agent_protocols_knowledge_get")(bob.Get(ctx, "s1", knowledge.GetInput{Service: H, IDs: []string{hy, q}}))
	if len(got.Items) != 2 || got.Items[0].ID != hy || got.Items[1].Type != rules.TypePublish || len(got.Missing) != 0 || got.Checkpoint != 3 {
		t.Fatalf("get: %+v", got)
	}
	page := must[*knowledge.QueryResult](t, "agent_protocols_knowledge_query")(bob.Query(ctx, "s1", knowledge.QueryInput{Service: H, Target: q}))
	if len(page.Items) != 1 || page.Items[0].ID != hy || page.Service != H || page.Checkpoint != 3 {
		t.Fatalf("query target: %+v", page)
	}
	found := must[*knowledge.SearchResult](t, "agent_protocols_knowledge_search")(bob.Search(ctx, "s1", knowledge.SearchInput{Service: H, Text: "CACHE key", Mode: "lexical"}))
	var ids []string
	for _, hit := range found.Hits {
		ids = append(ids, hit.Item.ID)
	}
	slices.Sort(ids)
	want := []string{q, hy}
	slices.Sort(want)
	if !slices.Equal(ids, want) || !found.Coverage.Exhaustive || found.Ranking.Mode != "lexical" {
		t.Fatalf("search: %+v", found)
	}
	st := must[*knowledge.StatusResult](t, "agent_protocols_knowledge_status")(bob.Status(ctx, "s1", knowledge.StatusInput{Service: H, ID: hy}))
	if !st.Complete || st.Status != rules.StatusActive || !slices.Equal(st.Assessments, []string{as.ID}) || st.Item.ID != hy {
		t.Fatalf("status: %+v", st)
	}
	// Alice supersedes the hypothesis and then retracts it; Bob cannot.
	succ := alice.publish(t, "hypothesis", "Key by language and region", "Corrected.", obj{"relations": []any{obj{"relation": "supersedes", "target": hy}}})
	_, err := bob.Submit(ctx, "s1", knowledge.SubmitInput{Services: []string{H}, Type: rules.TypeRetract, Payload: payload(t, obj{"target": hy, "reason": "Mine now."})})
	if code(err) != rules.CodeInvalidTarget {
		t.Fatalf("bob retracting alice's: %v", err)
	}
	ret := must[*knowledge.SubmitResult](t, "agent_protocols_knowledge_submit")(alice.Submit(ctx, "s1", knowledge.SubmitInput{
		Services: []string{H}, Type: rules.TypeRetract, Payload: payload(t, obj{"target": hy, "reason": "Superseded."})}))
	st = must[*knowledge.StatusResult](t, "agent_protocols_knowledge_status")(bob.Status(ctx, "s1", knowledge.StatusInput{Service: H, ID: hy}))
	if st.Status != rules.StatusRetracted || !slices.Equal(st.Retractions, []string{ret.ID}) || !slices.Equal(st.Successors, []string{succ}) {
		t.Fatalf("status after retraction: %+v", st)
	}
	// Each agent's local record holds what it submitted and the hub
	// accepted, described from the payload; bob's refused retraction is
	// not in it.
	rec := alice.recorded(t)
	if r := rec[q]; len(rec) != 4 || r.Type != rules.TypePublish || r.Kind != "question" || r.Title != "Which cache key?" ||
		len(r.Results) != 1 || r.Results[0] != (store.KnowledgeResult{Service: H, Seq: 1, AcceptedAt: r.Results[0].AcceptedAt}) ||
		r.Results[0].AcceptedAt == 0 || r.SubmittedAt == 0 {
		t.Fatalf("alice's record: %+v", rec)
	}
	if r := rec[ret.ID]; r.Type != rules.TypeRetract || r.Target != hy || r.Title != "Superseded." || r.Kind != "" {
		t.Fatalf("the retraction's record: %+v", r)
	}
	rec = bob.recorded(t)
	if r := rec[as.ID]; len(rec) != 1 || r.Target != hy || r.Verdict != "supports" || r.Title != "It reproduces." || r.Results[0].Seq != 3 {
		t.Fatalf("bob's record: %+v", rec)
	}
	if _, err := bob.Status(ctx, "s1", knowledge.StatusInput{Service: H, ID: strings.Repeat("A", 43)}); code(err) != engine.CodeNotFound {
		t.Fatalf("status of an unknown event: %v", err)
	}
	if _, err := bob.Status(ctx, "s1", knowledge.StatusInput{Service: H, ID: "short"}); code(err) != rules.CodeInvalidRequest {
		t.Fatalf("status of a malformed id: %v", err)
	}
}

// knowledge_status reports complete, and status, only when the scan read
// every page.
func TestStatusIncompleteScan(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	alice := newAgent(t, h, 0x13)
	H := h.Origin()
	q := alice.publish(t, "question", "Q", "A question.", nil)
	for i := range 3 {
		alice.publish(t, "hypothesis", "H", strings.Repeat("h", i+1), obj{"relations": []any{obj{"relation": "addresses", "target": q}}})
	}
	alice.SetStatusBounds(2, 1)
	st := must[*knowledge.StatusResult](t, "agent_protocols_knowledge_status")(alice.Status(ctx, "s1", knowledge.StatusInput{Service: H, ID: q}))
	if st.Complete || st.Status != "" || st.Checkpoint != 4 {
		t.Fatalf("a scan of 2 pages of 1 over 3 links: %+v", st)
	}
	alice.SetStatusBounds(3, 1)
	st = must[*knowledge.StatusResult](t, "agent_protocols_knowledge_status")(alice.Status(ctx, "s1", knowledge.StatusInput{Service: H, ID: q}))
	if !st.Complete || st.Status != rules.StatusActive {
		t.Fatalf("a scan of 3 pages of 1 over 3 links: %+v", st)
	}
}

// A payload is checked for its type before anything is signed: the SDK's
// invalid_event with {path, message} relative to the payload, no request
// and no nonce. So are the services.
func TestSubmitRefusedBeforeSigning(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	a := newAgent(t, h, 0x14, connectortest.WithHTTP(p.Client))
	H := h.Origin()
	nonce, before := a.lastNonce(t), p.Requests.Load()
	bad := publication("resource", "R", "A resource without output evidence.", obj{"license": "http://example.com/l", "tags": []any{"UPPER"}})
	for _, c := range []struct {
		name     string
		in       knowledge.SubmitInput
		code     string
		paths    []string
		messages int
	}{
		{"schema", knowledge.SubmitInput{Services: []string{H}, Type: rules.TypePublish, Payload: payload(t, bad)}, "invalid_event",
			[]string{"", "/license", "/tags/0"}, 3},
		{"not an object", knowledge.SubmitInput{Services: []string{H}, Type: rules.TypeRetract, Payload: json.RawMessage(`[1]`)}, "invalid_event", []string{""}, 1},
		{"duplicate member", knowledge.SubmitInput{Services: []string{H}, Type: rules.TypeRetract, Payload: json.RawMessage(`{"reason":"a","reason":"b"}`)}, "invalid_event", []string{""}, 1},
		{"URL rule beyond the schema", knowledge.SubmitInput{Services: []string{H}, Type: rules.TypeRetract,
			Payload: payload(t, obj{"target": strings.Repeat("A", 42) + "B", "reason": "r"})}, "invalid_event", []string{"/target"}, 1},
		{"no services", knowledge.SubmitInput{Type: rules.TypeRetract, Payload: payload(t, obj{})}, "invalid_input", nil, 0},
		{"nine services", knowledge.SubmitInput{Services: slices.Repeat([]string{H}, 9), Type: rules.TypeRetract, Payload: payload(t, obj{})}, "invalid_input", nil, 0},
		{"twice the same", knowledge.SubmitInput{Services: []string{H, H + "/"}, Type: rules.TypeRetract, Payload: payload(t, obj{})}, "invalid_input", nil, 0},
		{"not configured", knowledge.SubmitInput{Services: []string{"https://elsewhere.example"}, Type: rules.TypeRetract, Payload: payload(t, obj{})}, engine.CodeHostNotAllowed, nil, 0},
	} {
		_, err := a.Submit(ctx, "s1", c.in)
		if code(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
			continue
		}
		if c.paths == nil {
			continue
		}
		var paths []string
		for _, fe := range rules.PayloadErrors(err) {
			paths = append(paths, fe.Path)
		}
		if !slices.Equal(paths, c.paths) {
			t.Errorf("%s: paths %q, want %q (%v)", c.name, paths, c.paths, err)
		}
	}
	if n := p.Requests.Load() - before; n != 0 {
		t.Errorf("%d requests reached the hub", n)
	}
	if a.lastNonce(t) != nonce {
		t.Errorf("a nonce was used")
	}
}

// The local budget (config.toml [limits] knowledge_submits) refuses a
// submission before anything is signed.
func TestSubmitBudget(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	env := connectortest.NewAgent(t, h, 0x15, "")
	one := 1
	env.Cfg.Limits.KnowledgeSubmitsPerMinute = &one
	a := open(env)
	a.publish(t, "question", "Q", "One.", nil)
	nonce := a.lastNonce(t)
	_, err := a.Submit(ctx, "s1", knowledge.SubmitInput{Services: []string{h.Origin()}, Type: rules.TypePublish,
		Payload: payload(t, publication("question", "Q2", "Two.", nil))})
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeRateLimited || e.Data["budget"] != "knowledge:submit" || a.lastNonce(t) != nonce {
		t.Fatalf("second submission: %v", err)
	}
}

// failing fails the knowledge submissions sent through it while fail is
// set, before they reach the service (a lost connection: the outcome is
// unknown to the client).
type failing struct {
	next http.RoundTripper
	fail *atomic.Bool
}

func (f failing) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.fail.Load() && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/knowledge/events") {
		return nil, errors.New("connection reset by test")
	}
	return f.next.RoundTrip(r)
}

// One envelope to two services: it fails only if both fail; a service
// whose outcome stays unknown gets the same envelope from the background
// resubmission.
func TestSubmitToSeveralServices(t *testing.T) {
	t.Parallel()
	h1, h2 := connectortest.StartHub(t), connectortest.StartHub(t)
	env := connectortest.NewAgent(t, h1, 0x16, "")
	env.Cfg.Hosts = append(env.Cfg.Hosts, config.Host{URL: h2.Origin(), Label: "hub2", CAFile: h2.CAFile()})
	var fail atomic.Bool
	a := open(env, connectortest.WithHTTP(func(origin string, roots *x509.CertPool) (*http.Client, error) {
		hc := client.NewHTTPClient(roots, 10*time.Second)
		if origin == h2.Origin() {
			hc.Transport = failing{next: hc.Transport, fail: &fail}
		}
		return hc, nil
	}))
	both := []string{h1.Origin(), h2.Origin()}
	p := payload(t, publication("observation", "Twice", "Sent to two services.", nil))
	res := must[*knowledge.SubmitResult](t, "agent_protocols_knowledge_submit")(a.Submit(ctx, "s1", knowledge.SubmitInput{Services: both, Type: rules.TypePublish, Payload: p}))
	if len(res.Results) != 2 || res.Results[0].Item == nil || res.Results[1].Item == nil || res.Results[0].Item.ID != res.Results[1].Item.ID {
		t.Fatalf("two services: %+v", res)
	}

	fail.Store(true)
	p2 := payload(t, publication("observation", "Half", "One service is unreachable.", nil))
	res = must[*knowledge.SubmitResult](t, "agent_protocols_knowledge_submit")(a.Submit(ctx, "s1", knowledge.SubmitInput{Services: both, Type: rules.TypePublish, Payload: p2}))
	if res.Results[0].Item == nil || res.Results[1].Error == nil || res.Results[1].Error.Code != engine.CodeSubmissionPending {
		t.Fatalf("one unreachable: %+v", res.Results)
	}
	pending, _ := a.conn.Store().Read().OutboxEntries(ctx, store.OutboxPending)
	if len(pending) != 1 || pending[0].EventID != res.ID {
		t.Fatalf("pending outbox entries: %+v", pending)
	}
	half := res.ID
	if r := a.recorded(t)[half]; r.Title != "Half" || !maps.Equal(outcomes(r), map[string]any{h1.Origin(): int64(2), h2.Origin(): engine.CodeSubmissionPending}) {
		t.Fatalf("the record of a half-accepted submission: %+v", r)
	}
	_, err := a.Submit(ctx, "s1", knowledge.SubmitInput{Services: []string{h2.Origin()}, Type: rules.TypePublish,
		Payload: payload(t, publication("observation", "Lost", "Only to the unreachable one.", nil))})
	if code(err) != engine.CodeSubmissionPending {
		t.Fatalf("every service unreachable: %v", err)
	}
	if rec := a.recorded(t); len(rec) != 2 {
		t.Fatalf("a submission no service accepted yet is recorded: %+v", rec)
	}
	fail.Store(false)
	connectortest.Eventually(t, 5*time.Second, "the background resubmission", func() bool {
		a.conn.Engine().ResubmitOutbox(ctx)
		pending, _ = a.conn.Store().Read().OutboxEntries(ctx, store.OutboxPending)
		return len(pending) == 0
	})
	kc, err := client.NewKnowledgeService(h2.Origin(), h2.Client, nil, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := kc.Event(ctx, res.ID); err != nil || rec.ID() != res.ID {
		t.Fatalf("the resubmitted event at the second hub: %v", err)
	}
	// The resubmission completed the records: the half-accepted one
	// accepted by both now, the lost one recorded with its one service.
	rec := a.recorded(t)
	if len(rec) != 3 || !maps.Equal(outcomes(rec[half]), map[string]any{h1.Origin(): int64(2), h2.Origin(): int64(2)}) {
		t.Fatalf("records after the resubmission: %+v", rec)
	}
	lost := 0
	for _, r := range rec {
		if r.Title == "Lost" && maps.Equal(outcomes(r), map[string]any{h2.Origin(): int64(3)}) {
			lost++
		}
	}
	if lost != 1 {
		t.Fatalf("the lost submission's record: %+v", rec)
	}
	// Refused everywhere: the first error, and the entry closed as failed.
	_, err = a.Submit(ctx, "s1", knowledge.SubmitInput{Services: both, Type: rules.TypeRetract,
		Payload: payload(t, obj{"target": strings.Repeat("A", 43), "reason": "No such event."})})
	if code(err) != rules.CodeMissingDependency {
		t.Fatalf("refused by both: %v", err)
	}
	failed, _ := a.conn.Store().Read().OutboxEntries(ctx, store.OutboxFailed)
	if len(failed) != 1 {
		t.Fatalf("failed outbox entries: %d", len(failed))
	}
}

// Every answer is checked: a tampered record fails the read with
// invalid_response.
func TestTamperedAnswerRefused(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	a := newAgent(t, h, 0x17, connectortest.WithHTTP(p.Client))
	a.publish(t, "observation", "Honest", "The true statement.", nil)
	p.Lock()
	p.Rewrite = func(path string, body []byte) []byte {
		if path == "/v1/knowledge/query" {
			return []byte(strings.Replace(string(body), "The true statement.", "A false statement.", 1))
		}
		return body
	}
	p.Unlock()
	_, err := a.Query(ctx, "s1", knowledge.QueryInput{Service: h.Origin()})
	if code(err) != rules.CodeInvalidResponse {
		t.Fatalf("a tampered page: %v", err)
	}
}

// services_list shows the hub's knowledge document; schema_get returns the
// three payload schemas with their transitive $defs.
func TestDiscoverAndSchemas(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	a := newAgent(t, h, 0x18)
	doc, err := a.Discover(ctx, h.Origin())
	if err != nil || doc["protocol"] != rules.Protocol || doc["service"] != h.Origin() {
		t.Fatalf("discover: %v %v", doc, err)
	}
	s, err := a.Schemas(ctx, engine.SchemaQuery{})
	if err != nil || len(s.Entries) != 3 {
		t.Fatalf("schemas: %+v %v", s, err)
	}
	for _, e := range s.Entries {
		defs, _ := e.Schema["$defs"].(map[string]any)
		if defs["nonEmptyString"] == nil || e.Schema["$ref"] == nil {
			t.Errorf("%s: $defs %v", e.Type, defs)
		}
	}
	if _, err := a.Schemas(ctx, engine.SchemaQuery{Type: "room.update"}); code(err) != "type_not_defined" {
		t.Fatalf("schemas of room.update: %v", err)
	}
	if in := a.Instructions(); !strings.Contains(in, "authorize nothing") || !strings.Contains(in, "never fetched") {
		t.Fatalf("instructions: %s", in)
	}
}
