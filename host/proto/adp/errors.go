package adp

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"apconnect/host/identity"
)

// ADP error codes: the 18 of the reference SDK 0.12.6. Hosts send them in
// the Agent Identity error body; the connector preserves them.
const (
	CodeRoomNotFound           = "room_not_found"
	CodeRoomNotActive          = "room_not_active"
	CodeHostMismatch           = "host_mismatch"
	CodeApprovalRequired       = "approval_required"
	CodeJoinRequestNotFound    = "join_request_not_found"
	CodeJoinRequestNotPending  = "join_request_not_pending"
	CodeMemberBanned           = "member_banned"
	CodeMaxSpeakersExceeded    = "max_speakers_exceeded"
	CodeMembershipRequired     = "membership_required"
	CodeRoomHeadMismatch       = "room_head_mismatch"
	CodeBaseRecordMismatch     = "base_record_mismatch"
	CodeAgentStatusNotFound    = "agent_status_not_found"
	CodeTypeNotDefined         = "type_not_defined"
	CodeTypeDisabled           = "type_disabled"
	CodeTypeConflict           = "type_conflict"
	CodeInvalidTypeSchema      = "invalid_type_schema"
	CodePayloadSchemaViolation = "payload_schema_violation"
	CodePackUnavailable        = "pack_unavailable"
)

// The Agent Identity 8.1 codes every Agent Protocols service shares, repeated
// here so callers of this package need one import for codes.
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

// Verification codes of this package. No host sends them: they describe
// records a reader received (a connector syncing, an archive verifier), and a
// hub must never put them in an HTTP error body.
const (
	// CodeInvalidRecord: a server record is malformed, its hash does not
	// match its fields, or it carries a redaction ADP 14.1 forbids.
	CodeInvalidRecord = "invalid_record"
	// CodeChainBroken: records are not gapless from the expected seq, a
	// pre_hash does not link, or an archive's last_seq/last_hash disagrees
	// with its records.
	CodeChainBroken = "chain_broken"
	// CodeReplayedEnvelope: two records of a room carry the same signed
	// envelope (the same event hash). No conformant host records an
	// envelope twice (it answers an exact resubmission with the original
	// record), so the host replayed it.
	CodeReplayedEnvelope = "replayed_envelope"
)

// Error is an ADP rejection: a stable code (section 19 or Agent Identity
// 8.1, or one of the verification codes above), a human-readable message, the
// JSON pointer of the offending value in the envelope when there is one, and
// code-specific data for the error body (for example the room_head_mismatch
// shape of 5.1, or "errors" for schema violations).
type Error struct {
	Code    string // stable machine-readable code
	Message string // human-readable; may change
	// Pointer is an RFC 6901 pointer into the submitted envelope (or record,
	// or declaration), "" when the error is not about one value.
	Pointer string
	// Data is the error body's "data" object; nil when there is none. Values
	// are JSON-ready (strings, int64, bool, []any, map[string]any).
	Data map[string]any
	// Err is the underlying cause, if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Pointer != "" {
		return fmt.Sprintf("%s at %s: %s", e.Code, e.Pointer, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode, ErrorMessage and ErrorData report the error as the connector
// reports every coded error; the pointer, when there is one, is put in the
// data.
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

// Body returns the Agent Identity 8.1 error body:
// {"error": {"code", "message", "data"?}}.
func (e *Error) Body() map[string]any {
	inner := map[string]any{"code": e.Code, "message": e.Message}
	if e.Data != nil {
		inner["data"] = e.Data
	}
	return map[string]any{"error": inner}
}

// FieldError is one schema violation: where in the validated instance (an
// RFC 6901 pointer relative to the instance, "" for its root), which keyword
// failed, and why.
type FieldError struct {
	Path    string `json:"path"`    // RFC 6901 pointer into the instance
	Keyword string `json:"keyword"` // the failing JSON Schema keyword
	Message string `json:"message"` // why it failed
}

// FieldErrors returns the "errors" list of a payload_schema_violation,
// invalid_event or invalid_type_schema error, or nil.
func (e *Error) FieldErrors() []FieldError {
	list, _ := e.Data["errors"].([]any)
	out := make([]FieldError, 0, len(list))
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		p, _ := m["path"].(string)
		k, _ := m["keyword"].(string)
		msg, _ := m["message"].(string)
		out = append(out, FieldError{Path: p, Keyword: k, Message: msg})
	}
	return out
}

// sortFieldErrors orders schema violations deterministically (path, keyword,
// message) and drops exact duplicates.
func sortFieldErrors(list []FieldError) []FieldError {
	slices.SortFunc(list, func(a, b FieldError) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Keyword, b.Keyword), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(list)
}

// fieldErrorData renders a sorted list as the "errors" data member.
func fieldErrorData(list []FieldError) map[string]any {
	items := make([]any, len(list))
	for i, fe := range list {
		items[i] = map[string]any{"path": fe.Path, "keyword": fe.Keyword, "message": fe.Message}
	}
	return map[string]any{"errors": items}
}

// ErrorCode returns the stable code of err when it is (or wraps) an *Error
// of this package or an *identity.Error, and "" otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return identity.ErrorCode(err)
}

// AsError returns err as an *Error: itself when it is one, a conversion of
// an *identity.Error (code, pointer and message kept), and otherwise an
// invalid_request error wrapping it. It returns nil for nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ie *identity.Error
	if errors.As(err, &ie) {
		return &Error{Code: ie.Code, Pointer: ie.Pointer, Message: ie.Message, Err: err}
	}
	return &Error{Code: CodeInvalidRequest, Message: err.Error(), Err: err}
}

// newError builds an *Error.
func newError(code, pointer, format string, args ...any) *Error {
	return &Error{Code: code, Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}

// withPointerPrefix converts err with AsError and prefixes its pointer, so
// errors about an embedded value point into the outer document.
func withPointerPrefix(err error, prefix string) *Error {
	e := AsError(err)
	c := *e
	c.Pointer = prefix + e.Pointer
	return &c
}
