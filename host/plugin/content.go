package plugin

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"apconnect/host/text"
)

// The content policy: what no plugin output may carry, whatever its schema
// allows. Plugin output reaches the agent (tool results, inbox summaries,
// validation messages), MCP clients (tool definitions) and signed room events
// (proposals, pack definitions), so the host refuses
//
//   - MCP Apps and UI: ui:// URIs and _meta members anywhere;
//   - active content: HTML tags that run or load things, javascript: and
//     similar URLs;
//   - anything shaped like a credential: JWTs, PEM private keys, bearer
//     tokens, apconnect key files, 64-byte Ed25519 keys, JWK private keys and
//     non-empty strings under credential-like member names.
//
// Resources and embedded resources cannot occur: the output schemas allow
// text content only.

var (
	jwtPattern    = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	pemPattern    = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)
	bearerPattern = regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})`)
	key64Pattern  = regexp.MustCompile(`^(?:[A-Za-z0-9_-]{86}|[A-Za-z0-9+/]{86}==|[0-9a-fA-F]{128})$`)
)

// activeTags are HTML elements that execute, embed or load content.
var activeTags = map[string]bool{
	"script": true, "iframe": true, "frame": true, "frameset": true, "object": true,
	"embed": true, "applet": true, "html": true, "body": true, "head": true,
	"form": true, "meta": true, "link": true, "style": true, "svg": true,
	"img": true, "video": true, "audio": true, "base": true, "math": true,
	"!doctype": true,
}

var activeSchemes = []string{"javascript:", "vbscript:", "data:text/html", "data:image/svg", "ui://"}

// credentialNames are member names (lowercase, without '_' and '-') whose
// non-empty string values are taken for secrets.
var credentialNames = map[string]bool{
	"seed": true, "privatekey": true, "privkey": true, "secretkey": true, "secret": true,
	"clientsecret": true, "password": true, "passwd": true, "passphrase": true,
	"apikey": true, "accesstoken": true, "refreshtoken": true, "idtoken": true,
	"token": true, "sessiontoken": true, "bearer": true, "authorization": true,
	"jwt": true, "credential": true, "credentials": true, "signingkey": true,
}

// contentRefusal says where plugin output broke the content policy.
type contentRefusal struct {
	pointer string
	reason  string
}

// Error says where and why.
func (c *contentRefusal) Error() string {
	p := c.pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("refused content at %s: %s", p, c.reason)
}

// checkContent walks a strictly parsed value and returns the first policy
// violation in document order (object members sorted by name).
func checkContent(v any) error {
	return walkContent(v, "")
}

func walkContent(v any, ptr string) error {
	switch x := v.(type) {
	case string:
		if r := stringRefusal(x); r != "" {
			return &contentRefusal{pointer: ptr, reason: r}
		}
	case []any:
		for i, e := range x {
			if err := walkContent(e, fmt.Sprintf("%s/%d", ptr, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		if _, ok := x["kty"]; ok {
			if d, ok := x["d"].(string); ok && d != "" {
				return &contentRefusal{pointer: ptr, reason: "a JWK private key"}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child := ptr + "/" + text.EscapePointer(k)
			if k == "_meta" {
				return &contentRefusal{pointer: child, reason: "MCP _meta is not allowed in plugin output"}
			}
			if s, ok := x[k].(string); ok && s != "" && credentialNames[normalizeName(k)] {
				return &contentRefusal{pointer: child, reason: fmt.Sprintf("a value under %q looks like a credential", k)}
			}
			if r := stringRefusal(k); r != "" {
				return &contentRefusal{pointer: child, reason: "member name: " + r}
			}
			if err := walkContent(x[k], child); err != nil {
				return err
			}
		}
	}
	return nil
}

// stringRefusal returns why s may not appear in plugin output, or "".
// Cheap substring tests guard every regular expression, so that ordinary
// strings cost a few scans.
func stringRefusal(s string) string {
	if len(s) < 5 {
		return ""
	}
	lower := strings.ToLower(s)
	for _, scheme := range activeSchemes {
		if strings.Contains(lower, scheme) {
			if scheme == "ui://" {
				return "a ui:// resource URI (MCP Apps UI is not allowed)"
			}
			return fmt.Sprintf("active content (%s URL)", strings.TrimSuffix(scheme, ":"))
		}
	}
	if strings.IndexByte(lower, '<') >= 0 {
		if tag := activeTag(lower); tag != "" {
			return fmt.Sprintf("active HTML content (<%s>)", tag)
		}
	}
	if strings.Contains(s, "eyJ") && jwtPattern.MatchString(s) {
		return "a string shaped like a JWT"
	}
	if strings.Contains(s, "-----BEGIN") && pemPattern.MatchString(s) {
		return "a PEM private key"
	}
	if strings.Contains(lower, "apconnect-ed25519-key") {
		return "apconnect key file material"
	}
	if strings.Contains(lower, "bearer") {
		if m := bearerPattern.FindStringSubmatch(s); m != nil && strings.ContainsAny(m[1], "0123456789") {
			return "a bearer token"
		}
	}
	if (len(s) == 86 || len(s) == 88 || len(s) == 128) && key64Pattern.MatchString(s) {
		return "a string shaped like a 64-byte Ed25519 private key"
	}
	return ""
}

// activeTag returns the first active HTML tag name in lower, or "".
func activeTag(lower string) string {
	for i := 0; i < len(lower); i++ {
		if lower[i] != '<' {
			continue
		}
		j := i + 1
		if j < len(lower) && lower[j] == '/' {
			j++
		}
		k := j
		for k < len(lower) && (lower[k] == '!' || (lower[k] >= 'a' && lower[k] <= 'z') || (lower[k] >= '0' && lower[k] <= '9')) {
			k++
		}
		if k == j {
			continue
		}
		if k < len(lower) {
			c := lower[k]
			if c != ' ' && c != '>' && c != '/' && c != '\t' && c != '\n' && c != '\r' {
				continue
			}
		}
		if name := lower[j:k]; activeTags[name] {
			return name
		}
	}
	return ""
}

// normalizeName lowercases k and drops '_' and '-' ("Client-Secret" ->
// "clientsecret"). Names longer than any credential name are not worth it.
func normalizeName(k string) string {
	if len(k) > 24 {
		return ""
	}
	b := make([]byte, 0, len(k))
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
