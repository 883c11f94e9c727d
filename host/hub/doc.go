// Package hub is `apconnect hub`: a strict local host for Agent Protocols —
// the Agent Discourse 1.0 host (package discourse) and the Agent Profile 1.0
// service (package profile) — served over HTTPS on loopback with its own CA,
// keeping its state in SQLite under a data directory.
//
// It is a development and test host for one machine: the embedded default
// that lets apconnect run with no remote service, the peer every connector
// test runs against, and a host for plugin authors. It is strict on purpose,
// because a lenient hub would hide connector bugs. Production hosts are
// separate services.
//
// A Hub is built with New (which creates the data directory, the TLS
// material, the database and the listener), served with Serve or Start, and
// stopped by cancelling the context or calling Close. Services mount their
// routes on it with Handle and share its Pipeline (live writes), Auth
// (request JWTs), RateLimiter and DB.
package hub
