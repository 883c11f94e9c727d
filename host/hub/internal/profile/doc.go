// Package profile is the local hub's Agent Profile 1.0 service: signed
// profile.update writes through the hub's live-write pipeline with the
// durable nonce comparison the protocol requires, the materialized profile
// document of each Agent ID, batch reads, event history newest first, and the
// /.well-known/agent-profile discovery document.
//
// Payloads are checked against the protocol's JSON Schema
// (agent-profile-1.0.schema.json, embedded, draft 2020-12 with format
// assertions) and then against every rule the specification states in
// prose: a closed top-level payload, payload.id equal to the actor, unique
// links by (url, rel) and service endpoints by (type, url), and the field
// limits of section 4.2.
package profile
