// Package text holds the small string helpers every layer uses for
// untrusted text: shortening it for a message without splitting a UTF-8
// sequence, and escaping a JSON pointer token.
package text

import (
	"strings"
	"unicode/utf8"
)

// Truncate returns s when it has at most n code points, else its first
// n-1 code points and "…" (n code points in all). It never splits a UTF-8
// sequence; invalid bytes count as one code point each. n < 1 gives "…" for
// any non-empty s.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return "…"
	}
	i, c := 0, 0
	for i = range s {
		if c == n-1 {
			break
		}
		c++
	}
	return s[:i] + "…"
}

// EscapePointer escapes one reference token of an RFC 6901 JSON pointer:
// "~" becomes "~0" and "/" becomes "~1".
func EscapePointer(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}
