package plugintest_test

import (
	"context"
	"testing"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// TestExampleGreet runs the code of Example: a WAT tool plugin assembled,
// loaded with the tools grant only, and called.
func TestExampleGreet(t *testing.T) {
	wasm := plugintest.BuildWat(t, "testdata/greet.wat")
	p := plugintest.Load(t, wasm, plugin.Grants{Tools: true})
	if p.Name() != "greeter" || len(p.Tools()) != 1 || p.Tools()[0].Name != "greet" {
		t.Fatalf("described as %s with %+v", p.Name(), p.Tools())
	}
	res, err := p.CallTool(context.Background(), "greet", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "hello from a wasm tool" {
		t.Fatalf("result %+v", res)
	}
	// Input is checked against the tool's schema before the module runs.
	if _, err := p.CallTool(context.Background(), "greet", []byte(`{"unexpected":1}`), nil); err == nil {
		t.Fatal("an input the schema refuses reached the tool")
	}
}
