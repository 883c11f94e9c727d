// Package catalogcheck checks an apconnect MCP server tool by tool against
// both catalogs of the union (DECISIONS #2): the seed's connector spec and
// the reference SDK 0.12.6's tool catalog. It drives real MCP client
// sessions against a real local hub, so the same scenario runs in process
// (host/mcpserver) and over stdio against the apconnect binary (test/e2e).
//
// testdata/sdk-0.12.6-tools.json is the SDK's catalog,
// shared/reference/agent-protocols-0.12.6/tools.json copied here so the
// repository stands alone.
package catalogcheck

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/sdk-0.12.6-tools.json
var sdkJSON []byte

// SDKTool is one tool definition of the 0.12.6 catalog.
type SDKTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Annotations  map[string]bool `json:"annotations"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

var sdkTools = sync.OnceValue(func() []SDKTool {
	var tools []SDKTool
	if err := json.Unmarshal(sdkJSON, &tools); err != nil {
		panic("catalogcheck: " + err.Error())
	}
	return tools
})

// SDKTools returns the 41 tools of the 0.12.6 catalog.
func SDKTools() []SDKTool { return slices.Clone(sdkTools()) }

// SDKToolNamed returns the 0.12.6 tool of that name.
func SDKToolNamed(name string) (SDKTool, bool) {
	for _, t := range sdkTools() {
		if t.Name == name {
			return t, true
		}
	}
	return SDKTool{}, false
}

// SDKInputs returns the input members the 0.12.6 catalog declares for a
// tool, sorted (none when it does not have the tool).
func SDKInputs(name string) []string {
	t, ok := SDKToolNamed(name)
	if !ok {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &s)
	var out []string
	for k := range s.Properties {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var compiled sync.Map // tool name -> *jsonschema.Schema or error

func sdkOutputSchema(name string) (*jsonschema.Schema, error) {
	if v, ok := compiled.Load(name); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*jsonschema.Schema), nil
	}
	t, _ := SDKToolNamed(name)
	sch, err := func() (*jsonschema.Schema, error) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.OutputSchema))
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := "mem://sdk-0.12.6/" + name + "/output.json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, err
		}
		return c.Compile(url)
	}()
	if err != nil {
		compiled.Store(name, err)
		return nil, err
	}
	compiled.Store(name, sch)
	return sch, nil
}

// ValidateSDKOutput checks a structured result against the 0.12.6 output
// schema of the tool of the same name; a tool 0.12.6 does not have passes.
func ValidateSDKOutput(name string, data []byte) error {
	if _, ok := SDKToolNamed(name); !ok {
		return nil
	}
	sch, err := sdkOutputSchema(name)
	if err != nil {
		return fmt.Errorf("0.12.6 output schema of %s: %w", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("the result does not match the 0.12.6 output schema of %s: %v", name, err)
	}
	return nil
}
