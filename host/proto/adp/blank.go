package adp

import "strings"

// IsBlank reports whether s is blank under the ADP rule (the kernel schema's
// nonBlankString): empty, or made only of U+0009–U+000D, U+0020, U+0085,
// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and
// U+FEFF. The set is fixed, not the platform's Unicode white space table
// (which, for one, leaves out U+FEFF). It applies to room.create and
// room.update topics, type definition titles and message content types.
func IsBlank(s string) bool {
	for _, c := range s {
		switch {
		case c >= 0x09 && c <= 0x0d, c == 0x20, c == 0x85, c == 0xa0, c == 0x1680,
			c >= 0x2000 && c <= 0x200a, c == 0x2028, c == 0x2029, c == 0x202f,
			c == 0x205f, c == 0x3000, c == 0xfeff:
		default:
			return false
		}
	}
	return true
}

// isBlankAs is IsBlank under dialect d. The historical dialect calls blank
// only what both rule sets do: the 0f87fee drafts trimmed Unicode white
// space, which keeps U+FEFF.
func isBlankAs(d dialect, s string) bool {
	if d == historical {
		return strings.TrimSpace(s) == ""
	}
	return IsBlank(s)
}
