// Command hello is the smallest useful apconnect plugin: a type pack with
// one greeting type, a validator for it, a watch rule and a tool.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:    "hello",
		Version: "0.1.0",
		Packs: []plugin.Pack{{Name: "hello:greetings", Version: "1.0", Types: []plugin.TypeDef{{
			Type: "hello.greeting", Kind: "signal", Title: "Greeting",
			Schema: map[string]any{"type": "object", "required": []string{"to"},
				"properties": map[string]any{"to": map[string]any{"type": "string"}}},
		}}}},
		Validators: map[string]plugin.ValidateFunc{"hello.greeting": func(r *plugin.ValidateRequest) []plugin.FieldError {
			if to, _ := r.Payload.Get("to").AsString(); to == r.Actor {
				return []plugin.FieldError{plugin.Errorf("/payload/to", "do not greet yourself")}
			}
			return nil
		}},
		Watchers: map[string]plugin.WatchFunc{"hello.greeting": func(rec *plugin.Record, w *plugin.WatchRequest) *plugin.InboxItem {
			if to, _ := rec.Payload.Get("to").AsString(); to == w.Room.SelfID() {
				return &plugin.InboxItem{Summary: "Someone greeted you", SuggestedTools: []string{"wave"}}
			}
			return nil
		}},
		Tools: []plugin.Tool{{Name: "wave", Description: "Waves back.", InputSchema: map[string]any{"type": "object"},
			Handler: func(*plugin.ToolRequest) (*plugin.ToolResult, error) { return plugin.Text("👋"), nil }}},
	})
}

func main() {}
