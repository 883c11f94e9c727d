package profile

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/schemas"
)

// schemaJSON is the Agent Profile 1.0 JSON Schema, verbatim as the
// reference SDK 0.12.6 ships it (its catalog's schemas → agent-profile/1.0).
// Its one copy is schemas/protocols/agent-profile-1.0.schema.json, which
// the tool layer serves too.
var schemaJSON = func() []byte {
	b, err := schemas.ProtocolSchema(Protocol)
	if err != nil {
		panic("profile: the Agent Profile schema is not embedded: " + err.Error())
	}
	return b
}()

// SchemaJSON returns a copy of the Agent Profile 1.0 JSON Schema.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

// SchemaID is the $id of the schema.
const SchemaID = "https://agent-protocols.dev/schemas/agent-profile/1.0.schema.json"

// Schema compiles the definition named def (for example
// "profileUpdatePayload" or "profileDocument") of the Agent Profile schema,
// under draft 2020-12 with format assertions on.
func Schema(def string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, err
	}
	return c.Compile(SchemaID + "#/$defs/" + def)
}

// SchemaViolation is one leaf failure of a schema validation.
type SchemaViolation struct {
	// Pointer is the JSON pointer of the offending value.
	Pointer string `json:"pointer"`
	// Keyword is the schema keyword location that failed.
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

// violations flattens a validation error into its leaf failures, sorted by
// instance and keyword location (the library's order is not stable). Unlike
// the host's flattener (schemaerr) it keeps the full keyword location
// ("/properties/name/maxLength"): that string is part of the hub's wire
// error body, which profile clients already read.
func violations(err error) []SchemaViolation {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []SchemaViolation{{Message: err.Error()}}
	}
	var out []SchemaViolation
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil || strings.HasSuffix(u.KeywordLocation, "/$ref") {
			continue
		}
		out = append(out, SchemaViolation{Pointer: u.InstanceLocation, Keyword: u.KeywordLocation, Message: u.Error.String()})
	}
	if len(out) == 0 {
		out = append(out, SchemaViolation{Message: fmt.Sprint(ve)})
	}
	slices.SortFunc(out, func(a, b SchemaViolation) int {
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.Keyword, b.Keyword)
	})
	return out
}
