package plugin

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/text"
)

// maxSchemaBytes caps a plugin-supplied schema (ADP 20 recommends 16 KiB for
// type schemas; tool schemas get the same bound).
const maxSchemaBytes = 16 << 10

// schemaRules selects the checks of checkUserSchema.
type schemaRules struct {
	rootObject    bool // the root must say "type": "object"
	noCombinators bool // no oneOf, anyOf, allOf (tool input schemas)
}

// Keywords whose value maps names to subschemas (not keywords themselves).
var schemaMapKeywords = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true,
	"definitions": true, "dependentSchemas": true,
}

// Keywords whose value is not a schema, so that their contents are not
// walked as one (examples may hold anything).
var schemaDataKeywords = map[string]bool{
	"enum": true, "const": true, "examples": true, "default": true,
	"required": true, "dependentRequired": true, "title": true, "description": true,
	"pattern": true, "format": true, "$comment": true, "type": true,
}

// checkUserSchema checks a schema a plugin supplies (tool input and output
// schemas, pack type schemas) and compiles it. The schema must be
// self-contained: $ref only to fragments of itself, no $id, no dynamic or
// recursive references, $schema only draft 2020-12.
func checkUserSchema(schema map[string]any, where string, rules schemaRules) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("%s: schema of %d bytes exceeds %d bytes", where, len(raw), maxSchemaBytes)
	}
	if rules.rootObject {
		if t, _ := schema["type"].(string); t != "object" {
			return nil, fmt.Errorf(`%s: the root of the schema must have "type": "object"`, where)
		}
	}
	if err := walkSchema(schema, "", rules); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "urn:apconnect:plugin-schema"
	if err := c.AddResource(url, schema); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%s: schema does not compile: %v", where, firstLine(err.Error()))
	}
	return sch, nil
}

func walkSchema(v any, ptr string, rules schemaRules) error {
	obj, ok := v.(map[string]any)
	if !ok {
		if arr, ok := v.([]any); ok {
			for i, e := range arr {
				if err := walkSchema(e, fmt.Sprintf("%s/%d", ptr, i), rules); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, k := range sortedKeys(obj) {
		val := obj[k]
		at := ptr + "/" + text.EscapePointer(k)
		switch k {
		case "oneOf", "anyOf", "allOf":
			if rules.noCombinators {
				return fmt.Errorf("%s: %s is not allowed in a tool input schema", at, k)
			}
		case "$ref":
			s, _ := val.(string)
			if !strings.HasPrefix(s, "#") {
				return fmt.Errorf("%s: only references inside the schema (\"#...\") are allowed, got %q", at, s)
			}
		case "$id", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary":
			return fmt.Errorf("%s: %s is not allowed", at, k)
		case "$schema":
			if s, _ := val.(string); s != "https://json-schema.org/draft/2020-12/schema" {
				return fmt.Errorf("%s: only draft 2020-12 is supported, got %v", at, val)
			}
		}
		if schemaDataKeywords[k] {
			continue
		}
		if schemaMapKeywords[k] {
			if m, ok := val.(map[string]any); ok {
				for _, name := range sortedKeys(m) {
					if err := walkSchema(m[name], at+"/"+text.EscapePointer(name), rules); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err := walkSchema(val, at, rules); err != nil {
			return err
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
