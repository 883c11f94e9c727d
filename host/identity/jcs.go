package identity

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/gowebpki/jcs"
)

// Canonicalize returns the JCS (RFC 8785) serialization of v, a value in the
// shapes ParseStrict produces (map[string]any, []any, json.Number, string,
// bool, nil). Go integers, float64 and []string are accepted as well, so
// callers can canonicalize values they build themselves.
//
// Object members are ordered by the UTF-16 code units of their names, strings
// use the minimal JSON escaping of ECMAScript (U+2028 and U+2029 stay raw),
// integers print in decimal, and other numbers use the ECMAScript
// Number.prototype.toString form (through github.com/gowebpki/jcs, which is
// tested against the RFC 8785 reference data).
func Canonicalize(v any) ([]byte, error) {
	var b []byte
	b, err := appendCanonical(b, v, 0)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendCanonical appends the JCS serialization of v (any value Canonicalize
// takes) to b. Callers that know the members of a small object write its
// braces, names and commas themselves, in JCS order, and the values through
// AppendCanonical: the same bytes as Canonicalize of the map, without
// building and sorting one.
func AppendCanonical(b []byte, v any) ([]byte, error) {
	return appendCanonical(b, v, 0)
}

// AppendCanonicalString appends the JCS form of a string to b.
func AppendCanonicalString(b []byte, s string) []byte { return appendCanonicalString(b, s) }

// AppendCanonicalInt appends the JCS form of an integer to b; it fails
// outside ±(2^53-1).
func AppendCanonicalInt(b []byte, n int64) ([]byte, error) { return appendCanonicalInt(b, n) }

// CanonicalizeJSON strictly parses a JSON text and returns its JCS form.
func CanonicalizeJSON(data []byte) ([]byte, error) {
	v, err := ParseStrict(data)
	if err != nil {
		return nil, err
	}
	return Canonicalize(v)
}

func appendCanonical(b []byte, v any, depth int) ([]byte, error) {
	if depth > MaxJSONDepth {
		return nil, fmt.Errorf("jcs: nesting deeper than %d", MaxJSONDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		if x {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case string:
		return appendCanonicalString(b, x), nil
	case json.Number:
		return appendCanonicalNumber(b, string(x))
	case int:
		return appendCanonicalInt(b, int64(x))
	case int64:
		return appendCanonicalInt(b, x)
	case float64:
		return appendCanonicalFloat(b, x)
	case []string:
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonicalString(b, s)
		}
		return append(b, ']'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonicalString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("jcs: unsupported value of type %T", v)
	}
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785 3.2.3
// requires. It differs from Go's byte order only when a string holds
// characters above U+FFFF and characters in U+E000..U+FFFF.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendCanonicalString writes s with the escaping of ECMAScript
// JSON.stringify: only '"', '\\' and control characters are escaped.
func appendCanonicalString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			// A run of bytes written as they are, in one append.
			j := i + 1
			for j < len(s) && s[j] >= 0x20 && s[j] != '"' && s[j] != '\\' {
				j++
			}
			b = append(b, s[i:j]...)
			i = j - 1
			continue
		}
		switch {
		case c == '"':
			b = append(b, '\\', '"')
		case c == '\\':
			b = append(b, '\\', '\\')
		case c >= 0x20:
			b = append(b, c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
	}
	return append(b, '"')
}

func appendCanonicalInt(b []byte, n int64) ([]byte, error) {
	if n > MaxSafeInteger || n < -MaxSafeInteger {
		return nil, fmt.Errorf("jcs: integer %d outside the safe range", n)
	}
	return strconv.AppendInt(b, n, 10), nil
}

// appendCanonicalNumber canonicalizes a JSON number token. Plain integer
// tokens are printed in decimal without going through float64; every other
// form is the ECMAScript serialization of its IEEE 754 double value.
func appendCanonicalNumber(b []byte, text string) ([]byte, error) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n == 0 {
			return append(b, '0'), nil // "-0" serializes as 0
		}
		return appendCanonicalInt(b, n)
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, fmt.Errorf("jcs: invalid number %q", truncate(text, 40))
	}
	return appendCanonicalFloat(b, f)
}

func appendCanonicalFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("jcs: number is not finite")
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return nil, fmt.Errorf("jcs: %w", err)
	}
	return append(b, s...), nil
}
