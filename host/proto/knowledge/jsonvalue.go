package knowledge

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// checkStrict reports whether v is strict I-JSON in the shapes
// identity.ParseStrict produces (map[string]any, []any, json.Number, string,
// bool, nil; Go integers and finite float64 are accepted too): valid UTF-8
// strings and names, finite numbers, integral numbers within ±(2^53-1), and
// nesting within identity.MaxJSONDepth. A value parsed by
// identity.ParseStrict always passes; the check guards values callers build.
func checkStrict(v any, pointer string, depth int) error {
	if depth > identity.MaxJSONDepth {
		return errorf(CodeInvalidEvent, pointer, "nesting deeper than %d", identity.MaxJSONDepth)
	}
	switch x := v.(type) {
	case nil, bool, int, int64:
		if n, ok := x.(int); ok && (n > maxSafe || n < -maxSafe) {
			return errorf(CodeInvalidEvent, pointer, "integer outside the safe range")
		}
		if n, ok := x.(int64); ok && (n > maxSafe || n < -maxSafe) {
			return errorf(CodeInvalidEvent, pointer, "integer outside the safe range")
		}
	case string:
		if !utf8.ValidString(x) {
			return errorf(CodeInvalidEvent, pointer, "string is not valid Unicode")
		}
	case json.Number:
		if _, err := identity.ParseStrict([]byte(x)); err != nil {
			return errorf(CodeInvalidEvent, pointer, "invalid number %q", text.Truncate(string(x), 40))
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) || (x == math.Trunc(x) && math.Abs(x) > maxSafe) {
			return errorf(CodeInvalidEvent, pointer, "number is not a safe finite double")
		}
	case []any:
		for i, e := range x {
			if err := checkStrict(e, pointer+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				return errorf(CodeInvalidEvent, pointer, "member name is not valid Unicode")
			}
			if err := checkStrict(e, pointer+"/"+text.EscapePointer(k), depth+1); err != nil {
				return err
			}
		}
	default:
		return errorf(CodeInvalidEvent, pointer, "unsupported JSON value of type %T", v)
	}
	return nil
}

// intOf reads an integral JSON number within ±(2^53-1), in any notation:
// JSON Schema counts 1.0 and 1e3 as integers, and so do both SDKs.
func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			n, err := strconv.ParseInt(s, 10, 64)
			return n, err == nil && n <= maxSafe && n >= -maxSafe
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafe {
			return 0, false
		}
		return int64(f), true
	case int:
		return int64(x), int64(x) <= maxSafe && int64(x) >= -maxSafe
	case int64:
		return x, x <= maxSafe && x >= -maxSafe
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > maxSafe {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

// str returns v as a string, "" when it is not one.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// obj returns v as an object, nil when it is not one.
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// arr returns v as an array, nil when it is not one.
func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

// describe renders a value for a message.
func describe(v any) string {
	b, err := identity.Canonicalize(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}
	return text.Truncate(string(b), 80)
}
