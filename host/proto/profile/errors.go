package profile

import "apconnect/host/identity"

// CodeStaleProfile is the SDK's rejection of a served profile older than, or
// conflicting with, the one a reader has pinned (section 6). No service
// sends it: readers report it.
const CodeStaleProfile = "stale_profile"

// The Agent Identity 8.1 codes this package returns, repeated here so its
// callers need one import for codes.
const (
	CodeInvalidRequest  = identity.CodeInvalidRequest
	CodeInvalidEvent    = identity.CodeInvalidEvent
	CodeInvalidActor    = identity.CodeInvalidActor
	CodePayloadTooLarge = identity.CodePayloadTooLarge
)

func newError(code, pointer, format string, args ...any) *identity.Error {
	return identity.NewError(code, pointer, format, args...)
}

// withData returns e with key set in its data object.
func withData(e *identity.Error, key string, v any) *identity.Error {
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	e.Data[key] = v
	return e
}
