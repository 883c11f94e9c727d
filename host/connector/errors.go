package connector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"apconnect/host/client"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Connector error codes of its own. Errors from hosts and from the ADP and
// Agent Identity rules keep their protocol code (room_head_mismatch,
// permission_denied, payload_schema_violation, …) and data.
const (
	// CodeInvalidInput: the tool input is unusable (beyond what the input
	// schema catches: half a base, a payload that is not an object, …).
	CodeInvalidInput = "invalid_input"
	// CodeAmbiguousRoom: the room id is known on more than one host and no
	// host was given.
	CodeAmbiguousRoom = "ambiguous_room"
	// CodeHostNotAllowed: the host (or profile service) is not in the
	// operator's configuration.
	CodeHostNotAllowed = "host_not_allowed"
	// CodeRoomNotOpen: the room is not known locally and no host says
	// where it is; open it with agent_protocols_room_open.
	CodeRoomNotOpen = "room_not_open"
	// CodeDraftNotFound: no held draft has that id.
	CodeDraftNotFound = "draft_not_found"
	// CodeMemberNotFound: the room has no such member.
	CodeMemberNotFound = "member_not_found"
	// CodeRoleMismatch: a join completion asked for another role than the
	// one the join request was approved with.
	CodeRoleMismatch = "role_mismatch"
	// CodeVerificationFailed: the room is marked as failing verification;
	// nothing is applied or written until a clean resync (refresh).
	CodeVerificationFailed = "verification_failed"
	// CodeUnavailable: the host could not be reached (after retries).
	CodeUnavailable = "unavailable"
	// CodeSubmissionPending: a signed write could not be confirmed; it stays
	// in the outbox and is resubmitted (idempotently) in the background.
	CodeSubmissionPending = "submission_pending"
	// CodePluginFailed: a plugin tool failed (trap, timeout, refused
	// output, its own error); data.plugin names the plugin and
	// data.plugin_code says how.
	CodePluginFailed = "plugin_failed"
	// CodeUnsupportedProtocol: services_list or schema_get was asked about
	// a protocol apconnect does not speak (it speaks agent-discourse/1.0
	// and agent-profile/1.0); data.supported lists those.
	CodeUnsupportedProtocol = "unsupported_protocol"
	// CodeStaleProfile: a profile service served an older profile than
	// the one pinned for that Agent ID (a smaller nonce, or the same nonce
	// with another envelope): a rollback, refused (0.12.6 stale_profile).
	CodeStaleProfile = "stale_profile"
	// CodeTypeNotDefined: schema_get or room_watch named an event type the
	// room (or protocol) does not define.
	CodeTypeNotDefined = adp.CodeTypeNotDefined
	// CodeInternal: a local failure (database, encoding).
	CodeInternal = "internal"
	// CodeInvalidEvent: the event failed a local check before signing
	// (schema, plugin validator); data.errors lists every failure.
	CodeInvalidEvent = identity.CodeInvalidEvent
	// CodeRateLimited: the local write budget of the room and kind is spent;
	// data.retry_after_ms says when to try again.
	CodeRateLimited = identity.CodeRateLimited
	// CodeNotFound: the thing asked for does not exist.
	CodeNotFound = identity.CodeNotFound
)

// Error is a failure reported to the agent: a stable machine-readable code,
// an English message and optional data (ADP error data kept as the host sent
// it).
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

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *Error { return errorf(CodeInvalidInput, format, args...) }

// AsError converts any error into an *Error, keeping protocol codes and
// data: an *Error as is; a host's error response with its code, message
// and data (Retry-After as retry_after_ms); an ADP or Agent Identity rule
// failure with its code, pointer and data; network failures as
// unavailable; anything else as internal.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	var he *client.Error
	if errors.As(err, &he) {
		e := &Error{Code: he.Code, Message: he.Message, Data: he.Data, Err: err}
		if e.Code == "" {
			e.Code = CodeUnavailable
			e.Message = fmt.Sprintf("host answered HTTP %d: %s", he.Status, he.Message)
			if he.Status == http.StatusNotFound {
				e.Code = CodeNotFound
			}
		}
		if e.Message == "" {
			e.Message = e.Code
		}
		if he.RetryAfter > 0 {
			e.RetryAfter = he.RetryAfter
			e.Data = withData(e.Data, "retry_after_ms", he.RetryAfter.Milliseconds())
		}
		return e
	}
	var ae *adp.Error
	if errors.As(err, &ae) {
		e := &Error{Code: ae.Code, Message: ae.Message, Data: ae.Data, Err: err}
		if ae.Pointer != "" {
			e.Data = withData(e.Data, "pointer", ae.Pointer)
		}
		return e
	}
	var ie *identity.Error
	if errors.As(err, &ie) {
		e := &Error{Code: ie.Code, Message: ie.Message, Err: err}
		if ie.Pointer != "" {
			e.Data = map[string]any{"pointer": ie.Pointer}
		}
		return e
	}
	var ne *client.NetworkError
	if errors.As(err, &ne) {
		return &Error{Code: CodeUnavailable, Message: ne.Error(), Err: err}
	}
	var re *client.ResponseError
	if errors.As(err, &re) {
		return &Error{Code: CodeUnavailable, Message: re.Error(), Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeUnavailable, Message: err.Error(), Err: err}
	}
	return &Error{Code: CodeInternal, Message: err.Error(), Err: err}
}

func withData(d map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(d)+1)
	for key, val := range d {
		out[key] = val
	}
	out[k] = v
	return out
}

// hostCode returns the service error code of err ("" when it is not a
// service error response).
func hostCode(err error) string { return client.ErrorCode(err) }

// wrap is AsError for functions returning error: nil stays a nil error
// (never a typed nil *Error).
func wrap(err error) error {
	if err == nil {
		return nil
	}
	return AsError(err)
}
