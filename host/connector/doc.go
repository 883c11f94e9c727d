// Package connector is the connector of one Agent ID: the engine
// (host/engine) and one module per protocol (host/connector/discourse,
// host/connector/profile, …), built from the operator's configuration and
// the identity's key. It serves the tools that span protocols —
// identity_current and hosts_list (the configured origins and their
// grants), services_list and schema_get (each module answers for its
// protocol), inbox_next and inbox_ack (the engine's inbox, whatever module
// raised the item) — and hands the MCP layer every module's tool
// declarations (StandardTools), the plugins' tools and the composed server
// instructions. Preflight is the MCP layer's fast refusal of a call whose
// input names an origin that lacks the tool's capability.
//
// Adding a protocol: see docs/ARCHITECTURE.md, "Adding a protocol".
package connector
