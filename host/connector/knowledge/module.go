// Package knowledge is the Agent Knowledge part of the connector: the five
// Knowledge tools — submit (sign once, send to one to eight services),
// query, get, search and status — each reading a service through the
// checked client of host/client (KnowledgeService) with the rules of
// host/proto/knowledge. It keeps no state of its own but the outbox entry
// of a submission whose outcome is unknown, a discovery cache and, for the
// operator's view, a record of each submission a service accepted
// (record.go).
package knowledge

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	rules "apconnect/host/proto/knowledge"
	"apconnect/host/text"
)

// Protocol is the protocol this module speaks.
const Protocol = rules.Protocol

// OutboxKnowledgeSubmit is the outbox kind of a knowledge submission: one
// signed envelope for the services listed in the entry's Ref.
const OutboxKnowledgeSubmit = "knowledge_submit"

// Module is the Agent Knowledge part of the connector, with one exported
// method per Knowledge tool.
type Module struct {
	*engine.Engine
	mu       sync.Mutex
	services map[string]*client.KnowledgeService // by origin, under mu
	// statusPages and statusLimit bound knowledge_status's scan of
	// target={id}: the SDK's 10 pages of 1000 (tests lower them).
	statusPages int
	statusLimit int64
}

// New builds the module on e. It does no network I/O.
func New(e *engine.Engine) *Module {
	m := &Module{Engine: e, services: map[string]*client.KnowledgeService{},
		statusPages: rules.StatusMaxPages, statusLimit: rules.StatusPageLimit}
	e.RegisterSubmitter(OutboxKnowledgeSubmit, capability.KnowledgeWrite, resubmitter{m})
	return m
}

// Name is the module's name.
func (c *Module) Name() string { return "knowledge" }

// Protocol is agent-knowledge/1.0.
func (c *Module) Protocol() string { return Protocol }

// Tools are the Knowledge tools.
func (c *Module) Tools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[SubmitInput, *SubmitResult]{Name: "agent_protocols_knowledge_submit",
			Call: func(ctx context.Context, sess engine.SessionID, in *SubmitInput) (*SubmitResult, error) {
				return c.Submit(ctx, sess, *in)
			},
			Summary: func(in *SubmitInput, r *SubmitResult) string {
				ok := 0
				for _, res := range r.Results {
					if res.Item != nil {
						ok++
					}
				}
				return fmt.Sprintf("Signed %s %s and submitted it: accepted by %d of %s. It is public and permanent; a retraction cannot remove copies.",
					in.Type, r.ID, ok, text.Plural(int64(len(r.Results)), "service", "services"))
			}}.Tool(),
		engine.ToolSpec[QueryInput, *QueryResult]{Name: "agent_protocols_knowledge_query",
			Call: func(ctx context.Context, sess engine.SessionID, in *QueryInput) (*QueryResult, error) {
				return c.Query(ctx, sess, *in)
			},
			Summary: func(_ *QueryInput, r *QueryResult) string {
				s := fmt.Sprintf("%s from %s at checkpoint %d, each verified", text.Plural(int64(len(r.Items)), "item", "items"), r.Service, r.Checkpoint)
				if r.NextCursor != "" {
					s += "; more with cursor " + r.NextCursor
				}
				return s + ". Items are untrusted claims, not verified truth."
			}}.Tool(),
		engine.ToolSpec[GetInput, *GetResult]{Name: "agent_protocols_knowledge_get",
			Call: func(ctx context.Context, sess engine.SessionID, in *GetInput) (*GetResult, error) {
				return c.Get(ctx, sess, *in)
			},
			Summary: func(_ *GetInput, r *GetResult) string {
				return fmt.Sprintf("%s from %s, each verified; %d missing there.", text.Plural(int64(len(r.Items)), "item", "items"), r.Service, len(r.Missing))
			}}.Tool(),
		engine.ToolSpec[SearchInput, *SearchResult]{Name: "agent_protocols_knowledge_search",
			Call: func(ctx context.Context, sess engine.SessionID, in *SearchInput) (*SearchResult, error) {
				return c.Search(ctx, sess, *in)
			},
			Summary: func(_ *SearchInput, r *SearchResult) string {
				cov := "not exhaustive (" + strings.Join(r.Coverage.Reasons, ", ") + ")"
				if r.Coverage.Exhaustive {
					cov = "exhaustive"
				}
				return fmt.Sprintf("%s from %s, ranked by %s (relevance, not correctness); coverage %s.",
					text.Plural(int64(len(r.Hits)), "hit", "hits"), r.Service, r.Ranking.ID, cov)
			}}.Tool(),
		engine.ToolSpec[StatusInput, *StatusResult]{Name: "agent_protocols_knowledge_status",
			Call: func(ctx context.Context, sess engine.SessionID, in *StatusInput) (*StatusResult, error) {
				return c.Status(ctx, sess, *in)
			},
			Summary: func(in *StatusInput, r *StatusResult) string {
				if !r.Complete {
					return fmt.Sprintf("The status of %s at %s is unchecked: the scan stopped before its last page (%d retractions, %d successors, %d assessments so far).",
						in.ID, r.Service, len(r.Retractions), len(r.Successors), len(r.Assessments))
				}
				return fmt.Sprintf("%s is %s at %s as of checkpoint %d: %d retractions, %d successors, %d assessments.",
					in.ID, r.Status, r.Service, r.Checkpoint, len(r.Retractions), len(r.Successors), len(r.Assessments))
			}}.Tool(),
	}
}

// service returns the client of a configured origin that the operator
// granted need, and the origin normalized.
func (c *Module) service(origin string, need capability.Capability) (*client.KnowledgeService, error) {
	if err := c.Allow(origin, need); err != nil {
		return nil, err
	}
	return c.serviceClient(origin)
}

// serviceClient returns the client of a configured origin without a grant
// check (discovery needs none; every other request is gated by Need).
func (c *Module) serviceClient(origin string) (*client.KnowledgeService, error) {
	norm, err := c.Configured(origin)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ks, ok := c.services[norm]; ok {
		return ks, nil
	}
	hc, err := c.HTTPClient(norm)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	ks, err := client.NewKnowledgeService(norm, hc, c.Signer(), c.ClientOptions())
	if err != nil {
		return nil, engine.Wrap(err)
	}
	c.services[norm] = ks
	return ks, nil
}

// Discover reads the Agent Knowledge discovery document of a configured
// origin, validated (nil when the origin serves none).
func (c *Module) Discover(ctx context.Context, origin string) (map[string]any, error) {
	ks, err := c.serviceClient(origin)
	if err != nil {
		return nil, err
	}
	doc, err := ks.DiscoveryDocument(ctx)
	var he *client.Error
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return nil, nil
	}
	return doc, err
}

// payloadDefs maps each event type to its payload definition in the
// bundled schema (the reference SDK's schema_get table).
var payloadDefs = [][2]string{
	{rules.TypePublish, "publishPayload"},
	{rules.TypeAssess, "assessPayload"},
	{rules.TypeRetract, "retractPayload"},
}

// Schemas returns the payload schemas of the three event types, each with
// the transitive $defs of the bundled knowledge.schema.json.
func (c *Module) Schemas(ctx context.Context, q engine.SchemaQuery) (*engine.Schemas, error) {
	return engine.ProtocolSchemas(Protocol, rules.SchemaJSON(), payloadDefs, q.Type)
}

//go:embed instructions.md
var instructions string

// Instructions is the module's part of the server instructions.
func (c *Module) Instructions() string { return strings.TrimSpace(instructions) }
