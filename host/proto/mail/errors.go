package mail

import (
	"errors"
	"fmt"
	"net/http"

	"apconnect/host/identity"
)

// Agent Mail's own error codes, as the reference SDK 0.12.6 raises them.
const (
	// CodeMailboxUnavailable: the mailbox is unknown to the relay, the relay
	// is not one of its current routes, or its card is closed (no routes).
	CodeMailboxUnavailable = "mailbox_unavailable"
	// CodeStaleCard: a packet names a card that is not the mailbox's current
	// one or whose card has expired; a card older than (or conflicting with)
	// the one pinned for its mailbox.
	CodeStaleCard = "stale_card"
	// CodeMailboxConflict: a card for a mailbox ID another owner holds.
	CodeMailboxConflict = "mailbox_conflict"
	// CodePacketExpired: a packet or message past its expires_at (or a
	// message future-dated when sealed).
	CodePacketExpired = "packet_expired"
)

// Local codes of the SDK: they describe a caller's own input or a response,
// and no relay sends them in an error body.
const (
	// CodeInvalidPrivateKey: a recipient secret that does not match the card.
	CodeInvalidPrivateKey = "invalid_private_key"
	// CodeInvalidResponse: a relay response that breaks the protocol.
	CodeInvalidResponse = "invalid_response"
	// CodeInvalidURL: an address or Agent URL that does not parse.
	CodeInvalidURL = identity.CodeInvalidURL
)

// The Agent Identity 8.1 codes, repeated so callers need one import.
const (
	CodeInvalidRequest       = identity.CodeInvalidRequest
	CodeInvalidEvent         = identity.CodeInvalidEvent
	CodeInvalidEventHash     = identity.CodeInvalidEventHash
	CodeInvalidSignature     = identity.CodeInvalidSignature
	CodeInvalidActor         = identity.CodeInvalidActor
	CodeTimestampOutOfWindow = identity.CodeTimestampOutOfWindow
	CodeNonceNotGreater      = identity.CodeNonceNotGreater
	CodeInvalidToken         = identity.CodeInvalidToken
	CodePermissionDenied     = identity.CodePermissionDenied
	CodeNotFound             = identity.CodeNotFound
	CodeRateLimited          = identity.CodeRateLimited
	CodePayloadTooLarge      = identity.CodePayloadTooLarge
)

// HTTPStatus is the status a relay answers a refusal with, by code, as the
// SDK's test relay (crate tests/local_connector_services.rs) maps them:
// 404 mailbox_unavailable, 409 stale_card and mailbox_conflict, 410
// packet_expired, 403 permission_denied, 401 invalid_token, 413
// payload_too_large, 429 rate_limited, and 400 for every other code.
func HTTPStatus(code string) int {
	switch code {
	case CodeMailboxUnavailable:
		return http.StatusNotFound
	case CodeStaleCard, CodeMailboxConflict:
		return http.StatusConflict
	case CodePacketExpired:
		return http.StatusGone
	case CodePermissionDenied:
		return http.StatusForbidden
	case CodeInvalidToken:
		return http.StatusUnauthorized
	case CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeRateLimited:
		return http.StatusTooManyRequests
	default:
		return http.StatusBadRequest
	}
}

// ErrorCode returns the stable code of err when it is (or wraps) an
// *identity.Error, and "" otherwise.
func ErrorCode(err error) string { return identity.ErrorCode(err) }

// fail returns an *identity.Error.
func fail(code, pointer, format string, args ...any) *identity.Error {
	return identity.NewError(code, pointer, format, args...)
}

// wrap returns err when it already carries a code, and otherwise an
// *identity.Error with code and the message of err.
func wrap(err error, code, pointer, context string) error {
	var e *identity.Error
	if errors.As(err, &e) {
		return err
	}
	return &identity.Error{Code: code, Pointer: pointer, Message: fmt.Sprintf("%s: %v", context, err), Err: err}
}

// checkClock refuses a clock outside 0..2^53-1, as the SDK does before any
// time-dependent rule (invalid_request).
func checkClock(now int64) error {
	if now < 0 || now > identity.MaxSafeInteger {
		return fail(CodeInvalidRequest, "", "the current time %d is outside 0..2^53-1", now)
	}
	return nil
}
