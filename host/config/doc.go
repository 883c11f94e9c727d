// Package config reads, checks and writes the operator configuration of
// apconnect: the file config.toml in the apconnect home, which names the
// agent identities and their key files, the allowlist of ADP hosts with
// their optional CA files, the local state settings, the loopback HTTP
// listener and the WebAssembly plugins with their grants.
//
// The file is decoded strictly: an unknown key, a value of the wrong type
// and a syntax error are all reported with their line. Every value is then
// checked, and each problem is reported with the path of the offending entry
// (for example "hosts[1].url"). All problems are reported at once, as an
// *Error.
//
// schemas/config.schema.json (JSON Schema draft 2020-12) describes the same
// structure for editors and other tools; a test keeps it and this package in
// agreement.
//
// Only this file says which hosts apconnect talks to and which CA files it
// trusts for them; no tool can change either.
package config
