package knowledge

import (
	"slices"

	"apconnect/host/identity"
)

// The six Agent Knowledge error codes (the SDK's KNOWLEDGE_ERROR_CODES).
const (
	// CodeMissingDependency: a target or relation target is not retained;
	// data.missing lists the sorted, distinct missing ids.
	CodeMissingDependency = "missing_dependency"
	// CodeInvalidTarget: a relation or an assessment/retraction points at the
	// wrong event type or contribution kind, or a supersedes/retraction
	// crosses authors or does not raise the nonce.
	CodeInvalidTarget = "invalid_target"
	// CodeInvalidCursor: a query cursor is malformed, belongs to another
	// request, or lies outside the service's sequence.
	CodeInvalidCursor = "invalid_cursor"
	// CodeQueryTooBroad and CodeQueryUnavailable are the service's to send
	// under its own policy; no rule here produces them.
	CodeQueryTooBroad    = "query_too_broad"
	CodeQueryUnavailable = "query_unavailable"
	// CodeUnsupportedSearchMode: a search names a mode the service does not
	// advertise (never substituted), or ranked search is not advertised.
	CodeUnsupportedSearchMode = "unsupported_search_mode"
)

// The Agent Identity codes the Knowledge rules return, repeated so callers
// need one import for codes.
const (
	CodeInvalidRequest       = identity.CodeInvalidRequest
	CodeInvalidEvent         = identity.CodeInvalidEvent
	CodeInvalidEventHash     = identity.CodeInvalidEventHash
	CodeInvalidSignature     = identity.CodeInvalidSignature
	CodeInvalidActor         = identity.CodeInvalidActor
	CodeTimestampOutOfWindow = identity.CodeTimestampOutOfWindow
	CodePermissionDenied     = identity.CodePermissionDenied
	CodeNotFound             = identity.CodeNotFound
	CodePayloadTooLarge      = identity.CodePayloadTooLarge
)

// Client-side codes, as the SDK's clients raise them. No service sends them:
// they describe an answer the client refused.
const (
	// CodeInvalidResponse: a record or page breaks the protocol (wrong
	// service, beyond the checkpoint, out of order, outside the filters, a
	// pagination that changed request or scope).
	CodeInvalidResponse = "invalid_response"
	// CodeInvalidDiscovery: a discovery document is malformed or names
	// another origin.
	CodeInvalidDiscovery = "invalid_discovery"
)

var errorCodes = []string{CodeMissingDependency, CodeInvalidTarget, CodeInvalidCursor, CodeQueryTooBroad, CodeQueryUnavailable, CodeUnsupportedSearchMode}

// ErrorCodes returns the six Knowledge error codes, in the SDK's order.
func ErrorCodes() []string { return slices.Clone(errorCodes) }

// errorf builds an *identity.Error.
func errorf(code, pointer, format string, args ...any) *identity.Error {
	return identity.NewError(code, pointer, format, args...)
}

// recode returns err with its code replaced by code when err is an
// *identity.Error, keeping pointer, message, data and cause: the SDK reports
// a rejected part of a request or response under the request's code.
func recode(err error, code string) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*identity.Error); ok {
		c := *e
		if c.Code != code {
			c.Message = c.Code + ": " + c.Message
			c.Code = code
		}
		return &c
	}
	return &identity.Error{Code: code, Message: err.Error(), Err: err}
}

// under prefixes the pointer of an *identity.Error with prefix.
func under(err error, prefix string) error {
	if e, ok := err.(*identity.Error); ok && prefix != "" {
		c := *e
		c.Pointer = prefix + c.Pointer
		return &c
	}
	return err
}
