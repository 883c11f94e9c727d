package mcpserver

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/schemas"
)

// fixtureDefs and fixtureTool are a tiny valid catalog that each case below
// breaks in one way.
const fixtureDefs = `{"$defs": {
	"RoomId": {"type": "string", "description": "Room."},
	"Host": {"type": "string", "pattern": "^https://[^/]+$", "description": "Host."},
	"Out": {"type": "object", "properties": {"ok": {"$ref": "#/$defs/Flag"}}, "additionalProperties": true},
	"Flag": {"type": "boolean"}
}}`

const fixtureTool = `{
	"name": "agent_protocols_demo",
	"title": "Demo",
	"description": "Reads local state only.",
	"access": "local-read",
	"annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
	"inputSchema": {"type": "object", "properties": {
		"room_id": {"$ref": "defs.json#/$defs/RoomId"},
		"host": {"$ref": "defs.json#/$defs/Host", "description": "Optional host."}
	}, "required": ["room_id"], "additionalProperties": false},
	"outputSchema": {"$ref": "defs.json#/$defs/Out"}
}`

func fixtureFS(defs, tool string) fstest.MapFS {
	return fstest.MapFS{
		"defs.json":                 {Data: []byte(defs)},
		"agent_protocols_demo.json": {Data: []byte(tool)},
	}
}

func TestLoadFixture(t *testing.T) {
	cat, err := loadCatalog(fixtureFS(fixtureDefs, fixtureTool))
	if err != nil {
		t.Fatal(err)
	}
	tool := cat.byName["agent_protocols_demo"]
	wantIn := `{"type":"object","properties":{"room_id":{"type":"string","description":"Room."},` +
		`"host":{"type":"string","pattern":"^https://[^/]+$","description":"Optional host."}},"required":["room_id"],"additionalProperties":false}`
	if string(tool.input) != wantIn {
		t.Errorf("bundled input\n got %s\nwant %s", tool.input, wantIn)
	}
	wantOut := `{"type":"object","properties":{"ok":{"type":"boolean"}},"additionalProperties":true}`
	if string(tool.output) != wantOut {
		t.Errorf("bundled output\n got %s\nwant %s", tool.output, wantOut)
	}
	if !slices.Equal(tool.inputProps, []string{"room_id", "host"}) || !slices.Equal(tool.required, []string{"room_id"}) {
		t.Errorf("props %v required %v", tool.inputProps, tool.required)
	}
}

func TestLoadRejects(t *testing.T) {
	replace := func(old, new string) string {
		if !strings.Contains(fixtureTool, old) {
			t.Fatalf("fixture has no %q", old)
		}
		return strings.Replace(fixtureTool, old, new, 1)
	}
	tests := []struct {
		name, defs, tool, want string
	}{
		{"missing hint", fixtureDefs, replace(`"openWorldHint": false`, `"extraHint": false`), "unknown field"},
		{"hint absent", fixtureDefs, replace(`, "openWorldHint": false`, ``), "must set readOnlyHint, destructiveHint, idempotentHint and openWorldHint"},
		{"read-only destructive", fixtureDefs, replace(`"destructiveHint": false`, `"destructiveHint": true`), "cannot be destructive"},
		{"access without its phrase", fixtureDefs, replace(`"access": "local-read"`, `"access": "signed-write"`), `must say "signs and submits"`},
		{"read-only signed write", fixtureDefs,
			strings.Replace(replace(`Reads local state only.`, `Signs and submits.`), `"access": "local-read"`, `"access": "signed-write"`, 1), "cannot have access signed-write"},
		{"signed write not read-only", fixtureDefs,
			strings.Replace(strings.Replace(replace(`Reads local state only.`, `Signs and submits.`), `"access": "local-read"`, `"access": "signed-write"`, 1),
				`"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false`,
				`"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false`, 1), "talks to a host and must set openWorldHint"},
		{"host read without open world", fixtureDefs,
			strings.Replace(replace(`Reads local state only.`, `Reads the host.`), `"access": "local-read"`, `"access": "host-read"`, 1), "must set openWorldHint"},
		{"unknown access", fixtureDefs, replace(`"access": "local-read"`, `"access": "whatever"`), "access \"whatever\""},
		{"description without access phrase", fixtureDefs, replace(`Reads local state only.`, `Does things.`), `must say "reads local state"`},
		{"empty title", fixtureDefs, replace(`"title": "Demo"`, `"title": " "`), "title is empty"},
		{"unknown top-level key", fixtureDefs, replace(`"title": "Demo",`, `"title": "Demo", "x": 1,`), "unknown field"},
		{"duplicate key", fixtureDefs, replace(`"title": "Demo",`, `"title": "Demo", "title": "Again",`), "duplicate"},
		{"bad name", fixtureDefs, replace(`"name": "agent_protocols_demo"`, `"name": "demo"`), "is not agent_protocols_"},
		{"file name mismatch", fixtureDefs, replace(`"name": "agent_protocols_demo"`, `"name": "agent_protocols_other"`), "file name must be agent_protocols_other.json"},
		{"oneOf in input", fixtureDefs, replace(`"room_id": {"$ref": "defs.json#/$defs/RoomId"}`, `"room_id": {"oneOf": [{"type": "string"}], "description": "x"}`), `uses "oneOf"`},
		{"anyOf deep in input", fixtureDefs,
			replace(`"room_id": {"$ref": "defs.json#/$defs/RoomId"}`, `"room_id": {"type": "array", "description": "x", "items": {"type": "object", "additionalProperties": false, "properties": {"a": {"anyOf": []}}}}`), `/properties/room_id/items/properties/a uses "anyOf"`},
		{"allOf in a definition", strings.Replace(fixtureDefs, `"RoomId": {"type": "string"`, `"RoomId": {"allOf": [{"type": "string"}]`, 1), fixtureTool, `uses "allOf"`},
		{"type array in input", fixtureDefs, replace(`"room_id": {"$ref": "defs.json#/$defs/RoomId"}`, `"room_id": {"type": ["string", "null"], "description": "x"}`), "must be one string"},
		{"open input root", fixtureDefs, replace(`"required": ["room_id"], "additionalProperties": false`, `"required": ["room_id"]`), `"additionalProperties": false`},
		{"nested object without additionalProperties", fixtureDefs,
			replace(`"room_id": {"$ref": "defs.json#/$defs/RoomId"}`, `"room_id": {"type": "object", "description": "x"}`), `must state "additionalProperties"`},
		{"property without description", fixtureDefs, replace(`"room_id": {"$ref": "defs.json#/$defs/RoomId"}`, `"room_id": {"type": "string"}`), "has no description"},
		{"required not declared", fixtureDefs, replace(`"required": ["room_id"]`, `"required": ["room_id", "nope"]`), "not a distinct declared property"},
		{"room_id without host", fixtureDefs, replace(`,
		"host": {"$ref": "defs.json#/$defs/Host", "description": "Optional host."}`, ``), `must also take "host"`},
		{"host not https", strings.Replace(fixtureDefs, `"pattern": "^https://[^/]+$"`, `"pattern": "^.+$"`, 1), fixtureTool, "https origin"},
		{"output root not object", fixtureDefs, replace(`"outputSchema": {"$ref": "defs.json#/$defs/Out"}`, `"outputSchema": {"type": "array"}`), `"type": "object"`},
		{"schema does not compile", fixtureDefs, replace(`"outputSchema": {"$ref": "defs.json#/$defs/Out"}`, `"outputSchema": {"type": "object", "properties": {}, "minProperties": "two"}`), "does not compile"},
		{"unknown definition", fixtureDefs, replace(`defs.json#/$defs/Out`, `defs.json#/$defs/Nope`), `no definition "Nope"`},
		{"foreign ref", fixtureDefs, replace(`defs.json#/$defs/Out`, `https://example.com/s.json`), "must be defs.json#/$defs/<Name>"},
		{"non-annotation sibling of $ref", fixtureDefs, replace(`"description": "Optional host."`, `"minLength": 3`), "siblings other than description"},
		{"non-annotation sibling of an output $ref", strings.Replace(fixtureDefs, `{"$ref": "#/$defs/Flag"}`, `{"$ref": "#/$defs/Flag", "type": "boolean"}`, 1), fixtureTool, "siblings other than description"},
		{"non-annotation sibling of a root output $ref", fixtureDefs, replace(`"outputSchema": {"$ref": "defs.json#/$defs/Out"}`, `"outputSchema": {"$ref": "defs.json#/$defs/Out", "required": []}`), "siblings other than description"},
		{"unknown definition inside an output", strings.Replace(fixtureDefs, `#/$defs/Flag`, `#/$defs/Nope`, 1), fixtureTool, `no definition "Nope"`},
		{"local $defs in a tool file", fixtureDefs, replace(`"outputSchema": {"$ref": "defs.json#/$defs/Out"}`, `"outputSchema": {"type": "object", "properties": {}, "$defs": {}}`), "belongs in defs.json"},
		{"definition not an object", strings.Replace(fixtureDefs, `"Flag": {"type": "boolean"}`, `"Flag": true`, 1), fixtureTool, "$defs/Flag is not a schema object"},
		{"recursive definition", strings.Replace(fixtureDefs, `"Flag": {"type": "boolean"}`, `"Flag": {"type": "array", "items": {"$ref": "#/$defs/Flag"}}`, 1), fixtureTool, "refers to itself"},
		{"unused definition", strings.Replace(fixtureDefs, `"Flag": {"type": "boolean"}`, `"Flag": {"type": "boolean"}, "Spare": {}`, 1), fixtureTool, "used by no tool: Spare"},
		{"defs with other members", `{"$id": "x", "$defs": {}}`, fixtureTool, `unexpected top-level member "$id"`},
		{"long description", fixtureDefs, replace(`Reads local state only.`, `Reads local state only. `+strings.Repeat("x", maxDescription)), "more than"},
	}
	for _, tc := range tests {
		_, err := loadCatalog(fixtureFS(tc.defs, tc.tool))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}

	fsys := fixtureFS(fixtureDefs, fixtureTool)
	fsys["notes.txt"] = &fstest.MapFile{Data: []byte("x")}
	if _, err := loadCatalog(fsys); err == nil || !strings.Contains(err.Error(), `unexpected entry "notes.txt"`) {
		t.Errorf("stray file: %v", err)
	}
	if _, err := loadCatalog(fstest.MapFS{"defs.json": {Data: []byte(`{"$defs": {}}`)}}); err == nil || !strings.Contains(err.Error(), "no tool files") {
		t.Errorf("empty catalog: %v", err)
	}
	if _, err := loadCatalog(fstest.MapFS{}); err == nil || !strings.Contains(err.Error(), "defs.json") {
		t.Errorf("missing defs: %v", err)
	}
}

// Served schemas must be self-contained, reference-free and free of
// maintainer comments.
func TestServedSchemasSelfContained(t *testing.T) {
	for _, tool := range Catalog() {
		for _, raw := range []json.RawMessage{tool.InputSchema.(json.RawMessage), tool.OutputSchema.(json.RawMessage)} {
			for _, kw := range []string{`"$ref"`, `"$defs"`, `"$comment"`, `"$schema"`, `"$id"`, "defs.json"} {
				if bytes.Contains(raw, []byte(kw)) {
					t.Errorf("%s: served schema contains %s", tool.Name, kw)
				}
			}
		}
	}
}

// The raw files use standard JSON Schema references, so any draft 2020-12
// validator that is given defs.json must agree with the bundled schemas the
// catalog serves on every example of the tests.
func TestRawFilesAgreeWithBundledSchemas(t *testing.T) {
	const base = "mem://raw/"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	entries, err := fs.ReadDir(schemas.Tools, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := fs.ReadFile(schemas.Tools, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(base+e.Name(), doc); err != nil {
			t.Fatal(err)
		}
	}
	docs := func(m map[string]string) map[string][]string {
		out := map[string][]string{}
		for k, v := range m {
			open := strings.TrimSuffix(strings.TrimSpace(v), "}")
			if open != "{" {
				open += ","
			}
			out[k] = append(out[k], v, open+`"unknown_field":true}`)
		}
		return out
	}
	inputs := docs(minimalArgs)
	for k, v := range fullArgs {
		inputs[k] = append(inputs[k], v)
	}
	inputs["room_timeline"] = append(inputs["room_timeline"], `{"room_id":"r","limit":500}`, `{"room_id":"r r"}`)
	inputs["room_send_message"] = append(inputs["room_send_message"], `{"room_id":"r","content":"x","mentions":["did:agent:x"]}`)
	for short, examples := range inputs {
		raw, err := c.Compile(base + pfx + short + ".json#/inputSchema")
		if err != nil {
			t.Fatalf("%s: raw input schema: %v", short, err)
		}
		bundled := inputSchema(t, short)
		for _, ex := range examples {
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(ex))
			if err != nil {
				t.Fatal(err)
			}
			rawOK, bundledOK := raw.Validate(v) == nil, bundled.ValidateJSON([]byte(ex)) == nil
			if rawOK != bundledOK {
				t.Errorf("%s %s: raw schema says %v, bundled says %v", short, ex, rawOK, bundledOK)
			}
		}
	}
	for _, name := range Names() {
		if _, err := c.Compile(base + name + ".json#/outputSchema"); err != nil {
			t.Errorf("%s: raw output schema: %v", name, err)
		}
	}
}

var toolRefRE = regexp.MustCompile(`agent_protocols_[a-z0-9_]+`)

// Every tool a description, result schema or the instructions point the
// agent to exists.
func TestReferencedToolsExist(t *testing.T) {
	names := Names()
	check := func(where, text string) {
		for _, ref := range toolRefRE.FindAllString(text, -1) {
			if !slices.Contains(names, ref) {
				t.Errorf("%s mentions unknown tool %s", where, ref)
			}
		}
	}
	for _, tool := range Catalog() {
		check(tool.Name+" description", tool.Description)
		check(tool.Name+" schemas", string(tool.InputSchema.(json.RawMessage))+string(tool.OutputSchema.(json.RawMessage)))
	}
	check("instructions", Instructions())
}

func TestInstructionsTeachTheLoop(t *testing.T) {
	ins := Instructions()
	if len(ins) > 4000 {
		t.Errorf("instructions are %d bytes; keep them short", len(ins))
	}
	for _, want := range []string{
		"agent_protocols_inbox_next", "agent_protocols_room_timeline", "unread_only", "mark_read",
		"agent_protocols_agent_status_list", "agent_protocols_agent_status_set", "agent_protocols_room_send_message",
		"agent_protocols_draft_commit", "revise", "send_as_is", "stay_silent", "send_anyway",
		"agent_protocols_inbox_ack", "agent_protocols_join_request_review", "untrusted", "not", "commands",
	} {
		if !strings.Contains(ins, want) {
			t.Errorf("instructions do not mention %q", want)
		}
	}
}

func TestDescriptionsTreatRoomContentAsUntrusted(t *testing.T) {
	// Tools that hand room-authored text to the agent say it is untrusted
	// or a norm rather than a command.
	for _, short := range []string{
		"rooms_search", "room_open", "room_state", "room_members_list", "room_member_get", "agent_status_list",
		"agent_status_get", "room_timeline", "inbox_next", "draft_get", "join_requests_list", "join_request_review",
	} {
		info, _ := Info(pfx + short)
		d := strings.ToLower(info.Description)
		if !strings.Contains(d, "untrusted") && !strings.Contains(d, "not commands") && !strings.Contains(d, "not verified") &&
			!strings.Contains(d, "not on instructions") && !strings.Contains(d, "not a verified claim") {
			t.Errorf("%s: description does not flag room content as untrusted", info.Name)
		}
	}
}

func TestCatalogReturnsFreshCopies(t *testing.T) {
	a := Catalog()
	a[0].Description = "changed"
	a[0].InputSchema.(json.RawMessage)[0] = 'X'
	*a[0].Annotations.DestructiveHint = !*a[0].Annotations.DestructiveHint
	b := Catalog()
	if b[0].Description == "changed" || b[0].InputSchema.(json.RawMessage)[0] != '{' {
		t.Error("Catalog shares state between calls")
	}
	tool, _ := Tool(b[0].Name)
	if *tool.Annotations.DestructiveHint != *b[0].Annotations.DestructiveHint {
		t.Error("Tool shares annotation state")
	}
	if _, ok := Tool("agent_protocols_nope"); ok {
		t.Error("unknown tool found")
	}
	if _, ok := InputSchema("agent_protocols_nope"); ok {
		t.Error("unknown input schema found")
	}
	if _, ok := OutputSchema("agent_protocols_nope"); ok {
		t.Error("unknown output schema found")
	}
	if _, ok := Info("agent_protocols_nope"); ok {
		t.Error("unknown info found")
	}
	infos := Infos()
	if len(infos) != len(b) || infos[0].Name != b[0].Name || infos[0].Access == "" {
		t.Errorf("Infos() = %v", infos[:1])
	}
	infos[0].Inputs[0] = "changed"
	if again, _ := Info(infos[0].Name); again.Inputs[0] == "changed" {
		t.Error("Info shares its slices")
	}
}

func TestAccessLabels(t *testing.T) {
	for a, want := range map[Access]string{
		AccessLocalRead: "local read", AccessHostRead: "host read", AccessLocalUpdate: "local update",
		AccessHostUpdate: "host write, unsigned", AccessSignedWrite: "signed write", Access("other"): "other",
	} {
		if got := a.Label(); got != want {
			t.Errorf("%s.Label() = %q, want %q", a, got, want)
		}
	}
	if !AccessHostRead.IsRead() || AccessLocalUpdate.IsRead() {
		t.Error("IsRead")
	}
}
