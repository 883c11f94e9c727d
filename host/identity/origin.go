package identity

import (
	"net/netip"
	"strconv"
	"strings"
)

// ValidOrigin reports whether s is a serialized HTTPS origin (Agent Identity
// Section 4.4 as the reference SDK 0.12.6 reads it): WHATWG URL parsing
// followed by origin serialization would give s back exactly. So the scheme
// is https; the host is a lowercase ASCII domain, a canonical dotted-quad
// IPv4 address or a bracketed IPv6 address in its compressed lowercase form;
// the port, when present, is a decimal without leading zeros in 0–65535 and
// never the default 443; and there is no user info, path (not even "/"),
// query or fragment.
//
// Unlike NormalizeOrigin it never repairs a value: "https://API.example.com",
// "https://api.example.com:443" and "https://api.example.com/" are all
// refused. Domains are held to the kernel schema's letters (a-z, 0-9, "-",
// "_", dot-separated labels, an optional final dot); a non-ASCII name must
// be written in its xn-- form.
func ValidOrigin(s string) bool {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok || rest == "" {
		return false
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return false
		}
		host, rest = rest[:end+1], rest[end+1:]
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return false
			}
			port = p
		}
		if !validIPv6Host(host) {
			return false
		}
	} else {
		if i := strings.IndexByte(rest, ':'); i >= 0 {
			host, port = rest[:i], rest[i+1:]
		}
		if !validDomainOrIPv4(host) {
			return false
		}
	}
	return port == "" && !strings.HasSuffix(s, ":") || validPort(port)
}

// validPort reports whether p is a serialized non-default port.
func validPort(p string) bool {
	if p == "" || len(p) > 5 || (len(p) > 1 && p[0] == '0') || strings.Trim(p, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(p)
	return err == nil && n <= 65535 && n != 443
}

// validIPv6Host reports whether h is "[addr]" with addr in the WHATWG
// serialization: eight hexadecimal pieces without leading zeros, lowercase,
// the first longest run of two or more zero pieces written as "::".
func validIPv6Host(h string) bool {
	addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	if err != nil || !addr.Is6() || addr.Zone() != "" {
		return false
	}
	return h == "["+serializeIPv6(addr.As16())+"]"
}

// serializeIPv6 writes an IPv6 address as WHATWG's host serializer does.
func serializeIPv6(b [16]byte) string {
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	// The first longest run of zero pieces, if it is longer than one.
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

// validDomainOrIPv4 reports whether h is a serialized domain or IPv4 host.
// WHATWG reads a host whose last label is numeric as an IPv4 address, which
// serializes as a canonical dotted quad, so such a host must be one.
func validDomainOrIPv4(h string) bool {
	if h == "" {
		return false
	}
	labels := strings.Split(strings.TrimSuffix(h, "."), ".")
	if last := labels[len(labels)-1]; isNumericLabel(last) {
		addr, err := netip.ParseAddr(h)
		return err == nil && addr.Is4() && addr.String() == h
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// isNumericLabel reports whether a label is one WHATWG's IPv4 parser reads
// as a number: decimal digits, or 0x followed by hexadecimal digits.
func isNumericLabel(l string) bool {
	if l == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(l), "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}
