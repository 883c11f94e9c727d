// Package store is the connector's durable state: one SQLite database per
// Agent ID under the state directory, holding everything a restart or a
// second process on the same home needs — the nonce, the rooms with their
// verified record window and materialized snapshot, timeline items, read
// cursors, presented heads per MCP session, inbox items with their claims,
// held drafts, join requests, agent statuses, verified profiles, the outbox
// of signed envelopes, the discovery cache of hosts, and the leases, claims
// and log of waking the agent (wake.go, read by RecentWakes and Leases).
//
// # Concurrency
//
// The database runs in WAL mode. Every write goes through (*Store).Write,
// which runs one IMMEDIATE transaction on a single writer connection: writes
// of one process are serialized in Go, writes of several processes by
// SQLite's write lock (busy_timeout waits for it), and a read-then-write
// transaction never fails with SQLITE_BUSY. Reads use a small read-only pool
// (Read for single queries, View for a consistent snapshot across several).
//
// Cross-process guarantees follow from doing the decisive read and the write
// in one IMMEDIATE transaction: a nonce is allocated by reading and bumping
// the stored one (AllocateNonce), a record batch is applied only when the
// room is still at the position it was verified against (ApplyBatch returns
// ErrConflict otherwise, so a record another process applied is never applied
// twice), and an inbox claim is taken only on items that are ready.
//
// # Cost
//
// Every hot query is answered from an index by range or point lookup: the
// record window of a room is keyed by (room, seq), the inbox by state and
// priority, and counters (pending inbox items per room and in total) are
// maintained in the same transactions that change them. No call scans all
// rooms or a room's whole history.
//
// The store knows nothing about ADP semantics: records, timeline items,
// inbox items and drafts are opaque JSON it indexes by the columns the
// connector gives it. host/room computes them; host/connector decides.
package store
