package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"apconnect/host/client"
	"apconnect/host/identity"
)

// Error codes of the engine. Protocol modules add their own; errors from
// services and from the rules packages keep their protocol code and data.
const (
	// CodeInvalidInput: the tool input is unusable (beyond what the input
	// schema catches).
	CodeInvalidInput = "invalid_input"
	// CodeHostNotAllowed: the origin is not in the operator's
	// configuration.
	CodeHostNotAllowed = "host_not_allowed"
	// CodePermissionDenied: the origin is configured but the operator did
	// not grant the capability the call needs there (data: capability,
	// origin). Nothing was sent and no nonce was used.
	CodePermissionDenied = identity.CodePermissionDenied
	// CodeUnavailable: the service could not be reached (after retries).
	CodeUnavailable = "unavailable"
	// CodeSubmissionPending: a signed write could not be confirmed; it stays
	// in the outbox and is resubmitted (idempotently) in the background.
	CodeSubmissionPending = "submission_pending"
	// CodeUnsupportedProtocol: services_list or schema_get was asked about
	// a protocol apconnect does not speak; data.supported lists those.
	CodeUnsupportedProtocol = "unsupported_protocol"
	// CodeInternal: a local failure (database, encoding).
	CodeInternal = "internal"
	// CodeInvalidEvent: the event failed a local check before signing;
	// data.errors lists every failure.
	CodeInvalidEvent = identity.CodeInvalidEvent
	// CodeRateLimited: a local write budget is spent; data.retry_after_ms
	// says when to try again.
	CodeRateLimited = identity.CodeRateLimited
	// CodeNotFound: the thing asked for does not exist.
	CodeNotFound = identity.CodeNotFound
	// CodeTypeNotDefined: schema_get was asked for an event type the
	// protocol (or the room) does not define.
	CodeTypeNotDefined = "type_not_defined"
)

// Coded is an error that carries what the agent is told: a stable code, a
// message and data. The rules packages' errors (identity, adp, the other
// protocols'), a service's error response (client.Error) and Error itself
// implement it, so a new kind of error needs no change here.
type Coded interface {
	error
	ErrorCode() string
	ErrorMessage() string
	ErrorData() map[string]any
}

// Error is a failure reported to the agent: a stable machine-readable code,
// an English message and optional data (protocol error data kept as the
// service sent it).
type Error struct {
	Code    string
	Message string
	Data    map[string]any
	// RetryAfter is set for rate_limited (also in Data as retry_after_ms).
	RetryAfter time.Duration
	// Err is the underlying cause, if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode, ErrorMessage and ErrorData implement Coded.
func (e *Error) ErrorCode() string         { return e.Code }
func (e *Error) ErrorMessage() string      { return e.Message }
func (e *Error) ErrorData() map[string]any { return e.Data }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an invalid_input error.
func Invalid(format string, args ...any) *Error { return Errorf(CodeInvalidInput, format, args...) }

// AsError converts any error into an *Error: an *Error as it is; a Coded
// error with its code, message and data (a Retry-After as RetryAfter);
// network failures and ended contexts as unavailable; anything else as
// internal.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	var coded Coded
	if errors.As(err, &coded) {
		e := &Error{Code: coded.ErrorCode(), Message: coded.ErrorMessage(), Data: coded.ErrorData(), Err: err}
		if e.Message == "" {
			e.Message = e.Code
		}
		var ra interface{ RetryAfterDuration() time.Duration }
		if errors.As(err, &ra) {
			e.RetryAfter = ra.RetryAfterDuration()
		}
		return e
	}
	var ne *client.NetworkError
	var re *client.ResponseError
	switch {
	case errors.As(err, &ne), errors.As(err, &re),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeUnavailable, Message: err.Error(), Err: err}
	}
	return &Error{Code: CodeInternal, Message: err.Error(), Err: err}
}

// Wrap is AsError for functions returning error: nil stays a nil error
// (never a typed nil *Error).
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return AsError(err)
}

// WithData returns a copy of d with k set to v.
func WithData(d map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(d)+1)
	maps.Copy(out, d)
	out[k] = v
	return out
}

// ServiceCode returns the code of a service's error response ("" when err
// is not one).
func ServiceCode(err error) string { return client.ErrorCode(err) }
