package adp

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"apconnect/host/text"
)

// Draft202012 is the only $schema value the type schema profile admits.
const Draft202012 = "https://json-schema.org/draft/2020-12/schema"

// bannedKeywords may not appear in a type schema (12.3.1 rule 1).
var bannedKeywords = []string{"$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary"}

// Subschema locations, a superset of what the validator treats as schemas in
// draft 2020-12 (it also walks the older drafts' locations), so no schema
// escapes the profile walk.
var (
	singleSubschemas = []string{
		"additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "contentSchema", "additionalItems",
	}
	arraySubschemas = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	mapSubschemas   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

// CheckTypeSchema enforces the type schema profile (12.3.1 rules 1–2) on a
// type schema, bounds its size (limits.MaxSchemaSize, 0 for none) and
// compiles it as JSON Schema draft 2020-12 (through cache, nil for the
// default cache). Every violation is reported: the error is
// invalid_type_schema with data {"errors": [{path, keyword, message}]}, each
// path an RFC 6901 pointer into the schema, sorted.
//
// Rules: every $ref is a fragment ("#…") that resolves inside the schema;
// $dynamicRef, $dynamicAnchor, $recursiveRef, $recursiveAnchor and
// $vocabulary do not appear; $schema, when present, is draft 2020-12; every
// pattern and patternProperties key passes CheckPattern.
func CheckTypeSchema(schema any, limits Limits, cache *SchemaCache) error {
	obj, ok := schema.(map[string]any)
	if !ok {
		return newError(CodeInvalidTypeSchema, "", "a type schema must be a JSON object")
	}
	var errs []FieldError
	if limits.MaxSchemaSize > 0 {
		n, err := canonicalSize(obj)
		if err != nil {
			return newError(CodeInvalidTypeSchema, "", "cannot canonicalize the schema: %v", err)
		}
		if n > limits.MaxSchemaSize {
			errs = append(errs, FieldError{Keyword: "", Message: fmt.Sprintf("schema is %d bytes serialized; at most %d are allowed", n, limits.MaxSchemaSize)})
		}
	}
	w := &profileWalker{root: obj, visited: map[string]bool{}, anchors: map[string]map[string]string{}}
	w.walk()
	errs = append(errs, w.errs...)
	if len(errs) > 0 {
		errs = sortFieldErrors(errs)
		e := newError(CodeInvalidTypeSchema, "", "schema violates the type schema profile: %s", errs[0].Message)
		e.Data = fieldErrorData(errs)
		return e
	}
	if cache == nil {
		cache = defaultSchemaCache
	}
	if _, err := cache.compile(obj); err != nil {
		return err
	}
	return nil
}

// profileWalker visits every location of a schema that a validator compiles
// as a schema: the subschema keywords, recursively, and the target of every
// $ref.
type profileWalker struct {
	root    map[string]any
	errs    []FieldError
	visited map[string]bool
	// anchors maps a resource root pointer to its $anchor names.
	anchors map[string]map[string]string
	// pending anchor references: resource root and name, for resolution
	// after the walk has seen every $anchor.
	pending []anchorRef
}

type anchorRef struct {
	resource, name, at string
}

func (w *profileWalker) fail(ptr, keyword, format string, args ...any) {
	w.errs = append(w.errs, FieldError{Path: ptr, Keyword: keyword, Message: fmt.Sprintf(format, args...)})
}

func (w *profileWalker) walk() {
	w.schema(w.root, "", "", 0)
	// Anchor references resolve after every anchor is known; resolving one
	// may reach new schemas with new references, so iterate.
	for len(w.pending) > 0 {
		refs := w.pending
		w.pending = nil
		for _, r := range refs {
			target, ok := w.anchors[r.resource][r.name]
			if !ok {
				w.fail(r.at, "$ref", "$ref anchor %q does not resolve inside the schema", text.Truncate(r.name, 80))
				continue
			}
			w.schema(w.lookup(target), target, r.resource, 0)
		}
	}
}

// maxSchemaDepth bounds the walk's recursion.
const maxSchemaDepth = 256

// schema checks the schema at ptr (a pointer from the root); resource is the
// pointer of the innermost enclosing schema resource (one with $id).
func (w *profileWalker) schema(v any, ptr, resource string, depth int) {
	if depth > maxSchemaDepth {
		w.fail(ptr, "", "schema nested deeper than %d", maxSchemaDepth)
		return
	}
	if w.visited[ptr] {
		return
	}
	w.visited[ptr] = true
	obj, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); !isBool {
			w.fail(ptr, "", "a schema must be an object or a boolean")
		}
		return
	}
	if _, ok := obj["$id"]; ok && ptr != "" {
		resource = ptr
	}
	for _, kw := range bannedKeywords {
		if _, ok := obj[kw]; ok {
			w.fail(ptr+"/"+text.EscapePointer(kw), kw, "%s is not allowed by the type schema profile", kw)
		}
	}
	if s, ok := obj["$schema"]; ok && s != Draft202012 {
		w.fail(ptr+"/$schema", "$schema", "$schema must be %q", Draft202012)
	}
	if a, ok := obj["$anchor"].(string); ok {
		if w.anchors[resource] == nil {
			w.anchors[resource] = map[string]string{}
		}
		w.anchors[resource][a] = ptr
	}
	if ref, ok := obj["$ref"]; ok {
		w.ref(ref, ptr+"/$ref", resource, depth)
	}
	if p, ok := obj["pattern"]; ok {
		if s, ok := p.(string); ok {
			if err := CheckPattern(s); err != nil {
				w.fail(ptr+"/pattern", "pattern", "%v", err)
			}
		}
	}
	if pp, ok := obj["patternProperties"].(map[string]any); ok {
		for _, k := range sortedKeys(pp) {
			if err := CheckPattern(k); err != nil {
				w.fail(ptr+"/patternProperties/"+text.EscapePointer(k), "patternProperties", "%v", err)
			}
		}
	}
	for _, kw := range singleSubschemas {
		if sub, ok := obj[kw]; ok {
			if _, isArr := sub.([]any); !isArr {
				w.schema(sub, ptr+"/"+kw, resource, depth+1)
			}
		}
	}
	for _, kw := range arraySubschemas {
		if arr, ok := obj[kw].([]any); ok {
			for i, sub := range arr {
				w.schema(sub, ptr+"/"+kw+"/"+strconv.Itoa(i), resource, depth+1)
			}
		}
	}
	for _, kw := range mapSubschemas {
		if m, ok := obj[kw].(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				sub := m[k]
				if kw == "dependencies" {
					if _, isArr := sub.([]any); isArr {
						continue // a property dependency, not a schema
					}
				}
				w.schema(sub, ptr+"/"+kw+"/"+text.EscapePointer(k), resource, depth+1)
			}
		}
	}
}

// ref checks one $ref: a fragment that resolves inside the schema. A JSON
// pointer fragment is resolved against the enclosing resource and walked; an
// anchor fragment is resolved after the walk.
func (w *profileWalker) ref(v any, at, resource string, depth int) {
	s, ok := v.(string)
	if !ok {
		w.fail(at, "$ref", "$ref must be a string")
		return
	}
	if !strings.HasPrefix(s, "#") {
		w.fail(at, "$ref", "$ref %q is not a fragment: type schemas must be self-contained", text.Truncate(s, 120))
		return
	}
	frag, err := url.PathUnescape(s[1:])
	if err != nil {
		w.fail(at, "$ref", "$ref %q has an invalid percent-encoding", text.Truncate(s, 120))
		return
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		w.pending = append(w.pending, anchorRef{resource: resource, name: frag, at: at})
		return
	}
	target := resource + frag
	v2, ok := w.resolve(frag, resource)
	if !ok {
		w.fail(at, "$ref", "$ref %q does not resolve inside the schema", text.Truncate(s, 120))
		return
	}
	w.schema(v2, target, resource, depth+1)
}

// resolve follows a JSON pointer from the resource root at resource.
func (w *profileWalker) resolve(frag, resource string) (any, bool) {
	cur := w.lookup(resource)
	if cur == nil {
		return nil, false
	}
	if frag == "" {
		return cur, true
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != tok {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// lookup returns the value at a pointer the walker produced itself (always
// resolvable), or nil.
func (w *profileWalker) lookup(ptr string) any {
	var cur any = w.root
	if ptr == "" {
		return cur
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			cur = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			cur = x[i]
		default:
			return nil
		}
	}
	return cur
}

// sortedKeys returns the keys of m in order, for deterministic walks.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
