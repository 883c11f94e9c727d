package toolcatalog

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

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
	"capability": "discourse.read",
	"origin_input": "host",
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

// loadCompiled is loadCatalog followed by compileAll: every check a
// catalog passes before it ships.
func loadCompiled(fsys fs.FS) (*loadedCatalog, error) {
	cat, err := loadCatalog(fsys)
	if err != nil {
		return nil, err
	}
	return cat, cat.compileAll()
}

// TestEmbeddedCatalogCompiles compiles every schema of the shipped catalog,
// which the server otherwise compiles on a tool's first call.
func TestEmbeddedCatalogCompiles(t *testing.T) {
	if _, err := loadCompiled(schemas.Tools()); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaCompilesOnFirstUse: loading compiles nothing (a catalog whose
// schema does not compile loads, and fails only compileAll); a schema
// compiles once, on its first use, and one that does not compile fails
// every validation with an error that is not the caller's
// (*ValidationError) and names the tool.
func TestSchemaCompilesOnFirstUse(t *testing.T) {
	broken := strings.Replace(fixtureDefs, `"Flag": {"type": "boolean"}`, `"Flag": {"type": "boolean", "minLength": "two"}`, 1)
	cat, err := loadCatalog(fixtureFS(broken, fixtureTool))
	if err != nil {
		t.Fatalf("loading compiled the schemas: %v", err)
	}
	if err := cat.compileAll(); err == nil {
		t.Fatal("compileAll accepted a schema that does not compile")
	}
	out := cat.byName["agent_protocols_demo"].outSchema
	var ve *ValidationError
	for range 2 {
		err := out.ValidateJSON([]byte(`{}`))
		if err == nil || errors.As(err, &ve) || !strings.Contains(err.Error(), "agent_protocols_demo outputSchema does not compile") {
			t.Fatalf("broken schema: %v", err)
		}
	}

	s := newSchema("agent_protocols_demo", schemaInput, []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`), []string{"n"})
	if err := s.ValidateJSON([]byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateJSON([]byte(`{"n":"x"}`)); !errors.As(err, &ve) || ve.Issues[0].Path != "/n" {
		t.Fatalf("invalid input: %v", err)
	}
	first, _ := s.compiled()
	if again, _ := s.compiled(); first == nil || again != first {
		t.Fatal("the schema compiled again")
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
		{"capability absent", fixtureDefs, replace(`"capability": "discourse.read",`, ``), `"capability" is required`},
		{"unknown capability", fixtureDefs, replace(`"capability": "discourse.read"`, `"capability": "discourse.admin"`), `unknown capability "discourse.admin"`},
		{"origin input not an input", fixtureDefs, replace(`"origin_input": "host"`, `"origin_input": "service"`), `origin_input "service" must name an input member`},
		{"origin input without capability", fixtureDefs, replace(`"capability": "discourse.read"`, `"capability": null`), `origin_input "host" must name an input member of a tool that needs a capability`},
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
		{"schema does not compile", strings.Replace(fixtureDefs, `"Flag": {"type": "boolean"}`, `"Flag": {"type": "boolean", "minLength": "two"}`, 1), fixtureTool, "agent_protocols_demo outputSchema does not compile"},
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
		_, err := loadCompiled(fixtureFS(tc.defs, tc.tool))
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
