package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"apconnect/host/identity"
)

func descFor(t *testing.T, mutate func(d map[string]any)) *describeOutput {
	t.Helper()
	d := map[string]any{
		"name": "demo", "version": "1", "abi_version": 1,
		"validates": []any{"demo.vote"}, "watches": []any{"message.create"}, "proposes": []any{"demo.vote"},
		"tools": []any{map[string]any{"name": "tally", "description": "d", "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"poll": map[string]any{"$ref": "#/$defs/id"}},
			"$defs": map[string]any{"id": map[string]any{"type": "string"}}}}},
		"packs": []any{map[string]any{"name": "demo:polls", "version": "1.0", "types": []any{
			map[string]any{"type": "demo.vote", "kind": "signal", "title": "Vote", "schema": map[string]any{"type": "object"}}}}},
	}
	mutate(d)
	b, _ := json.Marshal(d)
	var out describeOutput
	if err := decodeInto(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func TestDescriptionRules(t *testing.T) {
	grants := Grants{Validate: true, Watch: true, Tools: true, Packs: true, Propose: []string{"demo.vote", "message.create", "room.join"}}
	set := func(k string, v any) func(map[string]any) { return func(d map[string]any) { d[k] = v } }
	tool := func(schema map[string]any) func(map[string]any) {
		return set("tools", []any{map[string]any{"name": "t", "description": "d", "input_schema": schema}})
	}
	pack := func(p map[string]any) func(map[string]any) { return set("packs", []any{p}) }
	typeDef := func(typ string, schema map[string]any) map[string]any {
		return map[string]any{"type": typ, "kind": "signal", "title": "T", "schema": schema}
	}
	big := map[string]any{"type": "object", "description": strings.Repeat("x", 17<<10)}
	cases := []struct {
		name   string
		mutate func(map[string]any)
		frag   string
	}{
		{"upper-case name", set("name", "Demo"), "must match"},
		{"reserved prefix", set("name", "agent_protocols_x"), `not start with "agent_protocols"`},
		{"ABI version", set("abi_version", 2), "ABI version 2"},
		{"built-in validated", set("validates", []any{"message.create"}), "not a custom event type"},
		{"room. validated", set("validates", []any{"room.thing"}), "not a custom event type"},
		{"built-in proposed", set("proposes", []any{"room.join"}), "neither a custom event type"},
		{"duplicate tool", set("tools", []any{
			map[string]any{"name": "t", "description": "d", "input_schema": map[string]any{"type": "object"}},
			map[string]any{"name": "t", "description": "d", "input_schema": map[string]any{"type": "object"}}}), "described twice"},
		{"long MCP name", set("tools", []any{map[string]any{"name": strings.Repeat("t", 60), "description": "d",
			"input_schema": map[string]any{"type": "object"}}}), "longer than 64"},
		{"root not object", tool(map[string]any{"type": "string"}), `"type": "object"`},
		{"oneOf", tool(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"oneOf": []any{}}}}), "oneOf is not allowed"},
		{"remote ref", tool(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "https://example.com/s.json"}}}), "only references inside"},
		{"$id", tool(map[string]any{"type": "object", "$id": "https://example.com/x"}), "$id is not allowed"},
		{"old draft", tool(map[string]any{"type": "object", "$schema": "http://json-schema.org/draft-07/schema#"}), "draft 2020-12"},
		{"too large", tool(big), "exceeds 16384 bytes"},
		{"does not compile", tool(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "nonsense"}}}), "does not compile"},
		{"dangling ref", tool(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/missing"}}}), "does not compile"},
		{"output not object", set("tools", []any{map[string]any{"name": "t", "description": "d",
			"input_schema": map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "array"}}}), "output_schema"},
		{"adp pack", pack(map[string]any{"name": "adp:mine", "version": "1.0", "types": []any{typeDef("a.b", map[string]any{})}}), "reserved"},
		{"built-in type in pack", pack(map[string]any{"name": "x:y", "version": "1.0", "types": []any{typeDef("message.create", map[string]any{})}}), "not a custom event type"},
		{"duplicate type", pack(map[string]any{"name": "x:y", "version": "1.0", "types": []any{typeDef("a.b", map[string]any{}), typeDef("a.b", map[string]any{})}}), "defined twice"},
		{"remote ref in pack", pack(map[string]any{"name": "x:y", "version": "1.0", "types": []any{typeDef("a.b", map[string]any{"$ref": "file:///etc/passwd"})}}), "only references inside"},
		{"duplicate pack", set("packs", []any{
			map[string]any{"name": "x:y", "version": "1.0", "types": []any{typeDef("a.b", map[string]any{})}},
			map[string]any{"name": "x:y", "version": "2.0", "types": []any{typeDef("a.b", map[string]any{})}}}), "described twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &Plugin{source: "test.wasm", grants: grants}
			err := p.applyDescription(descFor(t, c.mutate))
			if err == nil || CodeOf(err) != CodeInvalidDescription || !strings.Contains(err.Error(), c.frag) {
				t.Errorf("got %v, want %s mentioning %q", err, CodeInvalidDescription, c.frag)
			}
		})
	}
	p := &Plugin{source: "test.wasm", grants: grants}
	if err := p.applyDescription(descFor(t, func(map[string]any) {})); err != nil {
		t.Fatal(err)
	}
	if td := p.desc.Tools[0]; td.MCPName != "demo_tally" || td.ReadOnly {
		t.Errorf("tool %+v", td)
	}
	p = &Plugin{source: "test.wasm", grants: Grants{Validate: true, Watch: true, Tools: true, Packs: true}}
	err := p.applyDescription(descFor(t, set("proposes", []any{})))
	if err != nil || !p.desc.Tools[0].ReadOnly {
		t.Errorf("without propose grants tools must be read-only: %v", err)
	}
}

func TestEnvelopeSchemas(t *testing.T) {
	s, err := compileEnvelopeSchemas()
	if err != nil {
		t.Fatal(err)
	}
	valid := map[Op][2]string{
		OpDescribe: {`{"op":"describe","now_ms":1,"abi_version":1}`, `{"name":"x","version":"1","abi_version":1}`},
		OpValidate: {`{"op":"validate","now_ms":1,"proposal":{"type":"a.b","payload":{}},"room":{"room_id":"r"}}`,
			`{"ok":false,"errors":[{"path":"/payload/a","message":"m"}]}`},
		OpWatch: {`{"op":"watch","now_ms":1,"room":{"room_id":"r"},"records":[{"seq":1,"event_id":"cJg9aS9kgYX-vm1vpgdjCuaGSffm_EW5RoAJbAbk-ts","type":"a.b","accepted_at":1}]}`,
			`{"items":[{"kind":"room.event.custom","seq":1,"summary":"s","priority":"high"}]}`},
		OpTool: {`{"op":"tool","now_ms":1,"name":"t","arguments":{},"context":{}}`,
			`{"content":[{"type":"text","text":"hi"}],"structured":{"a":1}}`},
		OpPack: {`{"op":"pack","now_ms":1,"name":"x:y"}`,
			`{"name":"x:y","version":"1.0","types":[{"type":"a.b","kind":"signal","title":"T","schema":{}}]}`},
	}
	for op, docs := range valid {
		for i, doc := range docs {
			v, _ := identity.ParseStrict([]byte(doc))
			sch := s.input[op]
			if i == 1 {
				sch = s.output[op]
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("%s %d: %v", op, i, schemaMessage(err))
			}
		}
	}
	invalid := map[Op]string{
		OpTool:     `{"content":[{"type":"resource","resource":{"uri":"ui://x"}}]}`,
		OpWatch:    `{"items":[{"kind":"room.mention","seq":1,"summary":"s"}]}`,
		OpValidate: `{"ok":true,"errors":[{"path":"no-slash","message":"m"}]}`,
		OpDescribe: `{"name":"x","version":"1","abi_version":1,"tools":[{"name":"T","description":"d","input_schema":{}}]}`,
		OpPack:     `{"name":"nocolon","version":"1.0","types":[]}`,
	}
	for op, doc := range invalid {
		v, _ := identity.ParseStrict([]byte(doc))
		if err := s.output[op].Validate(v); err == nil {
			t.Errorf("%s output %s accepted", op, doc)
		}
	}
}
