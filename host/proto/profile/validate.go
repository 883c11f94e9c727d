package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// maxViolations bounds the schema violations an error carries as data.
const maxViolations = 16

// CheckEvent refuses an event of another protocol or type than
// profile.update (invalid_event at /event/protocol or /event/type): what a
// profile service's write endpoint could never have accepted.
func CheckEvent(ev *identity.Event) error {
	if ev.Protocol != Protocol {
		return newError(CodeInvalidEvent, "/event/protocol", "event.protocol must be %q, got %q", Protocol, text.Truncate(ev.Protocol, 80))
	}
	if ev.Type != TypeUpdate {
		return newError(CodeInvalidEvent, "/event/type", "event.type must be %q, got %q", TypeUpdate, text.Truncate(ev.Type, 80))
	}
	// Agent Profile defines no top-level field beyond the six.
	return ev.CheckFields("/event")
}

// Validator checks profile.update payloads. It is safe for concurrent use.
type Validator struct {
	schema *jsonschema.Schema
	limits Limits
}

// NewValidator compiles the payload schema; limits' zero fields take the
// defaults.
func NewValidator(limits Limits) (*Validator, error) {
	s, err := Schema("profileUpdatePayload")
	if err != nil {
		return nil, fmt.Errorf("compile profile payload schema: %w", err)
	}
	return &Validator{schema: s, limits: limits.WithDefaults()}, nil
}

// Limits returns the limits the validator enforces.
func (v *Validator) Limits() Limits { return v.limits }

// Validate applies every payload rule to a strictly parsed payload signed by
// actor, in this order: the closed top level, the JSON Schema (0.12.6), the
// URL fields that must name a host, payload.id == actor, uniqueness of
// links and service endpoints (all invalid_event except the actor
// mismatch, which is invalid_actor), then the limits (payload_too_large,
// with the limit as data.limit). A schema failure carries up to 16
// []SchemaViolation as data.violations.
func (v *Validator) Validate(payload any, actor string) error {
	if obj, ok := payload.(map[string]any); ok {
		if err := closedTopLevel(obj); err != nil {
			return err
		}
	}
	if err := v.schema.Validate(payload); err != nil {
		vs := violations(err)
		first := vs[0]
		return withData(newError(CodeInvalidEvent, "/event/payload"+first.Pointer, "payload%s: %s", first.Pointer, first.Message),
			"violations", vs[:min(len(vs), maxViolations)])
	}
	obj := payload.(map[string]any) // the schema requires an object
	if err := checkURLHosts(obj); err != nil {
		return err
	}
	if id := obj["id"].(string); id != actor {
		return newError(CodeInvalidActor, "/event/payload/id", "payload.id %s is not the actor %s (a profile update must be signed by the profile's own Agent ID)", id, actor)
	}
	if err := unique(obj, "links", "url", "rel"); err != nil {
		return err
	}
	if err := unique(obj, "service_endpoints", "type", "url"); err != nil {
		return err
	}
	return v.checkLimits(obj)
}

// ValidateEvent is CheckEvent followed by Validate of the event's payload
// and actor.
func (v *Validator) ValidateEvent(ev *identity.Event) error {
	if err := CheckEvent(ev); err != nil {
		return err
	}
	return v.Validate(ev.Payload, ev.Actor)
}

// closedTopLevel refuses a member outside the payload fields. The 0.12.6
// schema closes the payload too; this check runs first so that the error
// names the member: extensions belong in extra.
func closedTopLevel(obj map[string]any) error {
	for k := range obj {
		if !IsPayloadField(k) {
			msg := "unknown top-level payload field %q; extensions belong in extra"
			if k == FieldUpdatedAt || k == FieldEventID {
				msg = "payload must not carry the service-derived field %q"
			}
			return newError(CodeInvalidEvent, "/event/payload/"+text.EscapePointer(k), msg, text.Truncate(k, 80))
		}
	}
	return nil
}

// checkURLHosts applies the URL rule SDK 0.12.6 adds to the schema's
// pattern and "uri" format (D-25): avatar_url, every service endpoint url
// and every delegation hint's principal.id must be https URLs with a host,
// and every link url an http or https URL with a host. "https://" matches
// the pattern and is a URI, but names no host.
func checkURLHosts(obj map[string]any) error {
	check := func(v any, ptr, field string, schemes ...string) error {
		s, _ := v.(string) // the schema made every one a string
		if urlHasHost(s, schemes...) {
			return nil
		}
		return newError(CodeInvalidEvent, "/event/payload"+ptr, "%s must be an %s URL with a host", field, strings.Join(schemes, " or "))
	}
	if v, ok := obj["avatar_url"]; ok {
		if err := check(v, "/avatar_url", "avatar_url", "https"); err != nil {
			return err
		}
	}
	items := func(field string) []map[string]any {
		arr, _ := obj[field].([]any)
		out := make([]map[string]any, len(arr))
		for i, it := range arr {
			out[i], _ = it.(map[string]any) // the schema requires objects
		}
		return out
	}
	for i, ep := range items("service_endpoints") {
		if err := check(ep["url"], fmt.Sprintf("/service_endpoints/%d/url", i), "service endpoint url", "https"); err != nil {
			return err
		}
	}
	for i, l := range items("links") {
		if err := check(l["url"], fmt.Sprintf("/links/%d/url", i), "link url", "http", "https"); err != nil {
			return err
		}
	}
	for i, d := range items("delegations") {
		p, _ := d["principal"].(map[string]any)
		if err := check(p["id"], fmt.Sprintf("/delegations/%d/principal/id", i), "delegation principal id", "https"); err != nil {
			return err
		}
	}
	return nil
}

// urlHasHost reports whether s is scheme://… with one of the schemes and a
// non-empty host, read the way a WHATWG URL parser reads special schemes:
// any run of slashes (and backslashes) after "scheme:" starts the
// authority, which ends at the next /, \, ? or #; user info ends at its
// last @; a port follows the last colon outside brackets. The schema has
// already required a syntactically valid URI.
func urlHasHost(s string, schemes ...string) bool {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || !slices.Contains(schemes, strings.ToLower(scheme)) {
		return false
	}
	rest = strings.TrimLeft(rest, "/\\")
	if i := strings.IndexAny(rest, "/\\?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.Contains(rest[i:], "]") {
		rest = rest[:i]
	}
	return rest != "" && rest != "[]"
}

// unique rejects two items of the array field that agree on both keys.
func unique(obj map[string]any, field, k1, k2 string) error {
	arr, _ := obj[field].([]any)
	seen := make(map[[2]string]int, len(arr))
	for i, it := range arr {
		m := it.(map[string]any) // the schema requires objects with both keys as strings
		key := [2]string{m[k1].(string), m[k2].(string)}
		if j, dup := seen[key]; dup {
			return newError(CodeInvalidEvent, "/event/payload/"+field+"/"+strconv.Itoa(i),
				"%s[%d] repeats %s[%d]: items must be unique by (%s, %s)", field, i, field, j, k1, k2)
		}
		seen[key] = i
	}
	return nil
}

func (v *Validator) checkLimits(obj map[string]any) error {
	l := v.limits
	over := func(field string, got, limit int, unit string) error {
		return withData(newError(CodePayloadTooLarge, "/event/payload/"+field, "%s has %d %s; the limit is %d", field, got, unit, limit),
			"limit", limit)
	}
	if n := utf8.RuneCountInString(obj["name"].(string)); n > l.NameChars {
		return over("name", n, l.NameChars, "characters")
	}
	if s, ok := obj["description"].(string); ok {
		if n := utf8.RuneCountInString(s); n > l.DescriptionChars {
			return over("description", n, l.DescriptionChars, "characters")
		}
	}
	for _, c := range []struct {
		field string
		limit int
	}{{"capabilities", l.Capabilities}, {"service_endpoints", l.ServiceEndpoints}, {"links", l.Links}, {"delegations", l.Delegations}} {
		if arr, ok := obj[c.field].([]any); ok && len(arr) > c.limit {
			return over(c.field, len(arr), c.limit, "entries")
		}
	}
	if extra, ok := obj["extra"]; ok {
		b, err := identity.Canonicalize(extra)
		if err != nil {
			return newError(CodeInvalidEvent, "/event/payload/extra", "extra cannot be canonicalized: %v", err)
		}
		if len(b) > l.ExtraBytes {
			return over("extra", len(b), l.ExtraBytes, "bytes of serialized JSON")
		}
	}
	return nil
}
