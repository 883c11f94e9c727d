package delegation

import (
	"bytes"

	"apconnect/host/identity"
)

// AuditHistory is the auditor's check (audit_delegation_history): it
// replays every accepted record of a credential, in acceptance order,
// through CheckHistorical and Materialize from no credential, and requires
// the replay to equal the credential in everything but the service's status
// and checked_at: the grant members, protocol, accepted_at, event_id,
// grant_event_id, controller, and whether it is revoked. Relying parties use
// VerifyCredential instead.
func AuditHistory(cred *Credential, records []Record, doc *PrincipalDocument, resolvedURL string) error {
	if len(records) == 0 {
		return newError(CodeInvalidDelegation, "", "no accepted records")
	}
	var replayed *Credential
	for i := range records {
		rec := &records[i]
		if err := CheckHistorical(rec, doc, resolvedURL, replayed); err != nil {
			return err
		}
		next, err := Materialize(rec.Envelope, StatusActive, rec.AcceptedAt, replayed)
		if err != nil {
			return err
		}
		replayed = next
	}
	mismatch := newError(CodeInvalidDelegation, "", "credential does not match its accepted records")
	want, err := identity.Canonicalize(replayed.Grant().Value())
	if err != nil {
		return mismatch
	}
	got, err := identity.Canonicalize(cred.Grant().Value())
	if err != nil || !bytes.Equal(want, got) || replayed.Protocol != cred.Protocol ||
		replayed.AcceptedAt != cred.AcceptedAt || replayed.EventID != cred.EventID ||
		replayed.GrantEventID != cred.GrantEventID || replayed.Controller != cred.Controller ||
		(replayed.Status == StatusRevoked) != (cred.Status == StatusRevoked) {
		return mismatch
	}
	return nil
}
