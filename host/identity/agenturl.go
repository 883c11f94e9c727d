package identity

import (
	"slices"
	"strings"
)

// CodeInvalidURL is the reference SDK's local code for an Agent URL (or a
// mail address built on one) that does not parse. It is not one of the
// section 8.1 wire codes: a service that refuses a request over a bad Agent
// URL sends invalid_request or invalid_event, as the field's context says.
const CodeInvalidURL = "invalid_url"

// AgentURLMaxRoutes is the most route parameters an Agent URL carries.
const AgentURLMaxRoutes = 8

// AgentURL is a parsed Agent URL (Agent Identity section 3.5, as the
// reference SDK 0.12.6's parse_agent_url reads it):
//
//	did:agent:<key>[/<protocol>/<resource>][?route=<origin>[&route=<origin>…]]
//
// Protocol and Resource are both set or both empty. Routes are serialized
// HTTPS origins, unique, in the order written; nil or empty for none.
type AgentURL struct {
	AgentID  string
	Protocol string
	Resource string
	Routes   []string
}

// ParseAgentURL parses an Agent URL by the SDK's rules: printable ASCII
// (0x21–0x7e) with no '#' or '%'; an Agent ID; optionally exactly two more
// path segments, a protocol of lowercase letters and a resource of
// base64url letters; and optionally a query of one to eight route=<origin>
// parameters, each a serialized HTTPS origin (ValidOrigin), none repeated.
// Anything else — an empty query, another parameter, a trailing slash, a
// fragment, percent-encoding — is refused. Every refusal is an *Error with
// code CodeInvalidURL.
func ParseAgentURL(s string) (*AgentURL, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '#' || c == '%' {
			return nil, urlError("must be printable ASCII without a fragment or percent-encoding")
		}
	}
	head, query, hasQuery := strings.Cut(s, "?")
	segments := strings.Split(head, "/")
	if _, err := ParseAgentID(segments[0]); err != nil {
		return nil, &Error{Code: CodeInvalidURL, Message: "invalid Agent URL: " + err.Error(), Err: err}
	}
	u := &AgentURL{AgentID: segments[0], Routes: []string{}}
	if len(segments) != 1 {
		if len(segments) != 3 || !validURLPath(segments[1], segments[2]) {
			return nil, urlError("the path must be /<protocol>/<resource>")
		}
		u.Protocol, u.Resource = segments[1], segments[2]
	}
	if !hasQuery {
		return u, nil
	}
	items := strings.Split(query, "&")
	if len(items) > AgentURLMaxRoutes {
		return nil, urlError("at most %d routes", AgentURLMaxRoutes)
	}
	for _, item := range items {
		route, ok := strings.CutPrefix(item, "route=")
		if !ok {
			return nil, urlError("the query allows only route parameters")
		}
		if !ValidOrigin(route) {
			return nil, urlError("route %q is not a serialized HTTPS origin", truncate(route, 100))
		}
		if slices.Contains(u.Routes, route) {
			return nil, urlError("duplicate route %q", truncate(route, 100))
		}
		u.Routes = append(u.Routes, route)
	}
	return u, nil
}

// String formats the URL without checking it; use Format for a checked
// result.
func (u *AgentURL) String() string {
	var b strings.Builder
	b.WriteString(u.AgentID)
	if u.Protocol != "" || u.Resource != "" {
		b.WriteString("/" + u.Protocol + "/" + u.Resource)
	}
	for i, r := range u.Routes {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString("route=" + r)
	}
	return b.String()
}

// Format returns the Agent URL's text after the checks the SDK's
// format_agent_url makes: a valid Agent ID, protocol and resource together
// and well formed, at most eight unique routes that are serialized HTTPS
// origins. What it returns parses back to u (ParseAgentURL).
func (u *AgentURL) Format() (string, error) {
	if _, err := ParseAgentID(u.AgentID); err != nil {
		return "", &Error{Code: CodeInvalidURL, Message: "invalid Agent URL: " + err.Error(), Err: err}
	}
	if (u.Protocol != "" || u.Resource != "") && !validURLPath(u.Protocol, u.Resource) {
		return "", urlError("the path must be /<protocol>/<resource>")
	}
	if len(u.Routes) > AgentURLMaxRoutes {
		return "", urlError("at most %d routes", AgentURLMaxRoutes)
	}
	for i, r := range u.Routes {
		if !ValidOrigin(r) {
			return "", urlError("route %q is not a serialized HTTPS origin", truncate(r, 100))
		}
		if slices.Contains(u.Routes[:i], r) {
			return "", urlError("duplicate route %q", truncate(r, 100))
		}
	}
	return u.String(), nil
}

// validURLPath reports whether protocol is one or more lowercase ASCII
// letters and resource one or more base64url letters.
func validURLPath(protocol, resource string) bool {
	if protocol == "" || resource == "" {
		return false
	}
	for i := 0; i < len(protocol); i++ {
		if c := protocol[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	for i := 0; i < len(resource); i++ {
		c := resource[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func urlError(format string, args ...any) *Error {
	return NewError(CodeInvalidURL, "", "invalid Agent URL: "+format, args...)
}
