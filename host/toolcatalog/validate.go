package toolcatalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"apconnect/host/identity"
	"apconnect/host/schemaerr"
	"apconnect/host/text"
)

// ErrCodeInvalidInput is the stable error code of tool arguments that do not
// match the tool's input schema.
const ErrCodeInvalidInput = "invalid_input"

// ErrCodeInvalidOutput is the stable error code of a tool result that does not
// match the tool's output schema: a connector bug, never the agent's fault.
const ErrCodeInvalidOutput = "invalid_output"

type schemaKind string

const (
	schemaInput  schemaKind = "input"
	schemaOutput schemaKind = "output"
)

// Schema is the input or output JSON Schema of one catalog tool, compiled
// on its first use. It is safe for concurrent use.
//
// Compiling is lazy because it is most of the catalog's cost (about 50 ms
// of CPU for the 82 schemas, the draft 2020-12 meta-validation of each
// included) and every `apconnect mcp` start would otherwise pay it before
// answering initialize, while a session calls a handful of tools. The
// catalog's tests compile every schema (compileAll), so a first use cannot
// fail on a shipped catalog.
type Schema struct {
	tool     string
	kind     schemaKind
	props    []string // root input properties, named in unknown-field messages
	compiled func() (*jsonschema.Schema, error)
}

// newSchema is the schema of tool's kind whose bundled document is data.
func newSchema(tool string, kind schemaKind, data []byte, props []string) *Schema {
	return &Schema{tool: tool, kind: kind, props: props,
		compiled: sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(tool, kind, data) })}
}

// Tool returns the name of the tool the schema belongs to.
func (s *Schema) Tool() string { return s.tool }

// IsInput reports whether s is the tool's input schema.
func (s *Schema) IsInput() bool { return s.kind == schemaInput }

// ValidateJSON validates one JSON document against the schema. The document
// is parsed strictly first (I-JSON as Agent Identity 4.1 requires: no
// duplicate member names, integers within ±(2^53-1), valid Unicode), so what
// is validated is exactly what any later decoder sees. For an input schema,
// empty data or JSON null stands for a call without arguments and is
// validated as {}. A failure is a *ValidationError.
func (s *Schema) ValidateJSON(data []byte) error {
	trimmed := bytes.TrimSpace(data)
	if s.kind == schemaInput && (len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))) {
		trimmed = []byte("{}")
	}
	v, err := identity.ParseStrict(trimmed)
	if err != nil {
		ve := &ValidationError{Tool: s.tool, Output: s.kind == schemaOutput}
		var je *identity.JSONError
		if errors.As(err, &je) {
			ve.Issues = []Issue{{Path: je.Pointer, Message: je.Reason}}
		} else {
			ve.Issues = []Issue{{Path: "", Message: err.Error()}}
		}
		return ve
	}
	return s.validateParsed(v)
}

// ValidateValue validates v after marshaling it to JSON; json.RawMessage and
// []byte values are validated as the JSON they hold. Use it for engine
// results before they become structured content.
func (s *Schema) ValidateValue(v any) error {
	switch t := v.(type) {
	case json.RawMessage:
		return s.ValidateJSON(t)
	case []byte:
		return s.ValidateJSON(t)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s %s: marshal: %w", s.tool, s.kind, err)
	}
	return s.ValidateJSON(data)
}

func (s *Schema) validateParsed(v any) error {
	sch, err := s.compiled()
	if err != nil {
		return err // not a *ValidationError: a catalog bug, never the caller's
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return &ValidationError{Tool: s.tool, Output: s.kind == schemaOutput, Issues: []Issue{{Message: err.Error()}}}
	}
	var issues []Issue
	s.collect(verr, &issues)
	slices.SortFunc(issues, func(a, b Issue) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	issues = slices.Compact(issues)
	return &ValidationError{Tool: s.tool, Output: s.kind == schemaOutput, Issues: issues}
}

// collect turns the leaves of a validation error into issues. Missing and
// unknown fields become one issue per field, pointing at the field.
func (s *Schema) collect(e *jsonschema.ValidationError, out *[]Issue) {
	for _, l := range schemaerr.Leaves(e) {
		switch k := l.Kind.(type) {
		case *kind.Required:
			for _, name := range k.Missing {
				*out = append(*out, Issue{Path: l.Pointer + "/" + text.EscapePointer(name), Message: "required field is missing"})
			}
		case *kind.AdditionalProperties:
			msg := "unknown field"
			if l.Pointer == "" && s.kind == schemaInput {
				if len(s.props) == 0 {
					msg = "unknown field; this tool takes no arguments"
				} else {
					msg = "unknown field; allowed fields: " + strings.Join(s.props, ", ")
				}
			}
			for _, name := range k.Properties {
				*out = append(*out, Issue{Path: l.Pointer + "/" + text.EscapePointer(name), Message: msg})
			}
		default:
			*out = append(*out, Issue{Path: l.Pointer, Message: l.Message})
		}
	}
}

// Issue is one reason a document failed validation.
type Issue struct {
	// Path is an RFC 6901 JSON pointer to the offending value inside the
	// document ("" is the whole document, "/limit" the limit field).
	Path string `json:"path"`
	// Message says what is wrong, in English.
	Message string `json:"message"`
}

// ValidationError reports every way a tool's arguments (or result) failed its
// schema, sorted by path.
type ValidationError struct {
	// Tool is the catalog tool name.
	Tool string
	// Output is true when a result, not arguments, failed validation.
	Output bool
	// Issues are the individual failures, sorted by Path then Message.
	Issues []Issue
}

// Error lists the issues on one line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Output {
		fmt.Fprintf(&b, "result of %s does not match its output schema", e.Tool)
	} else {
		fmt.Fprintf(&b, "invalid arguments for %s", e.Tool)
	}
	for i, is := range e.Issues {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		p := is.Path
		if p == "" {
			p = "(arguments)"
			if e.Output {
				p = "(result)"
			}
		}
		b.WriteString(p)
		b.WriteString(": ")
		b.WriteString(is.Message)
	}
	return b.String()
}

// Code is the stable error code: ErrCodeInvalidInput for arguments,
// ErrCodeInvalidOutput for results.
func (e *ValidationError) Code() string {
	if e.Output {
		return ErrCodeInvalidOutput
	}
	return ErrCodeInvalidInput
}

// Data is the machine-readable error data: the tool and the issues.
func (e *ValidationError) Data() map[string]any {
	issues := e.Issues
	if issues == nil {
		issues = []Issue{}
	}
	return map[string]any{"tool": e.Tool, "issues": issues}
}
