package mcpserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"apconnect/host/toolcatalog"
)

// goldenDir holds one snapshot per tool, <name>.json, exactly as tools/list
// serves it, so a review sees every tool definition that changes.
const goldenDir = "testdata/tools"

// marshalTool renders one served tool definition as indented JSON.
func marshalTool(t *testing.T, name string) []byte {
	t.Helper()
	tool, ok := Tool(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tool); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCatalogGolden fails when a served tool changes without its snapshot.
// Review the diff, then refresh the snapshots with
//
//	UPDATE_GOLDEN=1 go test ./host/mcpserver -run TestCatalogGolden
func TestCatalogGolden(t *testing.T) {
	t.Parallel()
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	if update {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range toolcatalog.Names() {
		got := marshalTool(t, name)
		file := filepath.Join(goldenDir, name+".json")
		if update {
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%v; create it with UPDATE_GOLDEN=1 go test ./host/mcpserver -run TestCatalogGolden", err)
			continue
		}
		if !bytes.Equal(got, want) {
			gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
			line := 0
			for line < len(gl) && line < len(wl) && bytes.Equal(gl[line], wl[line]) {
				line++
			}
			var g, w []byte
			if line < len(gl) {
				g = gl[line]
			}
			if line < len(wl) {
				w = wl[line]
			}
			t.Errorf("%s as served differs from %s at line %d:\n got: %s\nwant: %s\n"+
				"If the change is intended, run UPDATE_GOLDEN=1 go test ./host/mcpserver -run TestCatalogGolden and commit the snapshots.",
				name, file, line+1, g, w)
		}
	}
}

// The snapshots are exactly the catalog: one valid file per tool, no
// leftovers of removed tools.
func TestGoldenIsTheCatalog(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			t.Errorf("unexpected entry %s in %s", e.Name(), goldenDir)
			continue
		}
		data, err := os.ReadFile(filepath.Join(goldenDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var tool struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(data, &tool); err != nil || tool.Name != name {
			t.Errorf("%s: not the snapshot of tool %s (%v)", e.Name(), name, err)
		}
		files = append(files, name)
	}
	slices.Sort(files)
	if names := toolcatalog.Names(); !slices.Equal(files, names) {
		t.Errorf("snapshots %v\n   catalog %v", files, names)
	}
}
