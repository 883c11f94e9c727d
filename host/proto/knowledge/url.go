package knowledge

import (
	"net/netip"
	"strconv"
	"strings"
)

// ValidHTTPSURL reports whether s is an absolute HTTPS URL as the Knowledge
// rules require of a license, an evidence url and a profile url: one both
// reference SDKs accept. That is the schema's httpsUrl pattern; an RFC 3986
// URI (the Rust SDK asserts "format": "uri"), so printable ASCII only with
// sound percent-encodings; a host that a WHATWG URL parser accepts (the Rust
// SDK parses with one), non-empty, with no user info; a port, when present,
// of decimal digits up to 65535 (the Python SDK reads it); and no
// backslash, space or control character.
//
// Where the SDKs differ, the stricter one decides, so a service never keeps
// an event one SDK's reader refuses: the Python SDK alone would accept
// non-ASCII, "<", "^", a bracketed zone or IPvFuture, and a numeric host
// that is no IPv4 address. A percent-encoded host byte above 0x7F is
// refused too (the Rust SDK would map it through IDNA).
func ValidHTTPSURL(s string) bool {
	_, ok := parseHTTPSURL(s, true)
	return ok
}

// httpsURL is the authority of a URL ValidHTTPSURL accepts.
type httpsURL struct {
	host string // as written (an IPv6 literal with its brackets)
	port string // digits, "" when absent or empty
	rest string // path, query and fragment
}

// parseHTTPSURL applies ValidHTTPSURL's rule and returns the URL's parts.
// Without uri it applies the rule of discovery endpoints, which the schema
// gives no "format": the path, query and fragment may then hold any
// character but a space, a control character or a backslash (a WHATWG
// parser percent-encodes the rest), and the host is left to the caller's
// comparison with a serialized origin.
func parseHTTPSURL(s string, uri bool) (httpsURL, bool) {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		return httpsURL{}, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == '\\' || uri && s[i] >= 0x7f {
			return httpsURL{}, false
		}
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	var u httpsURL
	if strings.HasPrefix(authority, "[") {
		close := strings.IndexByte(authority, ']')
		if close < 0 {
			return httpsURL{}, false
		}
		u.host = authority[:close+1]
		after := authority[close+1:]
		if after != "" {
			p, ok := strings.CutPrefix(after, ":")
			if !ok {
				return httpsURL{}, false
			}
			u.port = p
		}
		if !validIPv6Literal(u.host) {
			return httpsURL{}, false
		}
	} else {
		u.host = authority
		if i := strings.IndexByte(authority, ':'); i >= 0 {
			u.host, u.port = authority[:i], authority[i+1:]
		}
		if u.host == "" || strings.Contains(u.host, "@") || uri && !validRegName(u.host) {
			return httpsURL{}, false
		}
	}
	if !validPortDigits(u.port) || uri && !validURITail(tail) {
		return httpsURL{}, false
	}
	u.rest = tail
	return u, true
}

// validPortDigits reports whether p is empty or decimal digits up to 65535.
func validPortDigits(p string) bool {
	if p == "" {
		return true
	}
	if strings.Trim(p, "0123456789") != "" {
		return false
	}
	p = strings.TrimLeft(p, "0")
	if len(p) > 5 {
		return false
	}
	n, _ := strconv.Atoi("0" + p)
	return n <= 65535
}

// validIPv6Literal reports whether h is "[address]" with an IPv6 address
// and no zone: RFC 3986 allows no zone, WHATWG no IPvFuture.
func validIPv6Literal(h string) bool {
	inner := h[1 : len(h)-1]
	if strings.ContainsAny(inner, "%") {
		return false
	}
	addr, err := netip.ParseAddr(inner)
	return err == nil && addr.Is6()
}

// uriClass values: which RFC 3986 productions a byte may appear in.
const (
	uriRegName  = 1 << iota // unreserved and sub-delims
	uriColon                // ":"
	uriAt                   // "@"
	uriSlash                // "/"
	uriQuestion             // "?"

	uriPath  = uriRegName | uriColon | uriAt | uriSlash
	uriQuery = uriPath | uriQuestion
)

// uriClass classifies one ASCII byte; "%" is handled by the scanners.
func uriClass(c byte) int {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return uriRegName
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return uriRegName
	case ':':
		return uriColon
	case '@':
		return uriAt
	case '/':
		return uriSlash
	case '?':
		return uriQuestion
	}
	return 0
}

// scanURI returns the end of the run of s in class, percent-encodings
// included, or -1 on a broken percent-encoding.
func scanURI(s string, class int) int {
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case uriClass(c)&class != 0:
			i++
		case c == '%':
			if i+3 > len(s) || !isHex(s[i+1:i+3]) {
				return -1
			}
			i += 3
		default:
			return i
		}
	}
	return i
}

// validURITail reports whether t is an RFC 3986 path-abempty, optionally
// followed by "?" query and "#" fragment.
func validURITail(t string) bool {
	n := scanURI(t, uriPath)
	if n < 0 {
		return false
	}
	t = t[n:]
	if q, ok := strings.CutPrefix(t, "?"); ok {
		if n = scanURI(q, uriQuery); n < 0 {
			return false
		}
		t = q[n:]
	}
	if f, ok := strings.CutPrefix(t, "#"); ok {
		if n = scanURI(f, uriQuery); n < 0 {
			return false
		}
		t = f[n:]
	}
	return t == ""
}

// validRegName reports whether h is a non-empty RFC 3986 reg-name whose
// WHATWG reading is a valid host: percent-decoded, it holds no forbidden
// domain code point and no byte above 0x7F, and when its last label is
// numeric it is an IPv4 address.
func validRegName(h string) bool {
	if h == "" || scanURI(h, uriRegName) != len(h) {
		return false
	}
	decoded, ok := percentDecode(h)
	if !ok {
		return false
	}
	for i := 0; i < len(decoded); i++ {
		c := decoded[i]
		if c < 0x20 || c >= 0x7f || strings.IndexByte(" #%/:<>?@[\\]^|", c) >= 0 {
			return false
		}
	}
	lower := strings.ToLower(decoded)
	if endsInNumber(lower) {
		_, ok := parseIPv4(lower)
		return ok
	}
	return true
}

// percentDecode decodes %XX escapes; the scan already checked them.
func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), true
}

// endsInNumber is WHATWG's ends-in-a-number checker.
func endsInNumber(h string) bool {
	parts := strings.Split(h, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	if hex, ok := strings.CutPrefix(strings.ToLower(last), "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return false
}

// parseIPv4 is WHATWG's IPv4 parser: up to four parts, each decimal, 0x
// hexadecimal or 0-prefixed octal, the last filling the remaining bytes.
func parseIPv4(h string) (uint32, bool) {
	parts := strings.Split(h, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums[i] = n
	}
	var addr uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return 0, false
		}
		addr |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return 0, false
	}
	return uint32(addr + last), true
}

// parseIPv4Number reads one IPv4 part; values beyond 2^32 fail (no part
// may be that large).
func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" {
		return 0, true
	}
	p = strings.TrimLeft(p, "0")
	if p == "" {
		return 0, true
	}
	if len(p) > 12 {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil && n < 1<<32
}

// endpointOrigin returns the serialized origin of an endpoint URL, for the
// discovery rule that endpoints live on the serving origin. It needs a host
// both SDKs serialize alike: no percent-encoding, and (checked by the
// caller's comparison with a valid origin) a canonical IPv4 form.
func endpointOrigin(s string) (string, bool) {
	u, ok := parseHTTPSURL(s, false)
	if !ok || strings.Contains(u.host, "%") {
		return "", false
	}
	host := strings.ToLower(u.host)
	if strings.HasPrefix(host, "[") {
		addr, _ := netip.ParseAddr(host[1 : len(host)-1])
		host = "[" + serializeIPv6(addr.As16()) + "]"
	}
	port := strings.TrimLeft(u.port, "0")
	if u.port != "" && port == "" {
		port = "0"
	}
	if port == "" || port == "443" {
		return "https://" + host, true
	}
	return "https://" + host + ":" + port, true
}

// serializeIPv6 writes an IPv6 address as WHATWG's host serializer does:
// eight lowercase hexadecimal pieces without leading zeros, the first
// longest run of two or more zero pieces written "::" (never a dotted
// IPv4 tail).
func serializeIPv6(b [16]byte) string {
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	start, length := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == start {
			sb.WriteString("::")
			i += length - 1
			continue
		}
		if sb.Len() > 0 && !strings.HasSuffix(sb.String(), ":") {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
	}
	return sb.String()
}
