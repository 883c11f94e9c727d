package adp

import (
	"regexp"

	"apconnect/host/identity"
)

// A fast path for the kernel definition every message record is validated
// against. A connector syncing a room checks each message.create payload
// with the compiled kernel schema, and the general validator (which
// allocates a scope and an error list per value) cost more than the rest of
// the record's room rules together. fastValid answers "valid" only for a
// payload the definition certainly accepts, read by plain Go code, and
// otherwise nothing: every other payload (and every invalid one) still goes
// through the schema, so what is refused, and the error it gets, is
// unchanged.
//
// The Go code mirrors the definitions as they are written in the schema
// below (JCS of each $defs entry it depends on). The kernel schema is
// embedded, but should it ever change, compile finds a different text and
// leaves the fast path off for that schema (TestFastKernelMatchesSchema
// then fails, to update both together).

// fastKernelDefs are the $defs entries, in JCS, that fastMessageCreate
// implements.
var fastKernelDefs = map[string]string{
	"messageCreatePayload": `{"additionalProperties":false,"properties":{"content":{"oneOf":[{"type":"string"},{"type":"object"}]},` +
		`"content_type":{"$ref":"#/$defs/nonBlankString"},"extra":{"$ref":"#/$defs/extra"},"references":{"$ref":"#/$defs/eventHashArray"}},` +
		`"required":["content_type","content"],"type":"object"}`,
	"nonBlankString": `{"pattern":"[^\\u0009-\\u000D\\u0020\\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF]","type":"string"}`,
	"eventHashArray": `{"items":{"$ref":"#/$defs/eventHash"},"type":"array","uniqueItems":true}`,
	"eventHash":      `{"pattern":"^[A-Za-z0-9_-]{43}$","type":"string"}`,
	"extra":          `{"additionalProperties":true,"type":"object"}`,
}

// fastValidators returns the fast validators that apply to a kernel schema
// document: none unless its definitions are exactly fastKernelDefs.
func fastValidators(doc any) map[string]func(any) bool {
	root, _ := doc.(map[string]any)
	defs, _ := root["$defs"].(map[string]any)
	for name, want := range fastKernelDefs {
		got, err := identity.Canonicalize(defs[name])
		if err != nil || string(got) != want {
			return nil
		}
	}
	// The pattern as the schema's regexp engine compiles it.
	nonBlank, err := kernelRegexp(defs["nonBlankString"].(map[string]any)["pattern"].(string))
	if err != nil {
		return nil
	}
	re, ok := nonBlank.(*regexp.Regexp)
	if !ok {
		return nil
	}
	return map[string]func(any) bool{
		"messageCreatePayload": func(v any) bool { return fastMessageCreate(v, re) },
	}
}

// fastMessageCreate reports whether v certainly matches
// messageCreatePayload; false means "ask the schema".
func fastMessageCreate(v any, nonBlank *regexp.Regexp) bool {
	p, ok := v.(map[string]any)
	if !ok {
		return false
	}
	n := 0
	for k, m := range p {
		switch k {
		case "content_type":
			s, ok := m.(string)
			if !ok || !nonBlank.MatchString(s) {
				return false
			}
			n++
		case "content":
			switch m.(type) {
			case string, map[string]any:
			default:
				return false
			}
			n++
		case "references":
			if !fastEventHashArray(m) {
				return false
			}
		case "extra":
			if _, ok := m.(map[string]any); !ok {
				return false
			}
		default:
			return false
		}
	}
	return n == 2
}

// fastEventHashArray reports whether v certainly matches eventHashArray: an
// array of distinct eventHash strings, at most fastMaxReferences of them
// (a longer one is left to the schema, uniqueness being quadratic here).
func fastEventHashArray(v any) bool {
	a, ok := v.([]any)
	if !ok || len(a) > fastMaxReferences {
		return false
	}
	for i, x := range a {
		s, ok := x.(string)
		if !ok || !fastEventHash(s) {
			return false
		}
		for _, y := range a[:i] {
			if y.(string) == s {
				return false
			}
		}
	}
	return true
}

// fastMaxReferences bounds the references fastEventHashArray compares.
const fastMaxReferences = 16

// fastEventHash reports whether s matches ^[A-Za-z0-9_-]{43}$.
func fastEventHash(s string) bool {
	if len(s) != 43 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
