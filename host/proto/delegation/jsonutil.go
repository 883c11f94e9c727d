package delegation

import (
	"strconv"
	"strings"

	"apconnect/host/identity"
	itext "apconnect/host/text"
)

// object reads the members of a strictly parsed JSON object (the shapes
// identity.ParseStrict produces, or values built in Go with []string and
// Go integers) with errors of one code, located by JSON pointer.
type object struct {
	m    map[string]any
	ptr  string
	code string
}

func asObject(v any, ptr, code, what string) (object, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return object{}, newError(code, ptr, "%s must be a JSON object", what)
	}
	return object{m: m, ptr: ptr, code: code}, nil
}

func (o object) at(key string) string { return o.ptr + "/" + itext.EscapePointer(key) }

// closed fails on a member outside allowed.
func (o object) closed(what string, allowed ...string) error {
	for k := range o.m {
		found := false
		for _, a := range allowed {
			if k == a {
				found = true
				break
			}
		}
		if !found {
			return newError(o.code, o.at(k), "unknown %s member %q", what, itext.Truncate(k, 80))
		}
	}
	return nil
}

func (o object) missing(key string) error {
	return newError(o.code, o.ptr, "missing required member %q", key)
}

// str reads a string member; present reports whether it was there.
func (o object) str(key string, required bool) (s string, present bool, err error) {
	v, ok := o.m[key]
	if !ok {
		if required {
			return "", false, o.missing(key)
		}
		return "", false, nil
	}
	s, ok = v.(string)
	if !ok {
		return "", true, newError(o.code, o.at(key), "%s must be a string", key)
	}
	return s, true, nil
}

// int reads an integer member (any int64; ranges are the rules' to check).
func (o object) int(key string, required bool) (n int64, present bool, err error) {
	v, ok := o.m[key]
	if !ok {
		if required {
			return 0, false, o.missing(key)
		}
		return 0, false, nil
	}
	n, ok = identity.IntValue(v)
	if !ok {
		return 0, true, newError(o.code, o.at(key), "%s must be an integer", key)
	}
	return n, true, nil
}

func (o object) optInt(key string) (*int64, error) {
	n, present, err := o.int(key, false)
	if err != nil || !present {
		return nil, err
	}
	return &n, nil
}

// strs reads an array of strings.
func (o object) strs(key string, required bool) ([]string, error) {
	v, ok := o.m[key]
	if !ok {
		if required {
			return nil, o.missing(key)
		}
		return nil, nil
	}
	out, ok := stringList(v)
	if !ok {
		return nil, newError(o.code, o.at(key), "%s must be an array of strings", key)
	}
	return out, nil
}

// obj reads an object member; nil when absent.
func (o object) obj(key string) (map[string]any, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, newError(o.code, o.at(key), "%s must be a JSON object", key)
	}
	return m, nil
}

func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		return append([]string{}, x...), true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// checkTimestamp is the SDK's timestamp rule: a safe integer from 0 to 2^53-1.
func checkTimestamp(n int64, field, code, ptr string) error {
	if n < 0 || n > maxSafeInteger {
		return newError(code, ptr, "%s must be a non-negative safe integer", field)
	}
	return nil
}

// checkStrings is the SDK's rule for protocol lists (scopes, audiences,
// aliases): each entry a string with a non-blank value, never "*", no
// duplicates; and non-empty unless empty is allowed.
func checkStrings(values []string, field string, empty bool, code, ptr string) error {
	if !empty && len(values) == 0 {
		return newError(code, ptr, "%s must be a non-empty array", field)
	}
	seen := make(map[string]bool, len(values))
	for i, v := range values {
		p := ptr + "/" + strconv.Itoa(i)
		if strings.TrimSpace(v) == "" {
			return newError(code, p, "%s must not be empty", field)
		}
		if v == "*" {
			return newError(code, p, "%s cannot contain wildcard", field)
		}
		if seen[v] {
			return newError(code, p, "%s contains duplicates", field)
		}
		seen[v] = true
	}
	return nil
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}

func ptrInt(n int64) *int64 { return &n }

func cloneInt(p *int64) *int64 {
	if p == nil {
		return nil
	}
	return ptrInt(*p)
}
