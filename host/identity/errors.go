package identity

import (
	"errors"
	"fmt"
)

// Stable error codes shared by every Agent Protocols service (section 8.1).
const (
	CodeInvalidRequest       = "invalid_request"
	CodeInvalidEvent         = "invalid_event"
	CodeInvalidEventHash     = "invalid_event_hash"
	CodeInvalidSignature     = "invalid_signature"
	CodeInvalidActor         = "invalid_actor"
	CodeTimestampOutOfWindow = "timestamp_out_of_window"
	CodeNonceNotGreater      = "nonce_not_greater"
	CodeInvalidToken         = "invalid_token"
	CodePermissionDenied     = "permission_denied"
	CodeNotFound             = "not_found"
	CodeRateLimited          = "rate_limited"
	CodePayloadTooLarge      = "payload_too_large"
)

// Error is a rejection with a stable code (section 8.1, or a code a
// protocol's rules package defines) and, when the input was JSON, the JSON
// pointer of the offending value. Every protocol's rules package returns
// *Error, so one type carries every protocol's codes to the service and the
// connector.
type Error struct {
	Code    string
	Pointer string
	Message string
	// Data is the error body's "data" object; nil when there is none. Values
	// are JSON-ready (strings, int64, bool, []any, map[string]any).
	Data map[string]any
	Err  error
}

func (e *Error) Error() string {
	if e.Pointer != "" {
		return fmt.Sprintf("%s at %s: %s", e.Code, e.Pointer, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code of err when it is (or wraps) an *Error,
// and "" otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// NewError returns an *Error with a formatted message.
func NewError(code, pointer, format string, args ...any) *Error {
	return &Error{Code: code, Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}

func newError(code, pointer, format string, args ...any) *Error {
	return NewError(code, pointer, format, args...)
}

// eventError converts a strict-parsing failure into an invalid_event error
// that keeps its pointer; other errors pass through unchanged.
func eventError(err error, prefix string) error {
	var je *JSONError
	if errors.As(err, &je) {
		return &Error{Code: CodeInvalidEvent, Pointer: prefix + je.Pointer, Message: je.Reason, Err: err}
	}
	return err
}

// ErrorCode, ErrorMessage and ErrorData let the connector report an *Error
// as it reports every coded error (the engine's Coded interface): the
// pointer, when there is one, is put in the data.
func (e *Error) ErrorCode() string    { return e.Code }
func (e *Error) ErrorMessage() string { return e.Message }
func (e *Error) ErrorData() map[string]any {
	if e.Pointer == "" {
		return e.Data
	}
	out := make(map[string]any, len(e.Data)+1)
	for k, v := range e.Data {
		out[k] = v
	}
	out["pointer"] = e.Pointer
	return out
}
