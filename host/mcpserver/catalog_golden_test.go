package mcpserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

const goldenFile = "testdata/catalog.golden.json"

// marshalCatalog renders the catalog as served (tools/list order: by name)
// as indented JSON.
func marshalCatalog(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Catalog()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCatalogGolden fails when the served catalog changes without its
// snapshot. Review the diff, then refresh the snapshot with
//
//	UPDATE_GOLDEN=1 go test ./host/mcpserver -run TestCatalogGolden
func TestCatalogGolden(t *testing.T) {
	got := marshalCatalog(t)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", goldenFile, len(got))
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v; create it with UPDATE_GOLDEN=1 go test ./host/mcpserver -run TestCatalogGolden", err)
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
		t.Fatalf("the served tool catalog differs from %s at line %d:\n got: %s\nwant: %s\n"+
			"If the change is intended, run UPDATE_GOLDEN=1 go test ./host/mcpserver -run TestCatalogGolden and commit the snapshot.",
			goldenFile, line+1, g, w)
	}
}

// The snapshot is valid JSON holding the same tools Catalog serves.
func TestGoldenIsTheCatalog(t *testing.T) {
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	names := Names()
	if len(tools) != len(names) {
		t.Fatalf("snapshot has %d tools, catalog %d", len(tools), len(names))
	}
	for i, tool := range tools {
		if tool.Name != names[i] {
			t.Errorf("snapshot tool %d is %s, want %s", i, tool.Name, names[i])
		}
	}
}
