package hubhttp

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"

	"apconnect/host/identity"
)

// Codes the hub adds to the shared identity.Code* set.
const (
	CodeInternal       = "internal_error"
	CodeNotImplemented = "not_implemented"
)

// baseStatuses maps the Agent Identity codes and the hub's own to their
// HTTP statuses; services add theirs with RegisterStatuses.
var baseStatuses = map[string]int{
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
}

// statuses is baseStatuses plus every service's codes.
var statuses = struct {
	sync.RWMutex
	m map[string]int
}{m: maps.Clone(baseStatuses)}

// RegisterStatuses adds the HTTP statuses of the error codes a service
// defines (the hub registers each service's hubsvc.Spec.Statuses). A code
// registered again with the same status is fine; with another status, or
// a shared code given a status of its own, it is an error and nothing is
// registered.
func RegisterStatuses(codes map[string]int) error {
	statuses.Lock()
	defer statuses.Unlock()
	for code, status := range codes {
		if have, ok := statuses.m[code]; ok && have != status {
			return fmt.Errorf("error code %q has HTTP status %d already, not %d", code, have, status)
		}
		if status < 400 || status > 599 {
			return fmt.Errorf("error code %q: %d is not an error status", code, status)
		}
	}
	maps.Copy(statuses.m, codes)
	return nil
}

// StatusFor returns the HTTP status of a stable error code (500 for a code
// no service registered).
func StatusFor(code string) int {
	statuses.RLock()
	defer statuses.RUnlock()
	if s, ok := statuses.m[code]; ok {
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
// *identity.Error keeps its code and data (and its pointer, as
// data.pointer), and anything
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
		for k, v := range ie.Data {
			out.WithData(k, v)
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
