package main

// Agent Knowledge verdicts (host/proto/knowledge) for the knowledge_* cases
// of test/interop/knowledge_cases.py. Each function reads its case input
// strictly (numbers stay json.Number, so 1.0 reaches the rules as written)
// and answers in the shape the Python side computes with the SDK.

import (
	"encoding/json"
	"fmt"
	"slices"

	"apconnect/host/identity"
	"apconnect/host/proto/knowledge"
)

var knowledgeKinds = map[string]func(json.RawMessage) (any, error){
	"knowledge_url":             knowledgeURL,
	"knowledge_id":              knowledgeID,
	"knowledge_envelope":        knowledgeEnvelope,
	"knowledge_envelope_text":   knowledgeEnvelopeText,
	"knowledge_payload":         knowledgePayload,
	"knowledge_submit":          knowledgeSubmit,
	"knowledge_missing":         knowledgeMissing,
	"knowledge_query":           knowledgeQuery,
	"knowledge_match":           knowledgeMatch,
	"knowledge_store":           knowledgeStore,
	"knowledge_terms":           knowledgeTerms,
	"knowledge_text_match":      knowledgeTextMatch,
	"knowledge_search_request":  knowledgeSearchRequest,
	"knowledge_selection":       knowledgeSelection,
	"knowledge_record":          knowledgeRecord,
	"knowledge_query_response":  knowledgeQueryResponse,
	"knowledge_batch_response":  knowledgeBatchResponse,
	"knowledge_search_response": knowledgeSearchResponse,
	"knowledge_discovery":       knowledgeDiscovery,
	"knowledge_pages":           knowledgePages,
	"knowledge_status":          knowledgeStatus,
	"knowledge_evidence":        knowledgeEvidence,
}

// kin reads a case input as a strict JSON object.
func kin(raw json.RawMessage) (map[string]any, error) {
	v, err := strict(raw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("bad input: not an object")
	}
	return m, nil
}

// kcode is "ok" for nil, else the error's stable code.
func kcode(err error) string {
	if err == nil {
		return "ok"
	}
	if c := identity.ErrorCode(err); c != "" {
		return c
	}
	return "uncoded: " + err.Error()
}

func kstr(v any) string { s, _ := v.(string); return s }

func kint(v any) int64 { n, _ := identity.IntValue(v); return n }

func knowledgeURL(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	if knowledge.ValidHTTPSURL(kstr(in["url"])) {
		return "ok", nil
	}
	return knowledge.CodeInvalidEvent, nil
}

func knowledgeID(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	if knowledge.ValidID(kstr(in["id"])) {
		return "ok", nil
	}
	return knowledge.CodeInvalidEvent, nil
}

func knowledgeEnvelope(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	_, err = knowledge.ValidateEnvelope(in["envelope"])
	return kcode(err), nil
}

func knowledgeEnvelopeText(raw json.RawMessage) (any, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	_, err := knowledge.ParseEnvelope([]byte(in.Text))
	return kcode(err), nil
}

// knowledgePayload answers {code, paths}: the paths of the schema failures
// (none when the payload passed its schema).
func knowledgePayload(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	typ := kstr(in["type"])
	err = knowledge.ValidatePayload(typ, in["payload"])
	if c := kcode(err); c != knowledge.CodeInvalidEvent {
		if c == "ok" {
			return map[string]any{"code": c, "paths": []string{}}, nil
		}
		return c, nil
	}
	defs := map[string]string{knowledge.TypePublish: "publishPayload", knowledge.TypeAssess: "assessPayload", knowledge.TypeRetract: "retractPayload"}
	list, _ := knowledge.SchemaErrors(in["payload"], defs[typ])
	paths := []string{}
	for _, fe := range list {
		paths = append(paths, fe.Path)
	}
	slices.Sort(paths)
	return map[string]any{"code": knowledge.CodeInvalidEvent, "paths": slices.Compact(paths)}, nil
}

// kstore is the case's service: validated envelopes by id, and records in
// seq order.
type kstore struct {
	records []*knowledge.Record
	byID    map[string]*knowledge.Record
}

func (s *kstore) lookup(id string) (knowledge.Target, bool) {
	r, ok := s.byID[id]
	if !ok {
		return knowledge.Target{}, false
	}
	return knowledge.TargetOf(&r.Envelope.Event), true
}

// submit runs a service's submission: validation, an exact resubmission,
// then CheckSubmission, then a new record.
func (s *kstore) submit(v any, now int64, lim knowledge.Limits) error {
	env, err := knowledge.ValidateEnvelope(v)
	if err != nil {
		return err
	}
	if _, ok := s.byID[env.Hash]; ok {
		return nil
	}
	if err := knowledge.CheckSubmission(env, now, s.lookup, lim); err != nil {
		return err
	}
	r := knowledge.NewRecord(env, now, int64(len(s.records)+1))
	s.records = append(s.records, r)
	s.byID[env.Hash] = r
	return nil
}

func newKStore(retained []any) (*kstore, error) {
	s := &kstore{byID: map[string]*knowledge.Record{}}
	for i, v := range retained {
		// Any clock past every case's created_at: retained events are
		// accepted, whenever they were written.
		if err := s.submit(v, 1<<52, knowledge.DefaultLimits); err != nil {
			return nil, fmt.Errorf("bad input: retained %d: %w", i, err)
		}
	}
	return s, nil
}

func knowledgeSubmit(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	retained, _ := in["retained"].([]any)
	s, err := newKStore(retained)
	if err != nil {
		return nil, err
	}
	lim := knowledge.DefaultLimits
	if n := kint(in["max_bytes"]); n > 0 {
		lim.MaxEnvelopeBytes = int(n)
	}
	return kcode(s.submit(in["envelope"], kint(in["now"]), lim)), nil
}

func knowledgeMissing(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	retained, _ := in["retained"].([]any)
	s, err := newKStore(retained)
	if err != nil {
		return nil, err
	}
	env, err := knowledge.ValidateEnvelope(in["envelope"])
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	err = knowledge.CheckDependencies(&env.Event, s.lookup)
	if err == nil {
		return "ok", nil
	}
	e := err.(*identity.Error)
	return map[string]any{"code": e.Code, "data": e.Data}, nil
}

func knowledgeQuery(raw json.RawMessage) (any, error) {
	var in struct {
		Params [][2]string `json:"params"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	q, err := knowledge.ParseQuery(in.Params)
	if err != nil {
		return map[string]any{"code": kcode(err)}, nil
	}
	return map[string]any{"code": "ok", "request": q.Value()}, nil
}

func knowledgeMatch(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	env, err := knowledge.ValidateEnvelope(in["envelope"])
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	q, err := knowledge.QueryFromValue(in["filters"])
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	return q.Filters.Matches(&env.Event), nil
}

// knowledgeStore runs submissions and query pages against a store built
// from the package's rules: Window, then Page over the records.
func knowledgeStore(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	s := &kstore{byID: map[string]*knowledge.Record{}}
	now := kint(in["now"])
	var out []any
	ops, _ := in["ops"].([]any)
	for _, o := range ops {
		op, _ := o.(map[string]any)
		if n, ok := op["now"]; ok {
			now = kint(n)
		}
		if v, ok := op["submit"]; ok {
			out = append(out, kcode(s.submit(v, now, knowledge.DefaultLimits)))
			continue
		}
		q, err := knowledge.QueryFromValue(op["query"])
		if err != nil {
			out = append(out, kcode(err))
			continue
		}
		w, err := q.Window(int64(len(s.records)), now)
		if err != nil {
			out = append(out, kcode(err))
			continue
		}
		page, next := w.Page(s.records, &q.Filters)
		seqs := []int64{}
		for _, r := range page {
			seqs = append(seqs, r.Seq)
		}
		var nc any
		if next != "" {
			nc = next
		}
		out = append(out, map[string]any{"seqs": seqs, "checkpoint": w.Checkpoint, "as_of": w.AsOf, "next_cursor": nc})
	}
	return out, nil
}

func knowledgeTerms(raw json.RawMessage) (any, error) {
	var in struct {
		Text    string `json:"text"`
		Lexical bool   `json:"lexical"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	terms, err := knowledge.TextTerms(in.Text, in.Lexical)
	if err != nil {
		return kcode(err), nil
	}
	return terms, nil
}

func knowledgeTextMatch(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	env, err := knowledge.ValidateEnvelope(in["envelope"])
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	ok, err := knowledge.TextMatches(&env.Event, kstr(in["text"]))
	if err != nil {
		return kcode(err), nil
	}
	return ok, nil
}

func stringsOf(v any) []string {
	a, _ := v.([]any)
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = kstr(x)
	}
	return out
}

func knowledgeSearchRequest(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	_, err = knowledge.ParseSearchRequest(in["request"], stringsOf(in["modes"]))
	return kcode(err), nil
}

func knowledgeSelection(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	events, _ := in["events"].([]any)
	s, err := newKStore(events)
	if err != nil {
		return nil, err
	}
	req, err := knowledge.ParseSearchRequest(in["request"], knowledge.SearchModes())
	if err != nil {
		return kcode(err), nil
	}
	eligible := map[string]bool{}
	for _, r := range s.records {
		if req.Eligible(&r.Envelope.Event) {
			eligible[r.ID()] = true
		}
	}
	rank, _ := in["ranking"].(map[string]any)
	cov, _ := in["coverage"].(map[string]any)
	exhaustive, _ := cov["exhaustive"].(bool)
	err = knowledge.CheckSelection(req, eligible, stringsOf(in["candidates"]),
		knowledge.Ranking{Mode: kstr(rank["mode"]), ID: kstr(rank["id"])},
		knowledge.Coverage{Exhaustive: exhaustive, Reasons: stringsOf(cov["reasons"])})
	return kcode(err), nil
}

func knowledgeRecord(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	_, err = knowledge.ValidateRecord(in["record"], kstr(in["expected"]))
	return kcode(err), nil
}

func knowledgeQueryResponse(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	q, err := knowledge.QueryFromValue(in["request"])
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	_, err = knowledge.ValidateQueryResponse(in["response"], q, kstr(in["origin"]))
	return kcode(err), nil
}

func knowledgeBatchResponse(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	_, err = knowledge.ValidateBatchResponse(in["response"], stringsOf(in["requested"]), kstr(in["origin"]))
	return kcode(err), nil
}

func knowledgeSearchResponse(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	req, err := knowledge.ParseSearchRequest(in["request"], knowledge.SearchModes())
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	_, err = knowledge.ValidateSearchResponse(in["response"], req, kstr(in["origin"]))
	return kcode(err), nil
}

func knowledgeDiscovery(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	_, err = knowledge.ValidateDiscovery(in["document"], kstr(in["origin"]))
	return kcode(err), nil
}

// knowledgePages answers {steps, complete, checkpoint}: each page's
// verdict until the first refusal.
func knowledgePages(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	t, err := knowledge.NewPageTracker(kstr(in["origin"]))
	if err != nil {
		return nil, fmt.Errorf("bad input: %w", err)
	}
	steps := []string{}
	pages, _ := in["pages"].([]any)
	for _, p := range pages {
		page, _ := p.(map[string]any)
		q, err := knowledge.QueryFromValue(page["request"])
		if err == nil {
			_, err = t.Accept(q, page["response"])
		}
		steps = append(steps, kcode(err))
		if err != nil {
			break
		}
	}
	var checkpoint any
	if c, ok := t.Checkpoint(); ok {
		checkpoint = c
	}
	return map[string]any{"steps": steps, "complete": t.Complete(), "checkpoint": checkpoint}, nil
}

// knowledgeStatus answers the connector's lifecycle view of the target
// over every other known event.
func knowledgeStatus(raw json.RawMessage) (any, error) {
	in, err := kin(raw)
	if err != nil {
		return nil, err
	}
	target := kstr(in["target"])
	known, _ := in["known"].([]any)
	var subject *identity.Envelope
	var links []*identity.Envelope
	for _, v := range known {
		env, err := knowledge.ValidateEnvelope(v)
		if err != nil {
			return nil, fmt.Errorf("bad input: %w", err)
		}
		if env.Hash == target {
			subject = env
			continue
		}
		links = append(links, env)
	}
	if subject == nil {
		return nil, fmt.Errorf("bad input: target not in the known set")
	}
	v := knowledge.Status(target, &subject.Event, links, true)
	return map[string]any{"status": v.Status, "successors": v.Successors, "assessments": v.Assessments}, nil
}

func knowledgeEvidence(raw json.RawMessage) (any, error) {
	var in struct {
		Digest *string `json:"digest"`
		Data   *string `json:"data"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	var data []byte
	if in.Data != nil {
		b, err := identity.DecodeBase64URL(*in.Data)
		if err != nil {
			return nil, fmt.Errorf("bad input: %w", err)
		}
		data = append([]byte{}, b...)
	}
	digest := ""
	if in.Digest != nil {
		digest = *in.Digest
	}
	status, err := knowledge.VerifyEvidence(digest, data)
	if err != nil {
		return kcode(err), nil
	}
	return status, nil
}
