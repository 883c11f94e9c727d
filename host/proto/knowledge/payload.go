package knowledge

import (
	"strings"

	"apconnect/host/identity"
)

// ValidatePayload checks a payload against its event type before anything
// is signed, as the connector's knowledge_submit does: an unknown type is
// invalid_request; a payload that fails its schema definition
// (publishPayload, assessPayload or retractPayload) is invalid_event with up
// to MaxPayloadErrors {path, message} in data.errors, each path an RFC 6901
// pointer relative to the payload, sorted by path. A payload that passes
// the schema but would fail ValidateEnvelope's URL, digest or id rules
// (which the SDK reports only after signing, without a path) is refused
// here the same way, with that one error listed.
func ValidatePayload(eventType string, payload any) error {
	def := payloadDefinition(eventType)
	if def == "" {
		return errorf(CodeInvalidRequest, "", "unknown Knowledge event type %q", describe(eventType))
	}
	if err := checkStrict(payload, "", 0); err != nil {
		return err
	}
	list, err := SchemaErrors(payload, def)
	if err != nil {
		return errorf(CodeInvalidEvent, "", "%v", err)
	}
	if len(list) == 0 {
		err := payloadSemantics(eventType, payload, "")
		e, ok := err.(*identity.Error)
		if !ok {
			return err
		}
		list = []FieldError{{Path: e.Pointer, Message: e.Message}}
	}
	return fieldErrorsError(CodeInvalidEvent, "", eventType+" payload", list)
}

// PayloadErrors returns the {path, message} list of a ValidatePayload
// error (its data.errors), or nil.
func PayloadErrors(err error) []FieldError {
	e, ok := err.(*identity.Error)
	if !ok || e.Data == nil {
		return nil
	}
	items, _ := e.Data["errors"].([]any)
	out := make([]FieldError, 0, len(items))
	for _, it := range items {
		m := obj(it)
		out = append(out, FieldError{Path: str(m["path"]), Message: strings.TrimSpace(str(m["message"]))})
	}
	return out
}
