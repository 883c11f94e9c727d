package mcpserver

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"apconnect/host/toolcatalog"
	"apconnect/schemas"
)

// Served schemas must be self-contained, reference-free and free of
// maintainer comments.
func TestServedSchemasSelfContained(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	const base = "mem://raw/"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	entries, err := fs.ReadDir(schemas.Tools(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := fs.ReadFile(schemas.Tools(), e.Name())
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
	for _, name := range toolcatalog.Names() {
		if _, err := c.Compile(base + name + ".json#/outputSchema"); err != nil {
			t.Errorf("%s: raw output schema: %v", name, err)
		}
	}
}

var toolRefRE = regexp.MustCompile(`agent_protocols_[a-z0-9_]+`)

// Every tool a description, result schema or the instructions point the
// agent to exists.
func TestReferencedToolsExist(t *testing.T) {
	t.Parallel()
	names := toolcatalog.Names()
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
	check("instructions", offlineConnector(t).Instructions())
}

func TestInstructionsTeachTheLoop(t *testing.T) {
	t.Parallel()
	ins := offlineConnector(t).Instructions()
	// About 1,500 tokens: the core loop, the trust rules and a short
	// paragraph per protocol module. A client pays for them in every
	// session, so a module teaches its tools' order, not their inputs.
	if len(ins) > 6000 {
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
	t.Parallel()
	// Tools that hand room-authored text to the agent say it is untrusted
	// or a norm rather than a command.
	for _, short := range []string{
		"rooms_search", "room_open", "room_state", "room_members_list", "room_member_get", "agent_status_list",
		"agent_status_get", "room_timeline", "inbox_next", "draft_get", "join_requests_list", "join_request_review",
	} {
		info, _ := toolcatalog.Info(pfx + short)
		d := strings.ToLower(info.Description)
		if !strings.Contains(d, "untrusted") && !strings.Contains(d, "not commands") && !strings.Contains(d, "not verified") &&
			!strings.Contains(d, "not on instructions") && !strings.Contains(d, "not a verified claim") {
			t.Errorf("%s: description does not flag room content as untrusted", info.Name)
		}
	}
}

func TestCatalogReturnsFreshCopies(t *testing.T) {
	t.Parallel()
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
	if _, ok := toolcatalog.InputSchema("agent_protocols_nope"); ok {
		t.Error("unknown input schema found")
	}
	if _, ok := toolcatalog.OutputSchema("agent_protocols_nope"); ok {
		t.Error("unknown output schema found")
	}
	if _, ok := toolcatalog.Info("agent_protocols_nope"); ok {
		t.Error("unknown info found")
	}
	infos := toolcatalog.Infos()
	if len(infos) != len(b) || infos[0].Name != b[0].Name || infos[0].Access == "" {
		t.Errorf("toolcatalog.Infos() = %v", infos[:1])
	}
	infos[0].Inputs[0] = "changed"
	if again, _ := toolcatalog.Info(infos[0].Name); again.Inputs[0] == "changed" {
		t.Error("toolcatalog.Info shares its slices")
	}
}
