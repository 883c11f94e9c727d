package hubhttp

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Codes the hub adds to the shared identity.Code* set. The 18 ADP codes of
// SDK 0.12.6 are re-exported from host/proto/adp (their one definition) so
// handlers and the status table below need one import; the retired
// room_ended and role_not_allowed are not among them.
const (
	CodeInternal       = "internal_error"
	CodeNotImplemented = "not_implemented"

	CodeRoomNotFound           = adp.CodeRoomNotFound
	CodeRoomNotActive          = adp.CodeRoomNotActive
	CodeHostMismatch           = adp.CodeHostMismatch
	CodeApprovalRequired       = adp.CodeApprovalRequired
	CodeJoinRequestNotFound    = adp.CodeJoinRequestNotFound
	CodeJoinRequestNotPending  = adp.CodeJoinRequestNotPending
	CodeMemberBanned           = adp.CodeMemberBanned
	CodeMaxSpeakersExceeded    = adp.CodeMaxSpeakersExceeded
	CodeMembershipRequired     = adp.CodeMembershipRequired
	CodeRoomHeadMismatch       = adp.CodeRoomHeadMismatch
	CodeBaseRecordMismatch     = adp.CodeBaseRecordMismatch
	CodeAgentStatusNotFound    = adp.CodeAgentStatusNotFound
	CodeTypeNotDefined         = adp.CodeTypeNotDefined
	CodeTypeDisabled           = adp.CodeTypeDisabled
	CodeTypeConflict           = adp.CodeTypeConflict
	CodeInvalidTypeSchema      = adp.CodeInvalidTypeSchema
	CodePayloadSchemaViolation = adp.CodePayloadSchemaViolation
	CodePackUnavailable        = adp.CodePackUnavailable
)

// statusByCode maps every stable code to its HTTP status.
var statusByCode = map[string]int{
	identity.CodeInvalidRequest:       http.StatusBadRequest,
	identity.CodeInvalidEvent:         http.StatusBadRequest,
	identity.CodeInvalidEventHash:     http.StatusBadRequest,
	identity.CodeInvalidSignature:     http.StatusBadRequest,
	identity.CodeInvalidActor:         http.StatusBadRequest,
	identity.CodeTimestampOutOfWindow: http.StatusBadRequest,
	identity.CodeNonceNotGreater:      http.StatusConflict,
	identity.CodeInvalidToken:         http.StatusUnauthorized,
	identity.CodePermissionDenied:     http.StatusForbidden,
	identity.CodeNotFound:             http.StatusNotFound,
	identity.CodeRateLimited:          http.StatusTooManyRequests,
	identity.CodePayloadTooLarge:      http.StatusRequestEntityTooLarge,
	CodeInternal:                      http.StatusInternalServerError,
	CodeNotImplemented:                http.StatusNotImplemented,

	CodeRoomNotFound:           http.StatusNotFound,
	CodeRoomNotActive:          http.StatusConflict,
	CodeHostMismatch:           http.StatusBadRequest,
	CodeApprovalRequired:       http.StatusForbidden,
	CodeJoinRequestNotFound:    http.StatusNotFound,
	CodeJoinRequestNotPending:  http.StatusConflict,
	CodeMemberBanned:           http.StatusForbidden,
	CodeMaxSpeakersExceeded:    http.StatusConflict,
	CodeMembershipRequired:     http.StatusForbidden,
	CodeRoomHeadMismatch:       http.StatusConflict,
	CodeBaseRecordMismatch:     http.StatusConflict,
	CodeAgentStatusNotFound:    http.StatusNotFound,
	CodeTypeNotDefined:         http.StatusBadRequest,
	CodeTypeDisabled:           http.StatusConflict,
	CodeTypeConflict:           http.StatusConflict,
	CodeInvalidTypeSchema:      http.StatusBadRequest,
	CodePayloadSchemaViolation: http.StatusBadRequest,
	CodePackUnavailable:        http.StatusBadGateway,
}

// StatusFor returns the HTTP status of a stable error code (500 for a code
// the hub does not know).
func StatusFor(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// HeaderMaxSeenNonce is the Agent Identity 6.2 response header.
const HeaderMaxSeenNonce = "Max-Seen-Nonce"

// Error is an API error: a stable code, a human message, optional data
// (rendered as the error's "data" object), and headers to send with it.
// Status defaults to StatusFor(Code).
type Error struct {
	Status  int
	Code    string
	Message string
	Data    map[string]any
	Header  http.Header
	Err     error
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus returns the status the error is sent with.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return StatusFor(e.Code)
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithData returns e with key set in its data object.
func (e *Error) WithData(key string, v any) *Error {
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	e.Data[key] = v
	return e
}

// WithHeader returns e with a response header set.
func (e *Error) WithHeader(key, value string) *Error {
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Header.Set(key, value)
	return e
}

// NonceNotGreater is the nonce_not_greater rejection, carrying the
// effective maximum in Max-Seen-Nonce and in data.max_seen_nonce.
func NonceNotGreater(nonce, maxSeen int64) *Error {
	return Errorf(identity.CodeNonceNotGreater, "nonce %d is not greater than %d", nonce, maxSeen).
		WithData("max_seen_nonce", maxSeen).
		WithHeader(HeaderMaxSeenNonce, strconv.FormatInt(maxSeen, 10))
}

// RateLimited is the rate_limited rejection with a Retry-After header in
// whole seconds (at least 1).
func RateLimited(retryAfter time.Duration, format string, args ...any) *Error {
	secs := int64((retryAfter + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return Errorf(identity.CodeRateLimited, format, args...).
		WithData("retry_after", secs).
		WithHeader("Retry-After", strconv.FormatInt(secs, 10))
}

// AsError converts any error into an *Error: an *Error passes through, an
// *identity.Error keeps its code (and pointer, as data.pointer), and anything
// else becomes a 500 internal_error whose cause is not shown to the client.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ie *identity.Error
	if errors.As(err, &ie) {
		out := &Error{Code: ie.Code, Message: ie.Message, Err: err}
		if out.Code == "" {
			out.Code = identity.CodeInvalidRequest
		}
		if ie.Pointer != "" {
			out.WithData("pointer", ie.Pointer)
		}
		return out
	}
	var je *identity.JSONError
	if errors.As(err, &je) {
		return &Error{Code: identity.CodeInvalidRequest, Message: je.Error(), Err: err, Data: map[string]any{"pointer": je.Pointer}}
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}
