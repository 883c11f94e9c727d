package delegation

import (
	"maps"

	"apconnect/host/identity"
)

// Status is a credential's status (Agent Delegation 8).
type Status string

// The four statuses.
const (
	StatusActive    Status = "active"
	StatusSuspended Status = "suspended"
	StatusExpired   Status = "expired"
	StatusRevoked   Status = "revoked"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusActive, StatusSuspended, StatusExpired, StatusRevoked:
		return true
	}
	return false
}

// Credential is the unsigned materialization of a credential's accepted
// events and provider status (Agent Delegation 8, as the SDK 0.12.6 has it:
// no owner_controller, no updated_at). The grant members come from the
// latest grant, also after a revocation; Controller and EventID identify the
// latest event, GrantEventID the latest grant. Times are in ms.
type Credential struct {
	ID           string
	Protocol     string
	PrincipalID  string
	Subject      string
	Relationship *string
	Scopes       []string
	Audiences    []string
	Constraints  map[string]any
	NotBefore    *int64
	ExpiresAt    *int64
	Status       Status
	Controller   string
	GrantEventID string
	EventID      string
	AcceptedAt   int64
	CheckedAt    int64
}

// Clone returns a deep copy (constraints are copied one level deep; their
// values are parsed JSON, never modified).
func (c *Credential) Clone() *Credential {
	out := *c
	out.Scopes, out.Audiences = cloneStrings(c.Scopes), cloneStrings(c.Audiences)
	out.Constraints = maps.Clone(c.Constraints)
	out.NotBefore, out.ExpiresAt = cloneInt(c.NotBefore), cloneInt(c.ExpiresAt)
	if c.Relationship != nil {
		r := *c.Relationship
		out.Relationship = &r
	}
	return &out
}

// Grant returns the grant members of the credential as a payload.
func (c *Credential) Grant() *GrantPayload {
	return &GrantPayload{ID: c.ID, PrincipalID: c.PrincipalID, Subject: c.Subject, Relationship: c.Relationship,
		Scopes: c.Scopes, Audiences: c.Audiences, Constraints: c.Constraints, NotBefore: c.NotBefore, ExpiresAt: c.ExpiresAt}
}

// StatusAt is the status a read at now reports: revoked stays revoked;
// otherwise a credential at or past its expires_at is expired; otherwise the
// stored status (active or suspended). Expiry never hides a revocation.
func (c *Credential) StatusAt(now int64) Status {
	if c.Status == StatusRevoked || c.Status == StatusExpired {
		return c.Status
	}
	if c.ExpiresAt != nil && now >= *c.ExpiresAt {
		return StatusExpired
	}
	return c.Status
}

// At returns the credential as a service read at now presents it: a fresh
// checked_at and the status computed at now (StatusAt). It never moves
// checked_at before accepted_at.
func (c *Credential) At(now int64) *Credential {
	out := c.Clone()
	out.Status = c.StatusAt(now)
	out.CheckedAt = max(now, c.AcceptedAt)
	return out
}

// Materialize applies an accepted event to the previous credential
// (materialize_delegation_credential): a grant yields a new credential from
// its payload with the given status; a revocation keeps the previous grant
// members and grant_event_id, and names the revoker in controller and
// event_id. checked_at is acceptedAt. It verifies the envelope and the
// credential's identity rules, but does not authorize the event: call
// CheckAcceptance first.
func Materialize(env *identity.Envelope, status Status, acceptedAt int64, previous *Credential) (*Credential, error) {
	ev, err := ValidateEnvelope(env)
	if err != nil {
		return nil, err
	}
	if err := checkTimestamp(acceptedAt, "accepted_at", CodeInvalidDelegation, ""); err != nil {
		return nil, err
	}
	if err := checkPrevious(ev, previous); err != nil {
		return nil, err
	}
	if previous != nil && acceptedAt < previous.AcceptedAt {
		return nil, newError(CodeInvalidDelegation, "", "acceptance order reversed")
	}
	if ev.Revoke != nil {
		out := previous.Clone()
		out.Controller, out.Status, out.EventID = ev.Actor, StatusRevoked, env.Hash
		out.AcceptedAt, out.CheckedAt = acceptedAt, acceptedAt
		return out, nil
	}
	g := ev.Grant
	if g.ExpiresAt != nil && *g.ExpiresAt <= acceptedAt {
		return nil, newError(CodeGrantExpired, "/event/payload/expires_at", "grant expired at acceptance")
	}
	if !status.Valid() {
		return nil, newError(CodeInvalidDelegation, "", "invalid status %q", trunc(string(status)))
	}
	out := &Credential{ID: g.ID, Protocol: Protocol, PrincipalID: g.PrincipalID, Subject: g.Subject,
		Relationship: g.Relationship, Scopes: g.Scopes, Audiences: g.Audiences, Constraints: g.Constraints,
		NotBefore: g.NotBefore, ExpiresAt: g.ExpiresAt, Status: status, Controller: ev.Actor,
		GrantEventID: env.Hash, EventID: env.Hash, AcceptedAt: acceptedAt, CheckedAt: acceptedAt}
	return out.Clone(), nil
}

// checkPrevious is the credential identity rule: a revocation needs a
// previous credential (credential_not_found), and an event for an existing
// credential must keep its id, principal, protocol and, for a grant, its
// subject (credential_identity_mismatch).
func checkPrevious(ev *Event, previous *Credential) error {
	if previous == nil {
		if ev.Revoke != nil {
			return newError(CodeCredentialNotFound, "/event/payload/id", "revocation requires previous credential")
		}
		return nil
	}
	if err := checkStrings(previous.Scopes, "previous.scopes", false, CodeInvalidDelegation, ""); err != nil {
		return err
	}
	if err := checkStrings(previous.Audiences, "previous.audiences", false, CodeInvalidDelegation, ""); err != nil {
		return err
	}
	if err := checkTimestamp(previous.AcceptedAt, "previous.accepted_at", CodeInvalidDelegation, ""); err != nil {
		return err
	}
	sameSubject := ev.Grant == nil || ev.Grant.Subject == previous.Subject
	if previous.ID != ev.CredentialID() || previous.PrincipalID != ev.PrincipalID() ||
		previous.Protocol != Protocol || !sameSubject {
		return newError(CodeCredentialIdentityMismatch, "/event/payload", "credential principal, subject, and protocol are immutable")
	}
	return nil
}
