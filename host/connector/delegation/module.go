// Package delegation is the Agent Delegation part of the connector
// (agent-delegation/1.0, as the reference SDK 0.12.6 speaks it): principal
// resolution, credential checks for a relying party, the agent's received
// and controlled credentials, grants and revocations signed as a controller
// of a principal, and a credential's signed history. Every rule comes from
// host/proto/delegation.
//
// Trust. A principal URL is read only on a [[hosts]] origin the operator
// granted delegation.read, with the engine's HTTP client of that origin,
// without following redirects, within the rules' time and size bounds
// (principals.go): the SDK's connector reads any URL an agent names. A
// principal's delegation service must be a configured origin too
// (delegation.read for its reads, delegation.write for grants and
// revocations). Names, descriptions, avatars and reasons are untrusted text.
package delegation

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	proto "apconnect/host/proto/delegation"
	"apconnect/host/text"
)

// Protocol is the protocol this module speaks.
const Protocol = proto.Protocol

// OutboxDelegation is the outbox kind of grants and revocations.
const OutboxDelegation = "delegation_write"

// Module is the Agent Delegation part of the connector, with one exported
// method per Delegation tool. It keeps no state but the nonce and the outbox
// entries of its writes (the engine's) and, for the operator's view, a
// record of the credentials it signed or that name it (record.go).
type Module struct {
	*engine.Engine
	mu         sync.Mutex
	services   map[string]*client.DelegationService // by origin, under mu
	checks     map[checkKey][]string                // the credentials each check found, under mu
	principals map[string]cachedPrincipal           // principals read for checks, by URL, under mu
	verified   map[string]*verifiedEvent            // envelopes verified, by hash|actor|signature, under mu
	rec        recorder                             // writes the record behind a check (record.go)
}

// New builds the module on e. It does no network I/O.
func New(e *engine.Engine) *Module {
	m := &Module{Engine: e, services: map[string]*client.DelegationService{}, checks: map[checkKey][]string{}, principals: map[string]cachedPrincipal{},
		verified: map[string]*verifiedEvent{}}
	e.RegisterSubmitter(OutboxDelegation, capability.DelegationWrite, resubmitter{m})
	return m
}

// Name is the module's name.
func (m *Module) Name() string { return "delegation" }

// Protocol is agent-delegation/1.0.
func (m *Module) Protocol() string { return Protocol }

// Tools are the six Delegation tools.
func (m *Module) Tools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[PrincipalResolveInput, *PrincipalResolveResult]{Name: "agent_protocols_principal_resolve",
			Call: func(ctx context.Context, _ engine.SessionID, in *PrincipalResolveInput) (*PrincipalResolveResult, error) {
				return m.PrincipalResolve(ctx, *in)
			},
			Summary: func(in *PrincipalResolveInput, r *PrincipalResolveResult) string {
				s := "Principal " + r.CanonicalID + " resolved from its own URL"
				if r.Alias {
					s += "; " + in.URL + " is an alias it lists"
				} else if r.CanonicalID != in.URL {
					s += "; " + in.URL + " is not an alias it lists"
				}
				return s + ". Its names and text are untrusted."
			}}.Tool(),
		engine.ToolSpec[DelegationCheckInput, *DelegationCheckResult]{Name: "agent_protocols_delegation_check",
			Call: func(ctx context.Context, _ engine.SessionID, in *DelegationCheckInput) (*DelegationCheckResult, error) {
				return m.DelegationCheck(ctx, *in)
			},
			Summary: func(in *DelegationCheckInput, r *DelegationCheckResult) string {
				usable := 0
				for _, d := range r.Delegations {
					if d.Usable {
						usable++
					}
				}
				s := fmt.Sprintf("%s of %s for %s, %d usable", text.Plural(int64(len(r.Delegations)), "delegation", "delegations"),
					r.CanonicalID, in.Audience, usable)
				if !r.Complete {
					s += "; more with cursor " + r.NextCursor
				}
				return s + "."
			}}.Tool(),
		engine.ToolSpec[DelegationsListInput, *DelegationsListResult]{Name: "agent_protocols_delegations_list",
			Call: func(ctx context.Context, _ engine.SessionID, in *DelegationsListInput) (*DelegationsListResult, error) {
				return m.DelegationsList(ctx, *in)
			},
			Summary: func(_ *DelegationsListInput, r *DelegationsListResult) string {
				s := text.Plural(int64(len(r.Delegations)), "credential", "credentials") + " (service data; check them with agent_protocols_delegation_check)"
				if r.NextCursor != "" {
					s += "; more with cursor " + r.NextCursor
				}
				return s + "."
			}}.Tool(),
		engine.ToolSpec[DelegationGrantInput, *DelegationWriteResult]{Name: "agent_protocols_delegation_grant",
			Call: func(ctx context.Context, _ engine.SessionID, in *DelegationGrantInput) (*DelegationWriteResult, error) {
				return m.DelegationGrant(ctx, *in)
			},
			Summary: func(in *DelegationGrantInput, _ *DelegationWriteResult) string {
				return "Granted " + in.ID + " to " + in.Subject + " for " + strings.Join(in.Scopes, ", ") + "."
			}}.Tool(),
		engine.ToolSpec[DelegationRevokeInput, *DelegationWriteResult]{Name: "agent_protocols_delegation_revoke",
			Call: func(ctx context.Context, _ engine.SessionID, in *DelegationRevokeInput) (*DelegationWriteResult, error) {
				return m.DelegationRevoke(ctx, *in)
			},
			Summary: func(in *DelegationRevokeInput, _ *DelegationWriteResult) string {
				return "Revoked " + in.ID + "."
			}}.Tool(),
		engine.ToolSpec[DelegationHistoryInput, *DelegationHistoryResult]{Name: "agent_protocols_delegation_history",
			Call: func(ctx context.Context, _ engine.SessionID, in *DelegationHistoryInput) (*DelegationHistoryResult, error) {
				return m.DelegationHistory(ctx, *in)
			},
			Summary: func(in *DelegationHistoryInput, r *DelegationHistoryResult) string {
				s := fmt.Sprintf("%s of %s, signatures verified", text.Plural(int64(len(r.Records)), "accepted record", "accepted records"), in.ID)
				if r.NextCursor != "" {
					s += "; more with cursor " + r.NextCursor
				}
				return s + ". Check current authority with agent_protocols_delegation_check."
			}}.Tool(),
	}
}

// Discover reads the Agent Delegation discovery document of a configured
// origin (nil when it has none).
func (m *Module) Discover(ctx context.Context, origin string) (map[string]any, error) {
	svc, err := m.serviceClient(origin)
	if err != nil {
		return nil, err
	}
	d, err := svc.Discovery(ctx)
	if err != nil || d == nil {
		return nil, err
	}
	return d.Raw, nil
}

//go:embed instructions.md
var instructions string

// Instructions is the module's part of the server instructions.
func (m *Module) Instructions() string { return strings.TrimSpace(instructions) }
