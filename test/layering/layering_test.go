// Package layering holds the test that keeps apconnect's package layering
// (docs/ARCHITECTURE.md): which package may import which.
package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "apconnect/"

// layers lists the packages of each layer, lowest first; a package matches
// the longest prefix listed (a trailing "/" covers a subtree). A package
// may import packages of lower layers only, except where within lets it
// import a sibling of its own layer.
var layers = [][]string{
	// 0: data and small leaf helpers: the grant vocabulary, the inbox item.
	{"schemas", "schemas/", "host/internal/", "host/text", "host/schemaerr", "host/termsafe", "host/hub/tlsca", "host/plugin/internal/wasmguard",
		"host/plugin/internal/gobuild", "host/plugin/internal/guestbuild", "host/capability", "host/inbox"},
	// 1: Agent Identity, which knows no protocol.
	{"host/identity"},
	// 2: keys, operator configuration, each protocol's rules (host/proto/…:
	// none imports another).
	{"host/keystore", "host/config", "host/proto/"},
	// 3: the HTTPS client, local state, materialized rooms, the tool catalog.
	{"host/client", "host/store", "host/room", "host/room/", "host/toolcatalog"},
	// 4: the plugin runtime and its test harness.
	{"host/plugin", "host/plugin/plugintest", "host/plugin/internal/precompile"},
	// 5: loading the configured plugins.
	{"host/pluginhost"},
	// 6: the connector's engine and, beside it and never importing it, the
	// local hub.
	{"host/engine", "host/hub", "host/hub/"},
	// 7: one connector module per protocol (none imports a sibling).
	{"host/connector/"},
	// 8: the connector, which builds the modules, and the modules' shared
	// test helpers; beside it, waking the agent (the resident connector's
	// background work, built on the connector).
	{"host/connector", "host/connector/internal/connectortest", "host/wake"},
	// 9: the MCP surface.
	{"host/mcpserver", "host/mcpserver/", "host/opview"},
	// 10: the binary, tests, examples and the first-party plugin tests.
	{"cmd/", "test/", "examples/", "plugins"},
}

// within lists the imports allowed inside one layer: importer → imported.
var within = map[string][]string{
	"host/schemaerr": {"host/text"},
	// The hub's own order: hubdb < hubhttp < hubsvc < each service < hub <
	// hubtest. A service (any other host/hub/internal/X) imports the
	// plumbing only, never another service; host/hub imports the plumbing
	// and every service (mayImportWithin).
	"host/hub/internal/hubhttp":             {"host/hub/internal/hubdb"},
	"host/hub/internal/hubsvc":              {"host/hub/internal/hubdb", "host/hub/internal/hubhttp"},
	"host/hub/hubtest":                      {"host/hub"},
	"host/mcpserver/internal/gendocs":       {"host/mcpserver"},
	"host/connector/internal/connectortest": {"host/connector"},
	"host/wake":                             {"host/connector"},
	"host/plugin/plugintest":                {"host/plugin"},
	"host/plugin/internal/precompile":       {"host/plugin"},
	"examples/demo":                         {"examples/demo/scenario"},
}

// hubPlumbing are the hub's shared packages; every other package under
// host/hub/internal/ is a service.
var hubPlumbing = []string{"host/hub/internal/hubdb", "host/hub/internal/hubhttp", "host/hub/internal/hubsvc"}

// hubService reports whether path is a hub service package.
func hubService(path string) bool {
	return strings.HasPrefix(path, "host/hub/internal/") && !slices.Contains(hubPlumbing, path)
}

// mayImportWithin reports whether from may import to of its own layer:
// what within lists, and for the hub's services the rule that needs no
// entry per service (a service imports the plumbing; host/hub imports the
// plumbing and the services).
func mayImportWithin(from, to string) bool {
	switch {
	case hubService(from):
		return slices.Contains(hubPlumbing, to)
	case from == "host/hub":
		return slices.Contains(hubPlumbing, to) || hubService(to)
	}
	return slices.Contains(within[from], to)
}

// testPeers are what any test may use, whatever its layer: the real peers
// and harnesses the tests run against (a client test talks to a real hub;
// a plugin tool is tested under the real runtime).
var testPeers = []string{"host/hub", "host/hub/hubtest", "host/plugin/plugintest", "host/room/roomtest", "test/catalogcheck",
	// A module's tests run it inside the whole connector.
	"host/connector", "host/connector/internal/connectortest",
	// The config's tests hold its data (inbox kinds, default budgets) to
	// their sources.
	"host/room"}

// denied are imports the layer order allows but the design forbids.
var denied = map[string][]string{
	// The MCP surface reads state through the engine, never around it.
	"host/mcpserver": {"host/store", "host/config", "host/client", "host/room", "host/proto/adp", "host/proto/profile",
		"host/proto/mail", "host/proto/knowledge", "host/proto/delegation"},
	// The operator's read-only view (layer 9, beside the MCP surface) reads
	// the connector's local views and the store; it never holds the engine
	// (the signing pipeline), a key or a client.
	"host/opview": {"host/engine", "host/keystore", "host/client", "host/mcpserver"},
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// listPackages runs go list over the module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "apconnect/...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// layerOf returns a package's layer and the entry that matched (-1: none).
func layerOf(path string) (int, string) {
	best, bestLen, entry := -1, -1, ""
	for i, l := range layers {
		for _, e := range l {
			match := path == e || (strings.HasSuffix(e, "/") && strings.HasPrefix(path, e))
			if match && len(e) > bestLen {
				best, bestLen, entry = i, len(e), e
			}
		}
	}
	return best, entry
}

func TestLayering(t *testing.T) {
	for _, p := range listPackages(t) {
		from := strings.TrimPrefix(p.ImportPath, module)
		lf, _ := layerOf(from)
		if lf < 0 {
			t.Errorf("%s is in no layer: add it to the layering test and docs/ARCHITECTURE.md", from)
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if !strings.HasPrefix(imp, module) {
					continue
				}
				to := strings.TrimPrefix(imp, module)
				lt, _ := layerOf(to)
				switch {
				case lt < 0:
					t.Errorf("%s imports %s, which is in no layer", from, to)
				case strings.HasPrefix(to, "host/hub/internal/") && !strings.HasPrefix(from, "host/hub/") && from != "host/hub":
					// The compiler enforces it too; the message says why.
					t.Errorf("%s imports %s: nothing outside the hub uses its internals (its services and their plumbing); use host/hub, host/hub/hubtest or a rules package under host/proto", from, to)
				case slices.Contains(denied[from], to) && !test:
					t.Errorf("%s must not import %s", from, to)
				case test:
					// Tests may use anything below them or beside them, and
					// the test peers; never what is built on them.
					if lt > lf && !slices.Contains(testPeers, to) {
						t.Errorf("a test of %s (layer %d) imports %s (layer %d): a back-arrow", from, lf, to, lt)
					}
				case lt == lf:
					if !mayImportWithin(from, to) {
						t.Errorf("%s imports %s of its own layer (%d): not allowed", from, to, lf)
					}
				case lt > lf:
					t.Errorf("%s (layer %d) imports %s (layer %d): a back-arrow", from, lf, to, lt)
				}
			}
		}
		check(p.Imports, false)
		check(append(slices.Clone(p.TestImports), p.XTestImports...), true)
	}
}

// TestLayersNameRealPackages keeps the table honest: every entry matches a
// package of the module.
func TestLayersNameRealPackages(t *testing.T) {
	var paths []string
	for _, p := range listPackages(t) {
		paths = append(paths, strings.TrimPrefix(p.ImportPath, module))
	}
	for _, l := range layers {
		for _, e := range l {
			if !slices.ContainsFunc(paths, func(p string) bool {
				return p == e || (strings.HasSuffix(e, "/") && strings.HasPrefix(p, e))
			}) {
				t.Errorf("layer entry %q matches no package", e)
			}
		}
	}
}
