package delegation

import (
	"errors"

	"apconnect/host/identity"
)

// The Agent Delegation error codes (Agent Delegation 9.7), the eight of the
// reference SDK 0.12.6 (DELEGATION_ERROR_CODES). Services send them in the
// Agent Identity error body beside the shared codes.
const (
	// CodePrincipalUnresolvable: the principal document cannot be resolved
	// authoritatively. This package also returns it for a document that is
	// malformed or was read somewhere other than its own id.
	CodePrincipalUnresolvable = "principal_unresolvable"
	// CodePrincipalNotCanonical: a signed or queried principal_id is not the
	// canonical id of the principal document (an alias, or another URL).
	CodePrincipalNotCanonical = "principal_not_canonical"
	// CodeControllerNotCurrent: the actor is not a current controller of the
	// principal (a retired one, in history checks), or the time lies outside
	// its binding interval.
	CodeControllerNotCurrent = "controller_not_current"
	// CodeDelegationNotPermitted: the controller carries no delegation
	// authority (a signing-only key).
	CodeDelegationNotPermitted = "delegation_not_permitted"
	// CodeDelegationCeilingExceeded: a granted scope or audience, or the
	// credential being managed, lies outside the controller's ceiling.
	CodeDelegationCeilingExceeded = "delegation_ceiling_exceeded"
	// CodeCredentialNotFound: a revocation names a credential that does not
	// exist.
	CodeCredentialNotFound = "credential_not_found"
	// CodeCredentialIdentityMismatch: a replacement changes the credential's
	// principal, subject or protocol.
	CodeCredentialIdentityMismatch = "credential_identity_mismatch"
	// CodeGrantExpired: expires_at is not after not_before, created_at or
	// the acceptance time.
	CodeGrantExpired = "grant_expired"
)

// ErrorCodes lists the eight codes in the SDK's order.
var ErrorCodes = [8]string{
	CodePrincipalUnresolvable,
	CodePrincipalNotCanonical,
	CodeControllerNotCurrent,
	CodeDelegationNotPermitted,
	CodeDelegationCeilingExceeded,
	CodeCredentialNotFound,
	CodeCredentialIdentityMismatch,
	CodeGrantExpired,
}

// The Agent Identity 8.1 codes this package returns, repeated so callers
// need one import for codes.
const (
	CodeInvalidRequest   = identity.CodeInvalidRequest
	CodeInvalidEvent     = identity.CodeInvalidEvent
	CodeInvalidEventHash = identity.CodeInvalidEventHash
	CodeInvalidSignature = identity.CodeInvalidSignature
	CodeInvalidActor     = identity.CodeInvalidActor
	CodePermissionDenied = identity.CodePermissionDenied
)

// CodeInvalidDelegation is the code of a check that is not about a submitted
// event, a query or a principal document: a credential or accepted record
// that does not hold up (a service view failing verification or an audit, a
// stale status, a previous credential that is malformed, acceptance times out
// of order). The Python SDK reports the same failures as
// "invalid_delegation". It is a verification code: a service never sends it
// for a submission; its own state failing this check is an internal error.
const CodeInvalidDelegation = "invalid_delegation"

// ErrorCode returns the stable code of err ("" when err carries none).
func ErrorCode(err error) string { return identity.ErrorCode(err) }

func newError(code, pointer, format string, args ...any) *identity.Error {
	return identity.NewError(code, pointer, format, args...)
}

// recode returns err with its code replaced by code, except the codes that
// name a specific rule (grant_expired), which stay.
func recode(err error, code string) error {
	var e *identity.Error
	if !errors.As(err, &e) || e.Code == CodeGrantExpired {
		return err
	}
	return &identity.Error{Code: code, Pointer: e.Pointer, Message: e.Message, Data: e.Data, Err: e.Err}
}

// reason is the text of err for a Verdict's reasons: the message alone,
// without code or pointer, as the SDK writes it.
func reason(err error) string {
	var e *identity.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
