// Package profile is the local hub's Agent Profile 1.0 service: signed
// profile.update writes through the hub's live-write pipeline with the
// durable nonce comparison the protocol requires, the materialized profile
// document of each Agent ID, batch reads, event history newest first, and the
// /.well-known/agent-profile discovery document.
//
// Every protocol rule comes from host/proto/profile (imported as rules): the
// event type, the payload validation (the protocol's JSON Schema and the
// rules it states in prose), the field limits of section 4.2 and the
// document an update materializes. The service adds what a host owns:
// storage (its migration group, "profile"), the update quota, the body and
// page limits, and the endpoints. Spec registers it with the hub.
package profile
