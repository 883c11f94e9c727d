package client

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"apconnect/host/identity"
)

// HeaderMaxSeenNonce is the Agent Identity 6.2 response header.
const HeaderMaxSeenNonce = "Max-Seen-Nonce"

// Sentinel errors. Test with errors.Is.
var (
	// ErrResponseTooLarge: a response body exceeded its bound.
	ErrResponseTooLarge = errors.New("response body is larger than the configured bound")
	// ErrNoSigner: an operation needs the agent's identity (a request JWT)
	// but the Host was built without a Signer.
	ErrNoSigner = errors.New("this operation needs a signer (request JWT) but the host client has none")
	// ErrStreamIdle: a live stream sent nothing, not even a heartbeat, for
	// the idle timeout; treat the stream as dead and reconnect.
	ErrStreamIdle = errors.New("live stream idle timeout: no data or heartbeat received")
	// ErrStreamClosed: Next was called on a closed Stream.
	ErrStreamClosed = errors.New("live stream closed")
	// ErrOtherOrigin: a URL (discovery endpoint, archive format link,
	// room URL) is not on the configured origin and was refused.
	ErrOtherOrigin = errors.New("URL is on another origin than the configured one; refused")
)

// Error is an error response of a service (Agent Identity 8.1): the HTTP
// status and the service's code, message and data exactly as sent. A body
// that is not the Agent Identity error shape (an HTML 502 from a proxy, say)
// leaves Code empty and describes the body in Message.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Code is error.code, the stable machine-readable code ("" when the
	// body was not an Agent Identity error).
	Code string
	// Message is error.message (human-readable; may change).
	Message string
	// Data is error.data, strictly parsed (numbers as json.Number); nil
	// when absent.
	Data map[string]any
	// MaxSeenNonce is the Max-Seen-Nonce header ("" when absent); apply it
	// with identity.ApplyMaxSeenNonce.
	MaxSeenNonce string
	// RetryAfter is the Retry-After header as a duration (0 when absent).
	RetryAfter time.Duration
	// Method and Path locate the request (no query, never a token).
	Method, Path string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		b.WriteString(" ")
		b.WriteString(e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// ErrorCode is the service's code; a response without one is unavailable
// (not_found for a 404), so every failure a service answers has a code.
func (e *Error) ErrorCode() string {
	switch {
	case e.Code != "":
		return e.Code
	case e.Status == http.StatusNotFound:
		return identity.CodeNotFound
	}
	return "unavailable"
}

// ErrorMessage is the service's message, or a description of the response
// when it sent none.
func (e *Error) ErrorMessage() string {
	switch {
	case e.Code == "":
		return fmt.Sprintf("host answered HTTP %d: %s", e.Status, e.Message)
	case e.Message == "":
		return e.Code
	}
	return e.Message
}

// ErrorData is the service's data, with retry_after_ms when the response
// carried Retry-After.
func (e *Error) ErrorData() map[string]any {
	if e.RetryAfter <= 0 {
		return e.Data
	}
	out := make(map[string]any, len(e.Data)+1)
	for k, v := range e.Data {
		out[k] = v
	}
	out["retry_after_ms"] = e.RetryAfter.Milliseconds()
	return out
}

// RetryAfterDuration is the Retry-After header as a duration.
func (e *Error) RetryAfterDuration() time.Duration { return e.RetryAfter }

// Retryable reports whether the failure is transient by status: 429 or
// 5xx. Reads are retried on these already; a caller deciding about a write
// may use it.
func (e *Error) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// NetworkError is a failure to get a response at all: connection refused or
// reset, TLS failure, timeout, a cut body. For a read it is returned after
// the retries are spent; for a write (a POSTed envelope) it means the
// outcome is unknown — the host may have accepted the envelope — so the
// caller resubmits the exact same envelope (idempotent) or resolves the
// write from history.
type NetworkError struct {
	// Method and Path locate the request (no query, never a token).
	Method, Path string
	// Write is true for a POST of a signed envelope: outcome unknown.
	Write bool
	// Attempts is how many attempts were made.
	Attempts int
	// Err is the underlying error.
	Err error
}

// Error implements error.
func (e *NetworkError) Error() string {
	s := fmt.Sprintf("%s %s: network error", e.Method, e.Path)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Write {
		s += " (write outcome unknown: resubmit the same envelope)"
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *NetworkError) Unwrap() error { return e.Err }

// ResponseError is a response the service did send but that cannot be
// used: a success body that is oversized (ErrResponseTooLarge), not strict
// I-JSON, or not the documented shape (a record failing adp validation
// wraps the *adp.Error, so adp.ErrorCode reports invalid_record), or a
// redirect (ErrRedirect).
type ResponseError struct {
	// Method and Path locate the request (no query, never a token).
	Method, Path string
	// Status is the HTTP status of the response.
	Status int
	// Err says what was wrong.
	Err error
}

// Error implements error.
func (e *ResponseError) Error() string {
	return fmt.Sprintf("%s %s: unusable response (HTTP %d): %v", e.Method, e.Path, e.Status, e.Err)
}

// Unwrap returns the underlying error.
func (e *ResponseError) Unwrap() error { return e.Err }

// ErrorCode returns the service's error code when err is (or wraps) an
// *Error, and "" otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// IsNetwork reports whether err is (or wraps) a *NetworkError.
func IsNetwork(err error) bool {
	var e *NetworkError
	return errors.As(err, &e)
}
