// Package pluginschema holds the JSON Schemas (draft 2020-12) of every
// envelope of the apconnect plugin ABI, version 1, as data embedded in the
// binary. docs/PLUGINS.md describes the ABI; host/plugin compiles these
// schemas and validates each envelope against them.
//
// Every schema's $id is BaseURI plus its file name, and the envelopes refer to
// the shared definitions in common.json by relative reference, so a compiler
// given all files as resources resolves everything without network access.
package pluginschema

import (
	"embed"
	"io/fs"
	"slices"
)

// BaseURI prefixes every schema's $id. The .invalid top-level domain (RFC
// 6761) guarantees that nothing ever resolves it over a network.
const BaseURI = "https://apconnect.invalid/schemas/plugin/"

//go:embed *.json
var files embed.FS

// FS returns the embedded schema files, one per envelope plus common.json.
func FS() fs.FS { return files }

// Files returns the names of the embedded schema files, sorted.
func Files() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		// The embedded directory always exists; a failure is a build defect.
		panic(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// Read returns the bytes of one embedded schema file, e.g. "watch.input.json".
func Read(name string) ([]byte, error) { return files.ReadFile(name) }

// ID returns the $id of an embedded schema file.
func ID(name string) string { return BaseURI + name }
