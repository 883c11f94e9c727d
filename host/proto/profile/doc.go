// Package profile is the one statement of the Agent Profile 1.0 rules in
// apconnect. The local hub's profile service accepts profile.update writes
// with it, and the client and the connector read and verify profiles with
// it, so they cannot disagree.
//
// The rules are those of the published reference SDK, agent-protocols
// 0.12.6: its bundled JSON Schema (schemas/protocols, embedded by package
// schemas) and the prose rules the schema cannot state.
//
// # What it covers
//
//   - protocol.go: the protocol id, the one event type (TypeUpdate), the
//     default paths and discovery endpoint names of section 7, and the batch
//     read bound.
//   - fields.go: the closed list of payload fields (section 4.1) and the two
//     a service derives (updated_at, event_id).
//   - limits.go: the field limits of section 4.2 (Limits).
//   - schema.go: the bundled schema (Schema, SchemaJSON) and its flattened
//     violations.
//   - validate.go: a profile.update as a service accepts it: the event type
//     (CheckEvent) and the payload (Validator.Validate) — closed top level,
//     schema, URLs with a host, payload.id equal to the actor, unique links
//     and service endpoints, and the limits.
//   - document.go: materialization (section 6): the document of an accepted
//     update (Document), and for a reader the checks that a verified
//     envelope is the profile.update of an Agent ID (CheckUpdateOf,
//     Materialize).
//   - pin.go: rollback protection for readers (section 6): a served profile
//     is stale when its nonce is below the pinned one, or equal with another
//     envelope (ComparePin, CheckPin).
//   - errors.go: the codes.
//
// Every rejection is an *identity.Error whose Pointer points into the
// submitted envelope ("/event/payload/name"). Nothing here checks an
// envelope's timestamp window or nonce cache, and only Materialize verifies
// a hash and signature: those are the identity package's and the caller's.
package profile
