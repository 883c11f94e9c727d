package delegation

import (
	"strconv"

	"apconnect/host/identity"
)

// GrantPayload is a delegation.grant payload (Agent Delegation 7.1). A nil
// Relationship, Constraints, NotBefore or ExpiresAt is an absent member.
type GrantPayload struct {
	ID           string
	PrincipalID  string
	Subject      string
	Relationship *string
	Scopes       []string
	Audiences    []string
	Constraints  map[string]any
	NotBefore    *int64
	ExpiresAt    *int64
}

// RevokePayload is a delegation.revoke payload (Agent Delegation 7.2).
// Reason "" is absent.
type RevokePayload struct {
	ID          string
	PrincipalID string
	Reason      string
}

// Event is a delegation event whose shape and payload have been checked:
// exactly one of Grant and Revoke is set, by Type.
type Event struct {
	Type      string
	Actor     string
	CreatedAt int64
	Nonce     int64
	Grant     *GrantPayload
	Revoke    *RevokePayload
}

// CredentialID returns the delegation id the event names.
func (e *Event) CredentialID() string {
	if e.Grant != nil {
		return e.Grant.ID
	}
	return e.Revoke.ID
}

// PrincipalID returns the principal the event names.
func (e *Event) PrincipalID() string {
	if e.Grant != nil {
		return e.Grant.PrincipalID
	}
	return e.Revoke.PrincipalID
}

var (
	grantMembers  = []string{"id", "principal_id", "subject", "relationship", "scopes", "audiences", "constraints", "not_before", "expires_at"}
	revokeMembers = []string{"id", "principal_id", "reason"}
)

// ValidID reports whether id is a delegation id: [A-Za-z0-9._~-]{1,128}
// and not a dot segment ("." or ".."), so it sits in a URL path unescaped.
func ValidID(id string) bool {
	if len(id) < 1 || len(id) > MaxIDLength || id == "." || id == ".." {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '_' || c == '~' || c == '-') {
			return false
		}
	}
	return true
}

// ValidateID checks a delegation id; errors carry invalid_request.
func ValidateID(id string) error {
	if !ValidID(id) {
		return newError(CodeInvalidRequest, "", "delegation id must match [A-Za-z0-9._~-]{1,128} and not be a dot segment")
	}
	return nil
}

// ValidateGrantPayload checks a grant payload (validate_delegation_grant_payload):
// the id grammar, an HTTPS principal_id, an Agent ID subject, non-empty
// scopes and audiences without "*" or duplicates, audiences as origins or
// Agent IDs, timestamps, and expires_at after not_before and after createdAt
// when given (grant_expired). Other errors carry invalid_event, with
// pointers relative to the payload.
func ValidateGrantPayload(p *GrantPayload, createdAt *int64) error {
	return validateGrant(p, createdAt, "")
}

func validateGrant(p *GrantPayload, createdAt *int64, ptr string) error {
	const code = CodeInvalidEvent
	if !ValidID(p.ID) {
		return newError(code, ptr+"/id", "delegation id must match [A-Za-z0-9._~-]{1,128} and not be a dot segment")
	}
	if !validHTTPSURL(p.PrincipalID) {
		return newError(code, ptr+"/principal_id", "principal_id must be an HTTPS URL")
	}
	if !identity.ValidAgentID(p.Subject) {
		return newError(code, ptr+"/subject", "subject must be a canonical Agent ID")
	}
	if err := checkStrings(p.Scopes, "scopes", false, code, ptr+"/scopes"); err != nil {
		return err
	}
	if err := checkStrings(p.Audiences, "audiences", false, code, ptr+"/audiences"); err != nil {
		return err
	}
	for i, a := range p.Audiences {
		if err := ValidateAudience(a); err != nil {
			return recode(relocate(err, ptr+"/audiences/"+strconv.Itoa(i)), code)
		}
	}
	if createdAt != nil {
		if err := checkTimestamp(*createdAt, "created_at", code, "/event/created_at"); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"not_before", p.NotBefore}, {"expires_at", p.ExpiresAt}} {
		if f.v != nil {
			if err := checkTimestamp(*f.v, f.name, code, ptr+"/"+f.name); err != nil {
				return err
			}
		}
	}
	if p.ExpiresAt != nil {
		if p.NotBefore != nil && *p.ExpiresAt <= *p.NotBefore {
			return newError(CodeGrantExpired, ptr+"/expires_at", "expires_at must be greater than not_before")
		}
		if createdAt != nil && *p.ExpiresAt <= *createdAt {
			return newError(CodeGrantExpired, ptr+"/expires_at", "expires_at must be greater than created_at")
		}
	}
	return nil
}

// ValidateRevokePayload checks a revoke payload; errors carry invalid_event.
func ValidateRevokePayload(p *RevokePayload) error {
	return validateRevoke(p, "")
}

func validateRevoke(p *RevokePayload, ptr string) error {
	if !ValidID(p.ID) {
		return newError(CodeInvalidEvent, ptr+"/id", "delegation id must match [A-Za-z0-9._~-]{1,128} and not be a dot segment")
	}
	if !validHTTPSURL(p.PrincipalID) {
		return newError(CodeInvalidEvent, ptr+"/principal_id", "principal_id must be an HTTPS URL")
	}
	return nil
}

// ValidateEnvelope verifies a delegation envelope (validate_delegation_envelope):
// the event hash and the strict signature (identity), then the protocol,
// the closed event object (the six identity fields and nothing else), the
// event type and the payload. It returns the checked event.
func ValidateEnvelope(env *identity.Envelope) (*Event, error) {
	if err := env.Verify(); err != nil {
		return nil, err
	}
	return EventFromIdentity(&env.Event, "/event")
}

// EventFromIdentity checks an identity event as a delegation event: the
// protocol, a known type, and its closed, valid payload. ptr locates the
// event in its document ("/event" in an envelope).
func EventFromIdentity(ev *identity.Event, ptr string) (*Event, error) {
	if ev.Protocol != Protocol {
		return nil, newError(CodeInvalidEvent, ptr+"/protocol", "expected %s, got %s", Protocol, trunc(ev.Protocol))
	}
	if !identity.ValidAgentID(ev.Actor) {
		return nil, newError(CodeInvalidActor, ptr+"/actor", "actor must be a canonical Agent ID")
	}
	// Agent Delegation defines no top-level event field beyond the six.
	if err := ev.CheckFields(ptr); err != nil {
		return nil, err
	}
	out := &Event{Type: ev.Type, Actor: ev.Actor, CreatedAt: ev.CreatedAt, Nonce: ev.Nonce}
	var err error
	switch ev.Type {
	case TypeGrant:
		out.Grant, err = grantShape(ev.Payload, ptr+"/payload")
		if err == nil {
			err = validateGrant(out.Grant, &ev.CreatedAt, ptr+"/payload")
		}
	case TypeRevoke:
		out.Revoke, err = revokeShape(ev.Payload, ptr+"/payload")
		if err == nil {
			err = validateRevoke(out.Revoke, ptr+"/payload")
		}
	default:
		return nil, newError(CodeInvalidEvent, ptr+"/type", "expected %s or %s, got %s", TypeGrant, TypeRevoke, trunc(ev.Type))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func grantShape(v any, ptr string) (*GrantPayload, error) {
	o, err := asObject(v, ptr, CodeInvalidEvent, "grant payload")
	if err != nil {
		return nil, err
	}
	if err := o.closed("grant payload", grantMembers...); err != nil {
		return nil, err
	}
	p := &GrantPayload{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &p.ID}, {"principal_id", &p.PrincipalID}, {"subject", &p.Subject}} {
		if *f.dst, _, err = o.str(f.key, true); err != nil {
			return nil, err
		}
	}
	rel, present, err := o.str("relationship", false)
	if err != nil {
		return nil, err
	}
	if present {
		p.Relationship = &rel
	}
	if p.Scopes, err = o.strs("scopes", true); err != nil {
		return nil, err
	}
	if p.Audiences, err = o.strs("audiences", true); err != nil {
		return nil, err
	}
	if p.Constraints, err = o.obj("constraints"); err != nil {
		return nil, err
	}
	if p.NotBefore, err = o.optInt("not_before"); err != nil {
		return nil, err
	}
	if p.ExpiresAt, err = o.optInt("expires_at"); err != nil {
		return nil, err
	}
	return p, nil
}

func revokeShape(v any, ptr string) (*RevokePayload, error) {
	o, err := asObject(v, ptr, CodeInvalidEvent, "revoke payload")
	if err != nil {
		return nil, err
	}
	if err := o.closed("revoke payload", revokeMembers...); err != nil {
		return nil, err
	}
	p := &RevokePayload{}
	if p.ID, _, err = o.str("id", true); err != nil {
		return nil, err
	}
	if p.PrincipalID, _, err = o.str("principal_id", true); err != nil {
		return nil, err
	}
	if p.Reason, _, err = o.str("reason", false); err != nil {
		return nil, err
	}
	return p, nil
}

// Value returns the payload as a JSON object value.
func (p *GrantPayload) Value() map[string]any {
	m := map[string]any{
		"id":           p.ID,
		"principal_id": p.PrincipalID,
		"subject":      p.Subject,
		"scopes":       cloneStrings(p.Scopes),
		"audiences":    cloneStrings(p.Audiences),
	}
	if p.Relationship != nil {
		m["relationship"] = *p.Relationship
	}
	if p.Constraints != nil {
		m["constraints"] = p.Constraints
	}
	if p.NotBefore != nil {
		m["not_before"] = *p.NotBefore
	}
	if p.ExpiresAt != nil {
		m["expires_at"] = *p.ExpiresAt
	}
	return m
}

// Value returns the payload as a JSON object value.
func (p *RevokePayload) Value() map[string]any {
	m := map[string]any{"id": p.ID, "principal_id": p.PrincipalID}
	if p.Reason != "" {
		m["reason"] = p.Reason
	}
	return m
}

// GrantEvent builds the unsigned delegation.grant event a controller signs
// with identity.SignEvent (after CheckEventAuthority).
func GrantEvent(actor string, createdAt, nonce int64, p GrantPayload) identity.Event {
	return identity.Event{Protocol: Protocol, Type: TypeGrant, Actor: actor, CreatedAt: createdAt, Nonce: nonce, Payload: p.Value()}
}

// RevokeEvent builds the unsigned delegation.revoke event.
func RevokeEvent(actor string, createdAt, nonce int64, p RevokePayload) identity.Event {
	return identity.Event{Protocol: Protocol, Type: TypeRevoke, Actor: actor, CreatedAt: createdAt, Nonce: nonce, Payload: p.Value()}
}
