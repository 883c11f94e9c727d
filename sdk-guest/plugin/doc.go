// Package plugin is the guest SDK for apconnect plugins: WebAssembly reactor
// modules that add event-type validation, inbox watch rules, tools and type
// packs to apconnect, inside a sandbox with no files, network, environment or
// clock.
//
// A plugin is a main package that registers itself from init:
//
//	package main
//
//	import "apconnect/sdk-guest/plugin"
//
//	func init() {
//		plugin.Register(plugin.Plugin{
//			Name:    "hello",
//			Version: "0.1.0",
//			Tools: []plugin.Tool{{
//				Name:        "greet",
//				Description: "Says hello.",
//				InputSchema: map[string]any{"type": "object"},
//				Handler: func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
//					return plugin.Text("hello"), nil
//				},
//			}},
//		})
//	}
//
//	func main() {}
//
// and is built with the standard Go toolchain:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hello.wasm .
//
// The package implements ABI version 1 (docs/PLUGINS.md in the apconnect
// repository): it exports apconnect_abi_version and apconnect_call, reads the
// input envelope through the host's input import, runs the registered
// function and hands the output envelope to the host's output import. A
// panic in plugin code becomes an error result (the host then discards the
// instance). Time comes only from the NowMS fields of the requests.
//
// Handle runs an operation directly, so plugin logic can be unit tested
// natively with go test.
package plugin
