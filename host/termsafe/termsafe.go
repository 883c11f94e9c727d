// Package termsafe makes untrusted text safe to print on a terminal.
// Plugin descriptions and error messages, a remote host's answers and the
// files of a home all reach `apconnect plugin inspect` and `apconnect
// doctor`; a control character in them could move the cursor, erase a
// line, hide what follows (ESC [8m) or set the window title, and a Unicode
// bidirectional override could reorder what the operator reads. Escape
// replaces every such character with a visible escape, so the operator
// both sees the text and sees that something was escaped.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal as it is: C0 and C1
// controls, DEL, format characters (bidirectional controls, zero-width
// characters, tag characters) and the line and paragraph separators.
func unsafe(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
		unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029
}

// Escape returns s with every character a terminal could act on replaced
// by a visible escape: \n, \r and \t for those three, \xNN for other
// ASCII controls and for bytes that are not UTF-8, \u{XXXX} for the rest.
// Text without such characters is returned unchanged.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u{%04x}`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is Escape for multi-line messages (errors that list several
// problems): it keeps the line breaks and escapes everything else, and
// indents every line after the first by two spaces, so that no line of
// the text can pass for one of the program's own.
func Lines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
		if i > 0 {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r) {
			return true
		}
		i += size
	}
	return false
}

// JSON returns JSON text (as encoding/json writes it: valid UTF-8, C0
// controls already escaped) with the characters encoding/json leaves raw
// and Escape would not — DEL, C1 controls, format characters — written as
// \u escapes. Outside strings JSON text is ASCII, so every such character
// is inside a string and the result decodes to the same values.
func JSON(data []byte) []byte {
	if !needsEscape(string(data)) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if size == 1 && r == utf8.RuneError || !unsafe(r) || r == '\n' || r == '\t' || r == '\r' {
			// Invalid bytes cannot come from encoding/json; the
			// whitespace between tokens (indentation) is JSON's own.
			out = append(out, data[i:i+size]...)
		} else if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	return out
}
