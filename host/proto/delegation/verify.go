package delegation

import (
	"bytes"
	"slices"

	"apconnect/host/identity"
)

// Verdict is the result of VerifyCredential.
type Verdict struct {
	Credential *Credential `json:"credential"`
	// Verified: the latest grant's record has a valid signature, a
	// controller bound at its times with a ceiling that holds it, and it
	// agrees with the credential.
	Verified bool `json:"verified"`
	// Usable: verified, with a fresh status consistent with the supplied
	// history, active, for the audience, inside the validity window.
	Usable bool `json:"usable"`
	// Reasons lists every failed check, in the SDK's words.
	Reasons []string `json:"reasons"`
}

// VerifyCredential verifies a credential for a relying party under the
// online service-trusting evidence policy (verify_delegation_credential):
// the accepted record of its latest grant (grant_event_id) is checked with
// CheckHistorical and must match the credential's grant members; then the
// status must be fresh at now (checked_at no older than MaxStatusAge, at most
// StatusClockSkew ahead), no later record of the same credential may be
// hidden, and the credential must be active, list audience, and be inside
// not_before and expires_at. records is the credential's history (the latest
// grant's record suffices for a relying party); doc the principal document
// read at resolvedURL, from the principal's own id. Relying parties still
// enforce scopes and constraints and authenticate the subject.
func VerifyCredential(cred *Credential, records []Record, doc *PrincipalDocument, resolvedURL, audience string, now int64) Verdict {
	return VerifyCredentialWith(ValidateEnvelope, cred, records, doc, resolvedURL, audience, now)
}

// VerifyCredentialWith is VerifyCredential with the latest grant's
// envelope checked by validate (see EnvelopeValidator).
func VerifyCredentialWith(validate EnvelopeValidator, cred *Credential, records []Record, doc *PrincipalDocument, resolvedURL, audience string, now int64) Verdict {
	var reasons []string
	if err := latestGrantMatches(validate, cred, records, doc, resolvedURL); err != nil {
		reasons = append(reasons, reason(err))
	}
	verified := len(reasons) == 0
	if err := checkFreshness(cred, now); err != nil {
		reasons = append(reasons, reason(err))
	}
	if hiddenLaterEvent(cred, records) {
		reasons = append(reasons, "credential status conflicts with supplied history")
	}
	if cred.Status != StatusActive {
		reasons = append(reasons, "status is "+string(cred.Status))
	}
	if !slices.Contains(cred.Audiences, audience) {
		reasons = append(reasons, "audience "+audience+" is not granted")
	}
	if cred.NotBefore != nil && now < *cred.NotBefore {
		reasons = append(reasons, "not yet valid")
	}
	if cred.ExpiresAt != nil && now >= *cred.ExpiresAt {
		reasons = append(reasons, "expired")
	}
	if reasons == nil {
		reasons = []string{}
	}
	return Verdict{Credential: cred, Verified: verified, Usable: len(reasons) == 0, Reasons: reasons}
}

// latestGrantMatches: the record named by grant_event_id passes the
// historical authority check, is a grant, and its payload equals the
// credential's grant members (compared in JCS, so JSON types count); the
// credential's latest event is that grant (same acceptance time and
// controller, not revoked) or a later revocation (revoked).
func latestGrantMatches(validate EnvelopeValidator, cred *Credential, records []Record, doc *PrincipalDocument, resolvedURL string) error {
	i := slices.IndexFunc(records, func(r Record) bool { return r.Envelope.Hash == cred.GrantEventID })
	if i < 0 {
		return newError(CodeInvalidDelegation, "/grant_event_id", "latest grant record is missing")
	}
	rec := &records[i]
	if err := checkHistorical(validate, rec, doc, resolvedURL, nil); err != nil {
		return err
	}
	if rec.Envelope.Event.Type != TypeGrant {
		return newError(CodeInvalidDelegation, "/grant_event_id", "grant_event_id does not name a grant")
	}
	grant, err := identity.Canonicalize(rec.Envelope.Event.Payload)
	if err != nil {
		return newError(CodeInvalidDelegation, "", "credential does not match its latest grant")
	}
	claimed, err := identity.Canonicalize(cred.Grant().Value())
	if err != nil || cred.Protocol != Protocol || !bytes.Equal(grant, claimed) {
		return newError(CodeInvalidDelegation, "", "credential does not match its latest grant")
	}
	if cred.EventID == cred.GrantEventID {
		if cred.AcceptedAt != rec.AcceptedAt || cred.Controller != rec.Envelope.Event.Actor || cred.Status == StatusRevoked {
			return newError(CodeInvalidDelegation, "", "credential does not match its latest grant")
		}
	} else if cred.Status != StatusRevoked {
		return newError(CodeInvalidDelegation, "/status", "a credential last changed by a revocation must be revoked")
	}
	return nil
}

// hiddenLaterEvent reports a record of the same credential (id and
// principal) other than its latest event that was accepted after it, or
// that follows it in the supplied order: the service's view hides it.
func hiddenLaterEvent(cred *Credential, records []Record) bool {
	current := slices.IndexFunc(records, func(r Record) bool { return r.Envelope.Hash == cred.EventID })
	for i := range records {
		r := &records[i]
		id, principal := payloadIdentity(r.Envelope.Event.Payload)
		if r.Envelope.Hash != cred.EventID && id == cred.ID && principal == cred.PrincipalID &&
			(r.AcceptedAt > cred.AcceptedAt || (current >= 0 && i > current)) {
			return true
		}
	}
	return false
}

// payloadIdentity reads id and principal_id of an event payload, "" when
// absent or not strings.
func payloadIdentity(p any) (id, principal string) {
	m, _ := p.(map[string]any)
	id, _ = m["id"].(string)
	principal, _ = m["principal_id"].(string)
	return id, principal
}

// checkFreshness: checked_at is not before accepted_at nor more than
// StatusClockSkew after now, and at most MaxStatusAge old.
func checkFreshness(cred *Credential, now int64) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"now", now}, {"checked_at", cred.CheckedAt}, {"accepted_at", cred.AcceptedAt}} {
		if err := checkTimestamp(f.v, f.name, CodeInvalidDelegation, ""); err != nil {
			return err
		}
	}
	if cred.CheckedAt < cred.AcceptedAt || cred.CheckedAt > now+StatusClockSkew {
		return newError(CodeInvalidDelegation, "/checked_at", "invalid status timestamps")
	}
	if now-cred.CheckedAt > MaxStatusAge {
		return newError(CodeInvalidDelegation, "/checked_at", "status is stale")
	}
	return nil
}

// ValidateUse is the audience, status and time check a relying party runs
// after verification (validate_delegation_use): a valid audience the
// credential lists, a fresh status, well-formed grant members, the protocol,
// status active, and now inside [not_before, expires_at). The caller still
// authenticates the subject and enforces scopes and constraints. Errors
// carry invalid_delegation (grant_expired for expires_at not after
// not_before; invalid_request for a malformed audience).
func ValidateUse(cred *Credential, audience string, now int64) error {
	if err := ValidateAudience(audience); err != nil {
		return err
	}
	if err := checkFreshness(cred, now); err != nil {
		return err
	}
	if err := validateGrant(cred.Grant(), nil, ""); err != nil {
		return recode(err, CodeInvalidDelegation)
	}
	if cred.Protocol != Protocol || cred.Status != StatusActive || !slices.Contains(cred.Audiences, audience) ||
		(cred.NotBefore != nil && now < *cred.NotBefore) || (cred.ExpiresAt != nil && now >= *cred.ExpiresAt) {
		return newError(CodeInvalidDelegation, "", "delegation is not usable")
	}
	return nil
}
