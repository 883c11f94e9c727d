package schemas

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestToolsEmbedded(t *testing.T) {
	entries, err := fs.ReadDir(Tools, ".")
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
		data, err := fs.ReadFile(Tools, name)
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
	if tools != 27 {
		t.Errorf("found %d tool files, want 27", tools)
	}
}

func TestConfigSchema(t *testing.T) {
	data, err := ConfigSchema()
	if errors.Is(err, fs.ErrNotExist) {
		// Written by another component; its absence must not break the build.
		if _, statErr := fs.Stat(FS, ConfigSchemaFile); !errors.Is(statErr, fs.ErrNotExist) {
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
