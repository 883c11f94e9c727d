package delegation

import (
	"apconnect/host/identity"
)

// ControllerCoversCredential is the management rule (Agent Delegation 5):
// a restricted controller may replace, revoke or enumerate a credential only
// when every scope and audience of its latest grant lies within the
// controller's ceiling; an unrestricted one covers every credential of the
// principal; a signing-only key covers none.
func ControllerCoversCredential(c *Controller, cred *Credential) bool {
	return c.Delegation.Covers(cred.Scopes, cred.Audiences)
}

// CheckEventAuthority is the pre-signing policy check over trusted inputs
// (validate_delegation_event_authority): what CheckAcceptance decides,
// without a signature, an authoritative-read or a live-window check. The
// connector runs it before signing, with the time it signs at as
// acceptedAt, so it never signs an event the service must refuse.
func CheckEventAuthority(ev *identity.Event, doc *PrincipalDocument, acceptedAt int64, previous *Credential) error {
	return checkAuthority(ev, doc, acceptedAt, previous, false)
}

// CheckAcceptance is the service's authority check of a submitted envelope
// (validate_delegation_acceptance): the envelope (ValidateEnvelope), the
// principal document read at resolvedURL (CheckPrincipalResolution), and
// the authority of a current controller at acceptedAt over previous, the
// credential stored under the event's delegation id (nil for none). The
// caller also enforces a principal read no older than MaxPrincipalAge, the
// live identity window and nonce, and an atomic commit in acceptance order.
func CheckAcceptance(env *identity.Envelope, doc *PrincipalDocument, resolvedURL string, acceptedAt int64, previous *Credential) error {
	if _, err := ValidateEnvelope(env); err != nil {
		return err
	}
	if err := CheckPrincipalResolution(doc, resolvedURL); err != nil {
		return err
	}
	return checkAuthority(&env.Event, doc, acceptedAt, previous, false)
}

// CheckHistorical checks an accepted record against the principal's
// current document (validate_historical_delegation): as CheckAcceptance at
// the record's accepted_at, except that retired controllers count for the
// times inside their interval (and before any invalid_from). previous is
// the credential before the record. It judges historical policy, not current
// status.
func CheckHistorical(rec *Record, doc *PrincipalDocument, resolvedURL string, previous *Credential) error {
	return checkHistorical(ValidateEnvelope, rec, doc, resolvedURL, previous)
}

// EnvelopeValidator validates a delegation envelope as ValidateEnvelope
// does. A reader that checks many histories may pass one that remembers the
// strict signatures it verified (a verification's outcome depends only on
// the hash, the actor and the signature); it must check everything else
// each time.
type EnvelopeValidator func(*identity.Envelope) (*Event, error)

// checkHistorical is CheckHistorical with the envelope checked by validate.
func checkHistorical(validate EnvelopeValidator, rec *Record, doc *PrincipalDocument, resolvedURL string, previous *Credential) error {
	if _, err := validate(rec.Envelope); err != nil {
		return err
	}
	if err := CheckPrincipalResolution(doc, resolvedURL); err != nil {
		return err
	}
	return checkAuthority(&rec.Envelope.Event, doc, rec.AcceptedAt, previous, true)
}

// checkAuthority is the SDK's check_authority, in its order: the document;
// the times; the event's protocol, type and payload; the canonical
// principal; a current (or, historical, retired) controller record of the
// actor with delegation authority whose interval holds both created_at and
// acceptedAt; the credential identity rules against previous; acceptance
// order; the previous credential inside the ceiling; and, for a grant, not
// expired at acceptance and inside the ceiling.
func checkAuthority(iev *identity.Event, doc *PrincipalDocument, acceptedAt int64, previous *Credential, historical bool) error {
	if err := ValidatePrincipalDocument(doc); err != nil {
		return err
	}
	if err := checkTimestamp(acceptedAt, "accepted_at", CodeInvalidDelegation, ""); err != nil {
		return err
	}
	if err := checkTimestamp(iev.CreatedAt, "created_at", CodeInvalidEvent, "/event/created_at"); err != nil {
		return err
	}
	ev, err := EventFromIdentity(iev, "/event")
	if err != nil {
		return err
	}
	if ev.PrincipalID() != doc.ID {
		return newError(CodePrincipalNotCanonical, "/event/payload/principal_id", "principal mismatch")
	}
	c := doc.FindController(ev.Actor, historical)
	if c == nil {
		return newError(CodeControllerNotCurrent, "/event/actor", "actor is not a controller of the principal")
	}
	if c.Delegation == nil {
		return newError(CodeDelegationNotPermitted, "/event/actor", "actor has no delegation authority")
	}
	if !c.BoundAt(ev.CreatedAt) || !c.BoundAt(acceptedAt) {
		return newError(CodeControllerNotCurrent, "/event/actor", "outside controller authority interval")
	}
	if err := checkPrevious(ev, previous); err != nil {
		return err
	}
	if previous != nil {
		if acceptedAt < previous.AcceptedAt {
			return newError(CodeInvalidDelegation, "", "acceptance order reversed")
		}
		if !ControllerCoversCredential(c, previous) {
			return newError(CodeDelegationCeilingExceeded, "/event/actor", "credential is outside the controller's ceiling")
		}
	}
	if g := ev.Grant; g != nil {
		if g.ExpiresAt != nil && *g.ExpiresAt <= acceptedAt {
			return newError(CodeGrantExpired, "/event/payload/expires_at", "grant expired at acceptance")
		}
		if !c.Delegation.Covers(g.Scopes, g.Audiences) {
			return newError(CodeDelegationCeilingExceeded, "/event/payload", "grant exceeds controller delegation policy")
		}
	}
	return nil
}

// CheckControllerEnumeration is the per-result check of a controller's
// enumeration (validate_controller_enumeration): actor must be a current
// controller of doc bound at now, with delegation authority, and cred
// inside its ceiling. The caller authenticates actor and resolves doc.
func CheckControllerEnumeration(doc *PrincipalDocument, actor string, now int64, cred *Credential) error {
	if err := ValidatePrincipalDocument(doc); err != nil {
		return err
	}
	if err := checkTimestamp(now, "now", CodeInvalidDelegation, ""); err != nil {
		return err
	}
	if err := checkStrings(cred.Scopes, "scopes", false, CodeInvalidDelegation, "/scopes"); err != nil {
		return err
	}
	if err := checkStrings(cred.Audiences, "audiences", false, CodeInvalidDelegation, "/audiences"); err != nil {
		return err
	}
	c := doc.FindController(actor, false)
	if c == nil || now < c.ValidFrom {
		return newError(CodeControllerNotCurrent, "", "controller cannot enumerate")
	}
	if c.Delegation == nil {
		return newError(CodeDelegationNotPermitted, "", "controller cannot enumerate")
	}
	if !ControllerCoversCredential(c, cred) {
		return newError(CodeDelegationCeilingExceeded, "", "credential is outside the controller's ceiling")
	}
	return nil
}
