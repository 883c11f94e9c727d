package plugintest_test

import (
	"context"
	"fmt"
	"testing"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// t stands for the *testing.T of the test function the example's code
// belongs in: every plugintest helper takes one (it fails the test, owns
// the temporary files and closes the plugin when the test ends), so the
// example is compiled, not run. TestExampleGreet runs the same code.
var t = &testing.T{}

// A plugin tool tested under the real runtime: assemble the module (Build
// for a Go plugin, BuildRust or BuildC for the others), load it with the
// grants an operator would give it, and call the tool. The result has
// passed the same checks the connector applies before an agent sees it.
func Example() {
	wasm := plugintest.BuildWat(t, "testdata/greet.wat")
	p := plugintest.Load(t, wasm, plugin.Grants{Tools: true})

	res, err := p.CallTool(context.Background(), "greet", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(p.Name(), p.Tools()[0].Name, res.Content[0].Text)
	// Prints: greeter greet hello from a wasm tool
}
