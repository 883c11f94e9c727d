// Package engine is the protocol-neutral core under the connector's
// protocol modules (host/connector/discourse, …/profile, …): what every
// protocol shares, written once.
//
//   - engine.go: the Engine of one Agent ID — its state (host/store), clock,
//     logger, the HTTP client of each configured origin — and its
//     background work (outbox resubmission, inbox claim expiry).
//   - gate.go: the Gate. One function answers whether this process may
//     reach an origin with a capability (the operator's [[hosts]] grants,
//     host/capability). It is asked where a request, a request JWT or a
//     signature is made: Need returns a context carrying the grant, and the
//     service clients and the HTTP transport refuse any request whose
//     context carries none for its origin, so a path that forgot to ask
//     reaches nothing.
//   - sign.go: the one signing pipeline, sign → outbox → submit → resolve.
//     One transaction allocates the nonce (one sequence across every
//     protocol and process), signs and stores the outbox entry; one rule
//     for a refused nonce (Max-Seen-Nonce resync, bounded re-signs); an
//     unknown outcome left to the background resubmission.
//   - outbox.go: that resubmission, through the Submitter each module
//     registers for its outbox kinds.
//   - inbox.go: the inbox, whose items come from any module (a room's
//     records, a letter); reading and acknowledging need no grant.
//   - budgets.go: local write budgets every module's writes pass before
//     anything is signed.
//   - errors.go: coded errors. Anything implementing Coded (the rules
//     packages' errors, a service's error response) reaches the agent with
//     its code, message and data, so a new kind of error needs no change
//     here.
//   - module.go: what a module is (Module, Background, Discoverer,
//     SchemaSource, Instructor) and how it declares a tool (ToolSpec).
//
// The engine imports no module; a module imports the engine, never a
// sibling (test/layering).
package engine
