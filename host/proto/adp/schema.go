package adp

import (
	"container/list"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/identity"
	"apconnect/host/schemaerr"
	"apconnect/host/text"
)

// SchemaCache compiles type schemas (under the type schema profile) once and
// keeps the compiled validators by schema digest, least recently used first
// out. It is safe for concurrent use. Compiled schemas live here and never in
// room state, which stays plain data.
type SchemaCache struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element
	lru     *list.List
}

type schemaEntry struct {
	digest string
	sch    *jsonschema.Schema
}

// DefaultSchemaCacheSize is the capacity of the package's default cache.
const DefaultSchemaCacheSize = 1024

// defaultSchemaCache serves Rules without their own cache.
var defaultSchemaCache = NewSchemaCache(DefaultSchemaCacheSize)

// NewSchemaCache returns a cache holding at most max compiled schemas
// (DefaultSchemaCacheSize when max <= 0).
func NewSchemaCache(max int) *SchemaCache {
	if max <= 0 {
		max = DefaultSchemaCacheSize
	}
	return &SchemaCache{max: max, entries: map[string]*list.Element{}, lru: list.New()}
}

// Len returns the number of cached schemas.
func (c *SchemaCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// SchemaDigest returns the cache key of a schema:
// "sha256:" + base64url(SHA-256(JCS(schema))).
func SchemaDigest(schema any) (string, error) {
	b, err := identity.Canonicalize(schema)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + identity.EncodeBase64URL(sum[:]), nil
}

// compile returns the compiled schema for a type schema, compiling it under
// the profile's regular expression engine and a loader that loads nothing.
// It does not run the profile walk; CheckTypeSchema does.
func (c *SchemaCache) compile(schema map[string]any) (*jsonschema.Schema, error) {
	digest, err := SchemaDigest(schema)
	if err != nil {
		return nil, newError(CodeInvalidTypeSchema, "", "cannot canonicalize the schema: %v", err)
	}
	c.mu.Lock()
	if el, ok := c.entries[digest]; ok {
		c.lru.MoveToFront(el)
		sch := el.Value.(*schemaEntry).sch
		c.mu.Unlock()
		return sch, nil
	}
	c.mu.Unlock()

	sch, err := compileTypeSchema(digest, schema)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[digest]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*schemaEntry).sch, nil
	}
	c.entries[digest] = c.lru.PushFront(&schemaEntry{digest: digest, sch: sch})
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.entries, last.Value.(*schemaEntry).digest)
	}
	return sch, nil
}

// ValidatePayload validates a payload against a type schema (12.6 step 4).
// A failure is payload_schema_violation with data {"errors": [{path,
// keyword, message}]}, each path an RFC 6901 pointer into the payload,
// sorted. format, contentEncoding, contentMediaType and contentSchema are
// annotations only (12.3.1 rule 3).
func (c *SchemaCache) ValidatePayload(schema map[string]any, payload any) error {
	sch, err := c.compile(schema)
	if err != nil {
		return err
	}
	if err := sch.Validate(payload); err != nil {
		list := validationFieldErrors(err)
		e := newError(CodePayloadSchemaViolation, "/event/payload", "payload does not satisfy the type's schema (%d violation(s))", len(list))
		e.Data = fieldErrorData(list)
		return e
	}
	return nil
}

// denyLoader refuses every URL: type schemas are self-contained (12.3.1),
// and the kernel schema is registered from memory. Draft metaschemas come
// from the library's embedded copies and never reach a loader.
type denyLoader struct{}

// Load refuses url.
func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas are self-contained; %q is not loaded", text.Truncate(url, 120))
}

// profileRegexp is the regular expression engine of type schemas: a pattern
// must pass CheckPattern and is then matched by RE2 with search semantics.
func profileRegexp(s string) (jsonschema.Regexp, error) {
	return compilePortable(s)
}

// kernelRegexp compiles the kernel schema's own patterns, which are written
// for ECMA-262: its \uXXXX escapes (nonBlankString) become RE2's \x{XXXX}.
// Type schemas never use this engine; their patterns pass CheckPattern.
func kernelRegexp(s string) (jsonschema.Regexp, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) && isHex4(s[i+2:i+6]) {
			b.WriteString(`\x{` + s[i+2:i+6] + `}`)
			i += 5
			continue
		}
		b.WriteByte(c)
		b.WriteByte(s[i+1])
		i++
	}
	return regexp.Compile(b.String())
}

// isHex4 reports whether s is four hexadecimal digits.
func isHex4(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return len(s) == 4
}

// compileTypeSchema compiles one type schema from memory.
func compileTypeSchema(digest string, schema map[string]any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	c.UseRegexpEngine(profileRegexp)
	url := "mem://adp/type-schema/" + strings.ReplaceAll(digest, ":", "-") + ".json"
	if err := c.AddResource(url, cloneJSON(schema)); err != nil {
		return nil, compileError(err, url)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, compileError(err, url)
	}
	return sch, nil
}

// compileError converts a compile failure into invalid_type_schema, with the
// metaschema violations as field errors when there are any. url is the
// in-memory location of the schema, left out of messages.
func compileError(err error, url string) *Error {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		list := validationFieldErrors(sve.Err)
		msg := "schema is not valid JSON Schema draft 2020-12"
		if len(list) > 0 {
			at := list[0].Path
			if at == "" {
				at = "/"
			}
			msg += fmt.Sprintf(" (at %s: %s)", at, list[0].Message)
		}
		e := newError(CodeInvalidTypeSchema, "", "%s", msg)
		e.Err = err
		if len(list) > 0 {
			e.Data = fieldErrorData(list)
		}
		return e
	}
	text := strings.ReplaceAll(err.Error(), url+"#", "the schema at ")
	text = strings.ReplaceAll(text, url, "the schema")
	e := newError(CodeInvalidTypeSchema, "", "schema does not compile: %s", firstLine(text))
	e.Err = err
	return e
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return text.Truncate(s, 300)
}

// validationFieldErrors flattens a validation error tree into its leaves,
// sorted (schemaerr.Leaves).
func validationFieldErrors(err error) []FieldError {
	leaves := schemaerr.Leaves(err)
	out := make([]FieldError, len(leaves))
	for i, l := range leaves {
		out[i] = FieldError{Path: l.Pointer, Keyword: l.Keyword, Message: l.Message}
	}
	return out
}
