package delegation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/delegation"
	"apconnect/host/store"
)

// PrincipalResolveInput is the input of agent_protocols_principal_resolve.
type PrincipalResolveInput struct {
	URL string `json:"url"`
}

// PrincipalResolveResult is its result: the document read at its own id,
// that id, the URL asked for and whether that URL is an alias the document
// lists.
type PrincipalResolveResult struct {
	Principal    map[string]any `json:"principal"`
	CanonicalID  string         `json:"canonical_id"`
	RequestedURL string         `json:"requested_url"`
	Alias        bool           `json:"alias"`
}

// PrincipalResolve is agent_protocols_principal_resolve: resolve a
// principal URL to its canonical document (read at its own id, a copy
// elsewhere re-read once at its id). Reads the host; signs nothing.
func (m *Module) PrincipalResolve(ctx context.Context, in PrincipalResolveInput) (*PrincipalResolveResult, error) {
	doc, err := m.resolve(ctx, in.URL)
	if err != nil {
		return nil, err
	}
	return &PrincipalResolveResult{Principal: doc.Value(), CanonicalID: doc.ID, RequestedURL: in.URL,
		Alias: doc.ID != in.URL && doc.IsAlias(in.URL)}, nil
}

// DelegationCheckInput is the input of agent_protocols_delegation_check.
type DelegationCheckInput struct {
	PrincipalID string `json:"principal_id"`
	Audience    string `json:"audience"`
	Subject     string `json:"subject,omitempty"`
	ID          string `json:"id,omitempty"`
	Cursor      string `json:"cursor,omitempty"`
	Limit       int64  `json:"limit,omitempty"`
}

// Verdict is one credential's verification (proto.VerifyCredential).
type Verdict struct {
	Credential map[string]any `json:"credential"`
	Verified   bool           `json:"verified"`
	Usable     bool           `json:"usable"`
	Reasons    []string       `json:"reasons"`
}

// DelegationCheckResult is the result of agent_protocols_delegation_check.
type DelegationCheckResult struct {
	CanonicalID string    `json:"canonical_id"`
	QueryURL    string    `json:"query_url"`
	Delegations []Verdict `json:"delegations"`
	Complete    bool      `json:"complete"`
	NextCursor  string    `json:"next_cursor,omitempty"`
}

// DelegationsListInput is the input of agent_protocols_delegations_list.
type DelegationsListInput struct {
	DelegationService string       `json:"delegation_service,omitempty"`
	PrincipalID       string       `json:"principal_id,omitempty"`
	Status            proto.Status `json:"status,omitempty"`
	Limit             int64        `json:"limit,omitempty"`
	Cursor            string       `json:"cursor,omitempty"`
}

// DelegationsListResult is its result: one page of credentials as the
// service reads them now.
type DelegationsListResult struct {
	Delegations []map[string]any `json:"delegations"`
	NextCursor  string           `json:"next_cursor,omitempty"`
}

// DelegationsList is agent_protocols_delegations_list: in subject mode the
// active agent's received credentials at delegation_service (default: the
// first host granted delegation.read); in controller mode (principal_id)
// the credentials of a principal whose current delegating controller the
// active agent is, within its ceiling, from the principal's authoritative
// service. Both are enumerations with a request JWT; a credential outside
// what was asked fails the call. Reads the host; signs nothing.
func (m *Module) DelegationsList(ctx context.Context, in DelegationsListInput) (*DelegationsListResult, error) {
	if in.PrincipalID != "" && in.DelegationService != "" {
		return nil, engine.Invalid("choose principal_id (controller mode) or delegation_service (subject mode), not both")
	}
	q := &proto.QueryRequest{Status: in.Status, Limit: in.Limit, Cursor: in.Cursor}
	var permits func(*proto.Credential) bool
	var gctx context.Context
	var svc *client.DelegationService
	if in.PrincipalID != "" {
		doc, c, err := m.controllerPrincipal(ctx, in.PrincipalID)
		if err != nil {
			return nil, err
		}
		if gctx, svc, err = m.serviceOf(ctx, doc, capability.DelegationRead); err != nil {
			return nil, err
		}
		q.PrincipalID = doc.ID
		permits = func(cred *proto.Credential) bool {
			return cred.PrincipalID == doc.ID && proto.ControllerCoversCredential(c, cred)
		}
	} else {
		origin := in.DelegationService
		if origin == "" {
			var err error
			if origin, err = m.defaultService(); err != nil {
				return nil, err
			}
		}
		var err error
		if gctx, svc, err = m.service(ctx, origin, capability.DelegationRead); err != nil {
			return nil, err
		}
		q.Subject = m.Self
		permits = func(cred *proto.Credential) bool { return cred.Subject == m.Self }
	}
	page, err := svc.Query(gctx, q, true)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &DelegationsListResult{Delegations: []map[string]any{}, NextCursor: page.NextCursor}
	for i, cred := range page.Credentials {
		if !permits(cred) {
			return nil, &engine.Error{Code: engine.CodePermissionDenied,
				Message: fmt.Sprintf("the service listed credential %s, which this enumeration may not see", cred.ID),
				Data:    map[string]any{"index": i, "id": cred.ID}}
		}
		out.Delegations = append(out.Delegations, cred.Value())
	}
	seen := make([]sighting, len(page.Credentials))
	for i, cred := range page.Credentials {
		seen[i] = sighting{cred: cred}
	}
	m.record(ctx, svc.Origin(), store.DelegationFromList, seen)
	return out, nil
}

// DelegationGrantInput is the input of agent_protocols_delegation_grant.
type DelegationGrantInput struct {
	ID           string         `json:"id"`
	PrincipalID  string         `json:"principal_id"`
	Subject      string         `json:"subject"`
	Relationship *string        `json:"relationship,omitempty"`
	Scopes       []string       `json:"scopes"`
	Audiences    []string       `json:"audiences"`
	Constraints  map[string]any `json:"constraints,omitempty"`
	NotBefore    *int64         `json:"not_before,omitempty"`
	ExpiresAt    *int64         `json:"expires_at,omitempty"`
}

// DelegationRevokeInput is the input of agent_protocols_delegation_revoke.
type DelegationRevokeInput struct {
	ID          string `json:"id"`
	PrincipalID string `json:"principal_id"`
	Reason      string `json:"reason,omitempty"`
}

// DelegationWriteResult is the result of a grant or revocation: the
// credential after it and the signed envelope.
type DelegationWriteResult struct {
	Credential map[string]any `json:"credential"`
	Envelope   map[string]any `json:"envelope"`
}

// DelegationGrant is agent_protocols_delegation_grant: sign and submit a
// delegation.grant as a current delegating controller of the principal
// (its canonical id is signed, whatever URL named it), after the authority
// check against the credential stored under id, within the write budget.
func (m *Module) DelegationGrant(ctx context.Context, in DelegationGrantInput) (*DelegationWriteResult, error) {
	return m.write(ctx, in.PrincipalID, in.ID, func(doc *proto.PrincipalDocument) identity.Event {
		constraints := in.Constraints
		if constraints != nil {
			constraints = engine.CloneMap(constraints)
		}
		return proto.GrantEvent(m.Self, m.NowMS(), 1, proto.GrantPayload{ID: in.ID, PrincipalID: doc.ID, Subject: in.Subject,
			Relationship: in.Relationship, Scopes: in.Scopes, Audiences: in.Audiences, Constraints: constraints,
			NotBefore: in.NotBefore, ExpiresAt: in.ExpiresAt})
	})
}

// DelegationRevoke is agent_protocols_delegation_revoke: sign and submit a
// delegation.revoke of credential id as a current delegating controller of
// the principal whose ceiling holds it.
func (m *Module) DelegationRevoke(ctx context.Context, in DelegationRevokeInput) (*DelegationWriteResult, error) {
	return m.write(ctx, in.PrincipalID, in.ID, func(doc *proto.PrincipalDocument) identity.Event {
		return proto.RevokeEvent(m.Self, m.NowMS(), 1, proto.RevokePayload{ID: in.ID, PrincipalID: doc.ID, Reason: in.Reason})
	})
}

// write signs and submits one grant or revocation: the principal resolved
// and the active agent a current delegating controller of it; its service
// granted delegation.write; the previous credential read; the write budget;
// proto.CheckEventAuthority on the event (so nothing the service must
// refuse is signed); then the engine's pipeline (nonce, outbox, one
// re-sign after a Max-Seen-Nonce resync).
func (m *Module) write(ctx context.Context, principalID, id string, event func(doc *proto.PrincipalDocument) identity.Event) (*DelegationWriteResult, error) {
	doc, _, err := m.controllerPrincipal(ctx, principalID)
	if err != nil {
		return nil, err
	}
	gctx, svc, err := m.serviceOf(ctx, doc, capability.DelegationWrite)
	if err != nil {
		return nil, err
	}
	if err := proto.ValidateID(id); err != nil {
		return nil, err
	}
	prev, err := previous(gctx, svc, id)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	ev := event(doc)
	if err := proto.CheckEventAuthority(&ev, doc, ev.CreatedAt, prev); err != nil {
		return nil, err
	}
	if _, err := m.Take("delegation:write:"+svc.Origin(), m.Config.Limits.DelegationWrites(), time.Minute); err != nil {
		return nil, err
	}
	sent, err := engine.Submit(m.Engine, ctx, engine.Write{Kind: OutboxDelegation, Origin: svc.Origin(), Capability: capability.DelegationWrite,
		Event: ev, Ref: id}, func(ctx context.Context, env *identity.Envelope) (*client.DelegationSubmitResult, error) {
		return submit(ctx, svc, env)
	})
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(sent.Result.Raw)
	m.Done(ctx, sent.Outbox, raw)
	source := store.DelegationFromGrant
	if ev.Type == proto.TypeRevoke {
		source = store.DelegationFromRevoke
	}
	m.record(ctx, svc.Origin(), source, []sighting{{cred: sent.Result.Credential, signed: true}})
	return &DelegationWriteResult{Credential: sent.Result.Credential.Value(), Envelope: envelopeValue(sent.Envelope)}, nil
}

// submit posts an envelope and checks the service answered with the
// credential that event made.
func submit(ctx context.Context, svc *client.DelegationService, env *identity.Envelope) (*client.DelegationSubmitResult, error) {
	res, err := svc.Submit(ctx, env)
	if err != nil {
		return nil, err
	}
	if res.Credential.EventID != env.Hash || (env.Event.Type == proto.TypeGrant && res.Credential.GrantEventID != env.Hash) {
		return nil, &engine.Error{Code: proto.CodeInvalidDelegation,
			Message: "the service answered with a credential that the submitted event did not make",
			Data:    map[string]any{"event_id": env.Hash, "credential_event_id": res.Credential.EventID}}
	}
	return res, nil
}

// DelegationHistoryInput is the input of agent_protocols_delegation_history.
type DelegationHistoryInput struct {
	PrincipalID string `json:"principal_id"`
	ID          string `json:"id"`
	Cursor      string `json:"cursor,omitempty"`
}

// DelegationHistoryResult is its result: the credential and one page of its
// accepted records, each signature verified.
type DelegationHistoryResult struct {
	Credential         map[string]any   `json:"credential"`
	Records            []map[string]any `json:"records"`
	SignaturesVerified bool             `json:"signatures_verified"`
	NextCursor         string           `json:"next_cursor,omitempty"`
}

// DelegationHistory is agent_protocols_delegation_history: a credential of
// a principal and one page of its accepted records, in acceptance order,
// from the principal's authoritative service. The credential must be the
// one asked for, of that principal; every record must verify (hash and
// signature) and name that credential, or the call fails. It says nothing
// of current authority: that is agent_protocols_delegation_check's. Reads
// the host; signs nothing.
func (m *Module) DelegationHistory(ctx context.Context, in DelegationHistoryInput) (*DelegationHistoryResult, error) {
	doc, err := m.resolve(ctx, in.PrincipalID)
	if err != nil {
		return nil, err
	}
	gctx, svc, err := m.serviceOf(ctx, doc, capability.DelegationRead)
	if err != nil {
		return nil, err
	}
	if err := proto.ValidateID(in.ID); err != nil {
		return nil, err
	}
	cred, _, err := svc.Credential(gctx, in.ID)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if cred.PrincipalID != doc.ID {
		return nil, &engine.Error{Code: proto.CodeInvalidDelegation, Message: "credential " + in.ID + " is not a credential of " + doc.ID,
			Data: map[string]any{"principal_id": cred.PrincipalID}}
	}
	page, err := svc.Events(gctx, in.ID, in.Cursor)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := &DelegationHistoryResult{Credential: cred.Value(), Records: []map[string]any{}, SignaturesVerified: true, NextCursor: page.NextCursor}
	records := make([]proto.Record, len(page.Items))
	for i, r := range page.Items {
		records[i] = *r
		out.Records = append(out.Records, r.Value())
	}
	if err := m.checkRecords(records, in.ID, doc.ID); err != nil {
		return nil, &engine.Error{Code: proto.CodeInvalidDelegation, Message: err.Error()}
	}
	return out, nil
}

// resubmitter resubmits grants and revocations whose outcome stayed
// unknown (engine.Submitter).
type resubmitter struct{ m *Module }

func (r resubmitter) Resubmit(ctx context.Context, e *store.OutboxEntry, env *identity.Envelope) (engine.Outcome, []byte, error) {
	_, svc, err := r.m.service(ctx, e.Service, capability.DelegationWrite)
	if err != nil {
		return engine.Refused, nil, err
	}
	res, err := submit(ctx, svc, env)
	if err != nil {
		if engine.UnknownOutcome(err) {
			return engine.Unknown, nil, err
		}
		return engine.Refused, nil, err
	}
	raw, _ := json.Marshal(res.Raw)
	return engine.Accepted, raw, nil
}

// envelopeValue is a signed envelope as a JSON object.
func envelopeValue(env *identity.Envelope) map[string]any {
	return env.Value()
}
