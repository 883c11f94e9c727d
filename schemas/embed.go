// Package schemas holds apconnect's JSON Schemas as data and embeds them.
//
// The files are the single source of truth: Go code loads them from here
// instead of restating them. Layout:
//
//	tools/<tool_name>.json   one file per standard agent_protocols_* MCP tool
//	tools/defs.json          shapes shared by the tool files ($ref targets)
//	config.schema.json       the operator configuration
//	plugin/                  the plugin ABI envelopes (package pluginschema)
//	protocols/               the Agent Discourse 1.0 and Agent Profile 1.0
//	                         JSON Schemas of the reference SDK 0.12.6, served
//	                         by agent_protocols_schema_get
package schemas

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed tools/*.json protocols/*.json config.schema.json
var files embed.FS

// FS returns the embedded schema files, rooted at schemas/.
func FS() fs.FS { return files }

// Tools returns the embedded schemas/tools directory: one <tool_name>.json
// per standard MCP tool plus defs.json with their shared shapes.
func Tools() fs.FS { return mustSub(files, "tools") }

// Protocols returns the embedded schemas/protocols directory: the protocol
// JSON Schemas, named <protocol>-<version>.schema.json (see ProtocolSchema).
func Protocols() fs.FS { return mustSub(files, "protocols") }

// ProtocolSchema returns the JSON Schema document of a protocol such as
// "agent-discourse/1.0", or fs.ErrNotExist when none is embedded.
func ProtocolSchema(protocol string) ([]byte, error) {
	name, version, ok := strings.Cut(protocol, "/")
	if !ok || name == "" || version == "" || strings.ContainsAny(name+version, "/\\") {
		return nil, fs.ErrNotExist
	}
	return fs.ReadFile(files, "protocols/"+name+"-"+version+".schema.json")
}

// ConfigSchemaFile is the path of the operator configuration schema in FS.
const ConfigSchemaFile = "config.schema.json"

// ConfigSchema returns the operator configuration JSON Schema.
func ConfigSchema() ([]byte, error) {
	return fs.ReadFile(files, ConfigSchemaFile)
}

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic("schemas: " + err.Error())
	}
	return sub
}
