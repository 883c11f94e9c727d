package plugin

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/schemaerr"
	pluginschema "apconnect/schemas/plugin"
)

// envelopeSchemas are the compiled schemas of the ABI envelopes.
type envelopeSchemas struct {
	input  map[Op]*jsonschema.Schema
	output map[Op]*jsonschema.Schema
	error  *jsonschema.Schema
}

// compileEnvelopeSchemas compiles the embedded schemas of schemas/plugin.
// Compilation needs no network: every $ref resolves among the embedded files
// and no URL loader is installed.
func compileEnvelopeSchemas() (*envelopeSchemas, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	for _, name := range pluginschema.Files() {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := pluginschema.Read(name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource(pluginschema.ID(name), doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	s := &envelopeSchemas{input: map[Op]*jsonschema.Schema{}, output: map[Op]*jsonschema.Schema{}}
	for _, op := range []Op{OpDescribe, OpValidate, OpWatch, OpTool, OpPack} {
		in, err := c.Compile(pluginschema.ID(op.String() + ".input.json"))
		if err != nil {
			return nil, err
		}
		out, err := c.Compile(pluginschema.ID(op.String() + ".output.json"))
		if err != nil {
			return nil, err
		}
		s.input[op], s.output[op] = in, out
	}
	var err error
	s.error, err = c.Compile(pluginschema.ID("error.output.json"))
	return s, err
}

// noLoader refuses every URL, so that no schema (ours or a plugin's) can
// make the compiler read a file or the network.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %q, which is not available (only references inside the schema are allowed)", url)
}

// schemaMessage turns a validation failure into a short, deterministic
// message: the leaf failures sorted by location, at most five.
func schemaMessage(err error) string {
	var msgs []string
	for _, l := range schemaerr.Leaves(err) {
		loc := l.Pointer
		if loc == "" {
			loc = "/"
		}
		msgs = append(msgs, fmt.Sprintf("at %s: %s", loc, l.Message))
	}
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("and %d more", len(msgs)-5))
	}
	return strings.Join(msgs, "; ")
}
