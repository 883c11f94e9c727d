package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func TestToolsEmbedded(t *testing.T) {
	entries, err := fs.ReadDir(Tools(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var tools int
	var defs bool
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			t.Errorf("unexpected entry %q in schemas/tools", name)
			continue
		}
		data, err := fs.ReadFile(Tools(), name)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(data) {
			t.Errorf("%s is not valid JSON", name)
		}
		switch {
		case name == "defs.json":
			defs = true
		case strings.HasPrefix(name, "agent_protocols_"):
			tools++
		default:
			t.Errorf("unexpected file %q in schemas/tools", name)
		}
	}
	if !defs {
		t.Error("schemas/tools/defs.json is missing")
	}
	if tools != 50 {
		t.Errorf("found %d tool files, want 50", tools)
	}
}

// The protocol schemas are the reference SDK 0.12.6's; the ADP one is also
// the kernel schema host/proto/adp enforces, and both copies must stay the same.
func TestProtocolSchemas(t *testing.T) {
	for _, p := range []string{"agent-discourse/1.0", "agent-profile/1.0"} {
		data, err := ProtocolSchema(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, ok := doc["$defs"].(map[string]any); !ok {
			t.Errorf("%s: no $defs", p)
		}
	}
	for _, p := range []string{"agent-mail/1.0", "agent-discourse", "../x/1.0", ""} {
		if _, err := ProtocolSchema(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ProtocolSchema(%q) = %v, want not-exist", p, err)
		}
	}
	kernel, err := os.ReadFile("../host/proto/adp/kernel/1.0.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := ProtocolSchema("agent-discourse/1.0")
	if !bytes.Equal(kernel, ours) {
		t.Error("schemas/protocols/agent-discourse-1.0.schema.json differs from host/proto/adp/kernel/1.0.schema.json")
	}
}

func TestConfigSchema(t *testing.T) {
	data, err := ConfigSchema()
	if errors.Is(err, fs.ErrNotExist) {
		// Written by another component; its absence must not break the build.
		if _, statErr := fs.Stat(FS(), ConfigSchemaFile); !errors.Is(statErr, fs.ErrNotExist) {
			t.Fatalf("ConfigSchema reports not-exist but Stat says %v", statErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) {
		t.Errorf("%s is not valid JSON", ConfigSchemaFile)
	}
}
