package toolcatalog

import (
	"bytes"
	"encoding/json"
	"slices"

	"apconnect/host/identity"
)

// keepEmpty are the members whose empty string is a value, not an
// omission: text a write signs as given.
var keepEmpty = []string{"content", "text", "subject"}

// Normalize applies the reference SDK 0.12.6's input handling to the
// arguments of the tool s is the input schema of (see normalizeArgs).
func (s *Schema) Normalize(raw json.RawMessage) json.RawMessage {
	return normalizeArgs(raw, s.props)
}

// normalizeArgs applies the reference SDK 0.12.6's input handling (its
// PROTOCOL-0.12 section 6.1) before validation, so arguments written for
// that catalog work: a top-level member whose value is null, or "" for a
// member other than content, text and subject, is treated as omitted when
// the tool declares it. Undeclared members stay, to be refused by the
// schema; nested values are never touched. Arguments that are not a
// strictly valid JSON object are returned as they are, for the validator
// to report.
func normalizeArgs(raw json.RawMessage, declared []string) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return raw
	}
	v, err := identity.ParseStrict(t)
	if err != nil {
		return raw
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return raw
	}
	drop := func(k string, v any) bool {
		if !slices.Contains(declared, k) {
			return false
		}
		if v == nil {
			return true
		}
		s, isStr := v.(string)
		return isStr && s == "" && !slices.Contains(keepEmpty, k)
	}
	changed := false
	for k, v := range obj {
		if drop(k, v) {
			changed = true
			break
		}
	}
	if !changed {
		return raw
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(t, &members); err != nil {
		return raw
	}
	for k, v := range obj {
		if drop(k, v) {
			delete(members, k)
		}
	}
	out, err := json.Marshal(members)
	if err != nil {
		return raw
	}
	return out
}
