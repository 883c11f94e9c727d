package adp

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"apconnect/host/identity"
)

// jsonError converts a strict-parsing failure into an *Error with the given
// code, keeping its pointer (prefixed).
func jsonError(err error, prefix, code string) *Error {
	var je *identity.JSONError
	if errors.As(err, &je) {
		return &Error{Code: code, Pointer: prefix + je.Pointer, Message: je.Reason, Err: err}
	}
	return &Error{Code: code, Pointer: prefix, Message: err.Error(), Err: err}
}

// fieldString reads a required non-empty string member.
func fieldString(obj map[string]any, key, pointer, code string) (string, error) {
	v, ok := obj[key]
	if !ok {
		return "", newError(code, pointer, "missing required field %q", key)
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return "", newError(code, pointer+"/"+key, "%s must be a non-empty string", key)
	}
	return s, nil
}

// fieldInt reads a required integer member.
func fieldInt(obj map[string]any, key, pointer, code string) (int64, error) {
	v, ok := obj[key]
	if !ok {
		return 0, newError(code, pointer, "missing required field %q", key)
	}
	n, ok := intValue(v)
	if !ok {
		return 0, newError(code, pointer+"/"+key, "%s must be an integer", key)
	}
	return n, nil
}

// str returns the string member key of m, or "".
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// intMember returns the integer member key of m and whether it is present.
func intMember(m map[string]any, key string) (int64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	return intValue(v)
}

// intValue returns the value of a JSON number that is an integer in the safe
// range, however it is written: JSON Schema's "integer" is a property of the
// value, so 1.8e12 is the integer 1800000000000 (and JCS writes it so).
func intValue(v any) (int64, bool) {
	if n, ok := identity.IntValue(v); ok {
		return n, n >= -identity.MaxSafeInteger && n <= identity.MaxSafeInteger
	}
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > identity.MaxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// stringList returns an array-of-strings member, nil when absent. Values that
// are not strings are skipped; callers validate shapes with the kernel schema
// first.
func stringList(m map[string]any, key string) []string {
	arr, ok := m[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, v := range arr {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// canonicalSize returns the length of JCS(v).
func canonicalSize(v any) (int, error) {
	b, err := identity.Canonicalize(v)
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// cloneJSON deep-copies a strictly parsed JSON value, so room state never
// aliases an envelope's payload.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = cloneJSON(e)
		}
		return a
	case []string:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = e
		}
		return a
	}
	return v
}

// cloneObject deep-copies a JSON object, returning nil for nil.
func cloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return cloneJSON(m).(map[string]any)
}

// itoa formats an int.
func itoa(i int) string { return strconv.Itoa(i) }
