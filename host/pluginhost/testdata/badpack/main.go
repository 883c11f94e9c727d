// Command badpack is a test plugin of host/pluginhost: its pack's type
// schema is a valid JSON Schema the plugin runtime accepts, but its pattern
// uses "." outside a character class, which the ADP type schema profile
// refuses, so apconnect refuses the plugin at load.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:    "badpack",
		Version: "0.1.0",
		Packs: []plugin.Pack{{Name: "test:bad", Version: "1.0", Types: []plugin.TypeDef{{
			Type: "bad.note", Kind: "message", Title: "Note",
			Schema: map[string]any{"type": "object", "properties": map[string]any{
				"text": map[string]any{"type": "string", "pattern": "^a.b$"}}},
		}}}},
	})
}

func main() {}
