package knowledge

import (
	"bytes"
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"apconnect/host/schemaerr"
)

// schemaJSON is the SDK's bundled knowledge.schema.json, verbatim (see
// schema/SOURCE.md).
//
//go:embed schema/knowledge.schema.json
var schemaJSON []byte

// schemaURL is where the compiler holds the schema; it is its own $id, so
// nothing is ever fetched.
const schemaURL = "https://agent-protocols.dev/schemas/agent-knowledge/1.0.schema.json"

// SchemaJSON returns a copy of the bundled schema, byte for byte the SDK's.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

// FieldError is one schema failure: an RFC 6901 pointer into the validated
// value ("" for the value itself) and what failed there.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// compiled holds the schema's definitions, compiled on first use.
var compiled struct {
	once sync.Once
	defs map[string]*jsonschema.Schema
	err  error
}

// definitions compiles every $defs entry once. A failure is a build defect
// (the schema is embedded), reported to every caller.
func definitions() (map[string]*jsonschema.Schema, error) {
	compiled.once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			compiled.err = fmt.Errorf("knowledge: bundled schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseRegexpEngine(ecmaRegexp)
		c.UseLoader(noLoader{})
		if err := c.AddResource(schemaURL, doc); err != nil {
			compiled.err = fmt.Errorf("knowledge: bundled schema: %w", err)
			return
		}
		defs := doc.(map[string]any)["$defs"].(map[string]any)
		compiled.defs = make(map[string]*jsonschema.Schema, len(defs))
		for name := range defs {
			sch, err := c.Compile(schemaURL + "#/$defs/" + name)
			if err != nil {
				compiled.err = fmt.Errorf("knowledge: bundled schema, $defs/%s: %w", name, err)
				return
			}
			compiled.defs[name] = sch
		}
	})
	return compiled.defs, compiled.err
}

// SchemaDefinitions returns the names of the schema's $defs, sorted.
func SchemaDefinitions() []string {
	defs, err := definitions()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ValidateSchema checks v, a value in the shapes identity.ParseStrict
// produces, against one of the schema's $defs ("signedEnvelope",
// "queryRequest", …), as the SDK's validate_knowledge_schema does: structure
// only, with "format" an annotation. A failure is invalid_event at the first
// failing pointer, with up to MaxPayloadErrors {path, message} in
// data.errors; callers that validate requests or responses recode it.
func ValidateSchema(v any, definition string) error {
	list, err := SchemaErrors(v, definition)
	if err != nil {
		return errorf(CodeInvalidEvent, "", "%v", err)
	}
	if len(list) == 0 {
		return nil
	}
	return fieldErrorsError(CodeInvalidEvent, "", definition+" schema violation", list)
}

// SchemaErrors returns every leaf failure of v against $defs/definition,
// sorted by path; nil when v conforms. The error is for an unknown
// definition.
func SchemaErrors(v any, definition string) ([]FieldError, error) {
	defs, err := definitions()
	if err != nil {
		return nil, err
	}
	sch, ok := defs[definition]
	if !ok {
		return nil, fmt.Errorf("unknown schema definition %q", definition)
	}
	verr := sch.Validate(v)
	if verr == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return []FieldError{{Message: verr.Error()}}, nil
	}
	var out []FieldError
	collectFailures(ve, &out)
	slices.SortFunc(out, func(a, b FieldError) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Message, b.Message))
	})
	return slices.Compact(out), nil
}

// collectFailures flattens a validation error into the failures a JSON
// Schema validator reports one by one: the leaves, except that a failed
// contains, anyOf or oneOf is one failure at its own value (which of its
// branches or items failed how is no failure of the value's members).
func collectFailures(e *jsonschema.ValidationError, out *[]FieldError) {
	switch e.ErrorKind.(type) {
	case *kind.Contains, *kind.AnyOf, *kind.OneOf:
		*out = append(*out, FieldError{Path: schemaerr.Pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(messagePrinter)})
		return
	}
	if len(e.Causes) == 0 {
		*out = append(*out, FieldError{Path: schemaerr.Pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(messagePrinter)})
		return
	}
	for _, c := range e.Causes {
		collectFailures(c, out)
	}
}

// messagePrinter renders schema messages in English, so they are stable.
var messagePrinter = message.NewPrinter(language.English)

// fieldErrorsError is an error of code whose pointer is prefix plus the
// first failure's path, listing up to MaxPayloadErrors failures (paths
// relative to the validated value) in data.errors.
func fieldErrorsError(code, prefix, what string, list []FieldError) error {
	if len(list) > MaxPayloadErrors {
		list = list[:MaxPayloadErrors]
	}
	parts := make([]string, len(list))
	data := make([]any, len(list))
	for i, fe := range list {
		parts[i] = fe.Message
		if fe.Path != "" {
			parts[i] = fe.Path + ": " + fe.Message
		}
		data[i] = map[string]any{"path": fe.Path, "message": fe.Message}
	}
	e := errorf(code, prefix+list[0].Path, "%s: %s", what, strings.Join(parts, "; "))
	e.Data = map[string]any{"errors": data}
	return e
}

// noLoader refuses every URL: the schema is self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the Knowledge schema is self-contained; %q is not loaded", url)
}

// ecmaSpace is ECMA-262's \s (WhiteSpace and LineTerminator) as the
// contents of an RE2 character class.
const ecmaSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// ecmaRegexp compiles one of the schema's ECMA-262 patterns with RE2. It
// rewrites what RE2 reads differently: the end anchor $(?![\s\S]) (a
// lookahead RE2 lacks) becomes \z, \s becomes ECMA's Unicode white space,
// "." stops at every ECMA line terminator, and \uXXXX becomes \x{XXXX}.
func ecmaRegexp(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(translateECMA(pattern))
	if err != nil {
		return nil, err
	}
	return ecmaPattern{re, pattern}, nil
}

// ecmaPattern matches with RE2 and names itself by the schema's own
// pattern, so messages quote what the schema says.
type ecmaPattern struct {
	*regexp.Regexp
	source string
}

func (p ecmaPattern) String() string { return p.source }

// translateECMA rewrites an ECMA-262 pattern of the schema for RE2 (see
// ecmaRegexp).
func translateECMA(p string) string {
	p = strings.ReplaceAll(p, `$(?![\s\S])`, `\z`)
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			next := p[i+1]
			switch {
			case next == 's' && inClass:
				b.WriteString(ecmaSpace)
			case next == 's':
				b.WriteString("[" + ecmaSpace + "]")
			case next == 'u' && i+6 <= len(p) && isHex(p[i+2:i+6]):
				b.WriteString(`\x{` + p[i+2:i+6] + `}`)
				i += 4
			default:
				b.WriteByte(c)
				b.WriteByte(next)
			}
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		case c == '.' && !inClass:
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isHex reports whether s is all hexadecimal digits.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}
