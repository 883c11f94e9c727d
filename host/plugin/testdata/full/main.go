// Command full is the test plugin of host/plugin: every operation on the
// happy path, plus tools that try what a hostile plugin would try.
package main

import (
	"apconnect/sdk-guest/plugin"
)

func init() {
	plugin.Register(plugin.Plugin{
		Name:        "full",
		Version:     "1.2.3",
		Description: "Test plugin exercising every operation of the ABI.",
		Validators: map[string]plugin.ValidateFunc{
			"demo.vote":  validateVote,
			"demo.loop":  func(*plugin.ValidateRequest) []plugin.FieldError { spin(); return nil },
			"demo.panic": func(*plugin.ValidateRequest) []plugin.FieldError { panic("validator exploded") },
		},
		Watchers: map[string]plugin.WatchFunc{
			"demo.poll":  watchPoll,
			"demo.bench": watchBench,
			"demo.loop":  func(*plugin.Record, *plugin.WatchRequest) *plugin.InboxItem { spin(); return nil },
		},
		Tools:    tools,
		Packs:    []plugin.Pack{pollsPack},
		Proposes: []string{"demo.vote"},
	})
}

func main() {}

// spin never returns; the host must stop it at the deadline.
func spin() {
	n := 0
	for {
		n++
		if n < 0 {
			return
		}
	}
}
