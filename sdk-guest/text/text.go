// Package text prepares text for plugin results. Room content is untrusted:
// apconnect refuses plugin output that carries HTML tags, script or ui://
// URLs and credential-shaped strings, so one hostile payload quoted as is
// would void a whole result. Clean defuses such text before it is quoted;
// the other helpers format counts and times without fmt, which is costly
// inside the sandbox.
package text

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Flags of the bytes clean looks for, one table lookup per byte: inside
// the sandbox every branch costs a host round trip, so the common case is
// one branch-free pass.
const (
	fHazard = 1 << iota // '<', '>', control characters
	fColon              // ':' (a URL scheme)
	fDash               // '-' (PEM armour, apconnect key files)
	fJ                  // 'J' (a JWT's "eyJ")
	fB                  // 'b' or 'B' ("bearer")
)

var byteFlags = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = fHazard
	}
	t[0x7f], t['<'], t['>'] = fHazard, fHazard, fHazard
	t[':'], t['-'], t['J'], t['b'], t['B'] = fColon, fDash, fJ, fB, fB
	return t
}()

// Clean cuts s to max characters (marking a cut with "…"), turns control
// characters into spaces and defuses what the host's content policy
// refuses: '<' and '>' become look-alikes, so does ':' after a refused URL
// scheme, and JWT dots, PEM dashes and the words "bearer" and
// "apconnect-ed25519" are broken up.
func Clean(s string, max int) string {
	if len(s) > max && utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	if n := len(s); n == 86 || n == 88 || n == 128 {
		s += "…" // never shaped like a raw 64-byte key
	}
	var flags uint8
	for i := 0; i < len(s); i++ {
		flags |= byteFlags[s[i]]
	}
	scheme := flags&fColon != 0 && hasScheme(s)
	jwt := flags&fJ != 0 && strings.Contains(s, "eyJ")
	pem := flags&fDash != 0 && strings.Contains(s, "-----")
	bearer := flags&fB != 0 && containsFold(s, "bearer")
	key := flags&fDash != 0 && containsFold(s, "apconnect-ed25519")
	if flags&fHazard == 0 && !scheme && !jwt && !pem && !bearer && !key {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteRune('‹')
		case r == '>':
			b.WriteRune('›')
		case r == ':' && scheme:
			b.WriteRune('∶')
		case r == '.' && jwt:
			b.WriteRune('·')
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if pem {
		out = strings.ReplaceAll(out, "-----", "—")
	}
	return breakWord(breakWord(out, "bearer"), "apconnect-ed25519")
}

// hasScheme reports whether s holds a URL scheme the content policy
// refuses: javascript:, vbscript:, data:text/html, data:image/svg, ui://.
func hasScheme(s string) bool {
	for i := strings.IndexByte(s, ':'); i >= 0; {
		before, after := s[:i], s[i+1:]
		if hasSuffixFold(before, "javascript") || hasSuffixFold(before, "vbscript") ||
			hasSuffixFold(before, "data") && (hasPrefixFold(after, "text/html") || hasPrefixFold(after, "image/svg")) ||
			hasSuffixFold(before, "ui") && strings.HasPrefix(after, "//") {
			return true
		}
		j := strings.IndexByte(after, ':')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func hasSuffixFold(s, w string) bool {
	return len(s) >= len(w) && strings.EqualFold(s[len(s)-len(w):], w)
}

func hasPrefixFold(s, w string) bool { return len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) }

// Quote is Clean in double quotes.
func Quote(s string, max int) string { return `"` + Clean(s, max) + `"` }

// containsFold reports whether s contains the lowercase ASCII word w in
// any case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// breakWord puts a middle dot before the last two letters of every
// occurrence of the lowercase ASCII word w in s, in any case.
func breakWord(s, w string) string {
	if !containsFold(s, w) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+len(w) <= len(s) && s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			b.WriteString(s[i : i+len(w)-2])
			b.WriteRune('·')
			b.WriteString(s[i+len(w)-2 : i+len(w)])
			i += len(w)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// Int formats n in decimal (strconv without fmt, which is costly inside the
// sandbox).
func Int(n int64) string { return strconv.FormatInt(n, 10) }

// Plural is "1 word" or "n words".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return Int(int64(n)) + " " + word + "s"
}

// Until says how far ahead of now a time is, roughly: "3d", "5h", "12m".
func Until(ms int64) string {
	switch {
	case ms >= 48*3600_000:
		return Int(ms/(24*3600_000)) + "d"
	case ms >= 2*3600_000:
		return Int(ms/3600_000) + "h"
	case ms >= 60_000:
		return Int(ms/60_000) + "m"
	}
	return Int(max(ms/1000, 0)) + "s"
}
