// Package stdlib backs the guest SDK's conveniences with encoding/json and
// fmt, which the SDK itself does not import: together with the reflection
// they need they are about 40% of a minimal Go plugin module (1.8 MB of
// Go runtime, 0.4 MB each for encoding/json and fmt; docs/PLUGINS.md).
//
// Importing it, even only for its side effect,
//
//	import _ "apconnect/sdk-guest/plugin/stdlib"
//
// lets the SDK encode any value encoding/json can marshal (structs,
// pointers, typed maps and slices) where it takes an "any" — tool schemas,
// ToolResult.Structured, proposal payloads, TypeDef.Schema and Extra,
// plugin.Marshal — and lets plugin.Errorf and plugin.Logf format every verb
// and argument fmt.Sprintf does. Without it those take the values JSON
// decodes into (map[string]any, []any, strings, numbers, booleans, nil),
// []string, map[string]string, plugin.Raw and json.RawMessage, and the
// verbs %s %v %q %d %t and %%.
//
// Decode and Bind unmarshal a Raw value (a payload, a tool's arguments)
// into a Go value with encoding/json.
package stdlib

import (
	"encoding/json"
	"errors"
	"fmt"

	"apconnect/sdk-guest/plugin"
)

func init() {
	plugin.EncodeOthersWith(json.Marshal)
	plugin.FormatOthersWith(fmt.Sprintf)
}

// Decode unmarshals the JSON value r into v with encoding/json.
func Decode(r plugin.Raw, v any) error {
	if len(r) == 0 {
		return errors.New("plugin: no JSON value to decode")
	}
	return json.Unmarshal(r, v)
}

// Bind unmarshals a tool call's arguments into v.
func Bind(req *plugin.ToolRequest, v any) error { return Decode(req.Arguments, v) }
