package profile

import (
	"apconnect/host/text"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/hub/hubhttp"
	"apconnect/host/identity"
)

// payloadFields is the closed set of top-level payload members (section 4.1
// minus the service-derived updated_at and event_id). The 0.12.6 schema
// closes the payload too; this check runs first so that the error names the
// member: extensions belong in extra.
var payloadFields = map[string]bool{
	"id": true, "name": true, "description": true, "avatar_url": true, "provider": true,
	"capabilities": true, "service_endpoints": true, "links": true, "delegations": true, "extra": true,
}

// Validator checks profile.update payloads.
type Validator struct {
	schema *jsonschema.Schema
	limits Limits
}

// NewValidator compiles the payload schema.
func NewValidator(limits Limits) (*Validator, error) {
	s, err := Schema("profileUpdatePayload")
	if err != nil {
		return nil, fmt.Errorf("compile profile payload schema: %w", err)
	}
	return &Validator{schema: s, limits: limits.withDefaults()}, nil
}

// Validate applies every payload rule to a strictly parsed payload signed by
// actor, in this order: the closed top level, the JSON Schema (0.12.6), the
// URL fields that must name a host, payload.id == actor, uniqueness of
// links and service endpoints (all invalid_event except the actor
// mismatch, which is invalid_actor), then the service limits
// (payload_too_large).
func (v *Validator) Validate(payload any, actor string) error {
	if obj, ok := payload.(map[string]any); ok {
		if err := closedTopLevel(obj); err != nil {
			return err
		}
	}
	if err := v.schema.Validate(payload); err != nil {
		vs := violations(err)
		first := vs[0]
		return hubhttp.Errorf(identity.CodeInvalidEvent, "payload%s: %s", first.Pointer, first.Message).
			WithData("pointer", "/event/payload"+first.Pointer).
			WithData("violations", vs[:min(len(vs), 16)])
	}
	obj := payload.(map[string]any) // the schema requires an object
	if err := checkURLHosts(obj); err != nil {
		return err
	}
	if id := obj["id"].(string); id != actor {
		return hubhttp.Errorf(identity.CodeInvalidActor, "payload.id %s is not the actor %s (a profile update must be signed by the profile's own Agent ID)", id, actor).
			WithData("pointer", "/event/payload/id")
	}
	if err := unique(obj, "links", "url", "rel"); err != nil {
		return err
	}
	if err := unique(obj, "service_endpoints", "type", "url"); err != nil {
		return err
	}
	return v.checkLimits(obj)
}

// closedTopLevel refuses a member outside payloadFields.
func closedTopLevel(obj map[string]any) error {
	for k := range obj {
		if !payloadFields[k] {
			msg := "unknown top-level payload field %q; extensions belong in extra"
			if k == "updated_at" || k == "event_id" {
				msg = "payload must not carry the service-derived field %q"
			}
			return hubhttp.Errorf(identity.CodeInvalidEvent, msg, text.Truncate(k, 80)).
				WithData("pointer", "/event/payload/"+text.EscapePointer(k))
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
		return hubhttp.Errorf(identity.CodeInvalidEvent, "%s must be an %s URL with a host", field, strings.Join(schemes, " or ")).
			WithData("pointer", "/event/payload"+ptr)
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
			return hubhttp.Errorf(identity.CodeInvalidEvent, "%s[%d] repeats %s[%d]: items must be unique by (%s, %s)", field, i, field, j, k1, k2).
				WithData("pointer", "/event/payload/"+field+"/"+strconv.Itoa(i))
		}
		seen[key] = i
	}
	return nil
}

func (v *Validator) checkLimits(obj map[string]any) error {
	l := v.limits
	over := func(field string, got, limit int, unit string) error {
		return hubhttp.Errorf(identity.CodePayloadTooLarge, "%s has %d %s; the limit is %d", field, got, unit, limit).
			WithData("pointer", "/event/payload/"+field).WithData("limit", limit)
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
			return hubhttp.Errorf(identity.CodeInvalidEvent, "extra cannot be canonicalized: %v", err).WithData("pointer", "/event/payload/extra")
		}
		if len(b) > l.ExtraBytes {
			return over("extra", len(b), l.ExtraBytes, "bytes of serialized JSON")
		}
	}
	return nil
}
