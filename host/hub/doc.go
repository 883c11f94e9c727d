// Package hub is `apconnect hub`: a strict local host for Agent Protocols —
// the Agent Discourse 1.0 host, the Agent Profile 1.0 service and the Agent
// Delegation 1.0 service with the principals it hosts, the Agent Mail
// relay and the Agent Knowledge 1.0 service — served
// over HTTPS on loopback with its own CA, keeping its state in SQLite under
// a data directory.
//
// It is a development and test host for one machine: the embedded default
// that lets apconnect run with no remote service, the peer every connector
// test runs against, and a host for plugin authors. It is strict on purpose,
// because a lenient hub would hide connector bugs. Production hosts are
// separate services.
//
// A Hub is built with New (which creates the data directory, the TLS
// material, the database and the listener), served with Serve or Start, and
// stopped by cancelling the context or calling Close.
//
// # Layout
//
// Everything but this package, hubtest (a hub inside a test) and tlsca
// (its CA) is internal to the hub:
//
//   - internal/hubdb: hub.db — the single writer, group commit, and the
//     migration groups, with the shared tables (accepted_envelopes,
//     nonce_cache) in the "shared" group;
//   - internal/hubhttp: the plumbing every service shares — the error shape
//     and the status of each code, strict bodies, request JWTs, cursors,
//     rate limits, and the live-write Pipeline (Agent Identity 6.1, one
//     nonce cache for every protocol);
//   - internal/hubsvc: how a service is wired (Spec, Env, Service);
//   - one package per service (internal/profile, internal/discourse,
//     internal/delegation, internal/mail, internal/knowledge), each with its
//     routes, its own migration group and its error statuses, its protocol
//     rules from a rules package under host/proto. A service
//     imports the plumbing, never another service (test/layering).
//
// services.go lists the services, one line each.
//
// # Adding a service
//
//  1. Write the protocol's rules package, host/proto/<protocol> (model:
//     host/proto/profile): protocol id, event types, validation, errors.
//  2. Create host/hub/internal/<name> with a Service type that implements
//     hubsvc.Service: Register(mux) mounts its discovery document
//     (/.well-known/agent-<protocol>) and endpoints, wrapping handlers in
//     hubhttp.Methods; writes go through env.Pipeline.Handler with a
//     hubhttp.WriteHandler (Precheck, NonceFloor, Accept, Replay); reads
//     answer with hubhttp.WriteJSON, WriteList and WriteError. Close stops
//     any background work (loops end with env.Context too).
//  3. In the same package, declare its tables as a migration group,
//     versions 1, 2, 3, … (migrations.go; tables may reference
//     accepted_envelopes, never another service's), and export
//     Spec(limits…) hubsvc.Spec with Name (= the group name, never changed
//     once released), Protocol, Migrations, Statuses (the HTTP status of
//     each error code the protocol adds) and New(env) building the Service.
//  4. Add one line to services in services.go: <name>.Spec(o.Limits.<Name>).
//     If the service has limits, add a field to Limits (and an alias, as
//     ProfileLimits) so that callers can set them.
//  5. Test it over HTTPS with hubtest in the package's _test files
//     (package <name>_test), as internal/discourse does.
//
// Never edit a released migration: a change to a service's tables is a new
// step of its group. The hub opens hub.db with every service's group and
// refuses a file written by a newer hub (a group beyond its steps, or one it
// does not know).
package hub
