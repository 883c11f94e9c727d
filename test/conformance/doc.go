// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, from npm) against `apconnect serve`,
// at MCP 2025-11-25 and 2026-07-28. Its test is behind the "conformance"
// build tag, because it needs the npm packages of this directory: run it
// with `make conformance`, which installs them with `npm ci` first.
package conformance
