// Package discourse is the connector's Agent Discourse module: the room
// tools of the local connector spec (seeds/000, sections 4.1–4.5) and the
// SDK 0.12.6 Discourse extras, one exported method per tool (declared in
// tools.go), each taking the MCP session it serves (SessionID) and the
// tool's input, and returning the tool's structured result or an
// *engine.Error with a stable code (ADP and Agent Identity codes and data
// are kept as hosts send them). The MCP layer validates inputs against
// schemas/tools and serves the results; every result matches the tool's
// output schema.
//
// The module is built on the engine (host/engine) of one Agent ID, which
// holds the signer, the state (host/store, SQLite, one database per Agent
// ID), the signing pipeline and the gate: every tool checks the room host's
// discourse.read or discourse.write grant before it reads or writes
// anything, and every request to a host carries that grant. Records are
// verified and materialized by host/room on the rules of host/proto/adp;
// hosts are reached through host/client.
//
// # Reads and sync
//
// Rooms are keyed by (host, room_id). A room is opened from its host (room
// resource, then history pages after the last verified record, each page
// verified — record hash, link, envelope hash, strict signature, every ADP
// rule at the record's accepted_at — and applied in one transaction with
// its timeline items, inbox items and the materialized snapshot). Signatures
// of the next page are checked in parallel while the current page is
// applied. A record that fails marks the room (SyncState.verification);
// nothing after it is applied and no write is made until a refresh resyncs
// cleanly. Start keeps every room the agent is an active member of, and
// every room opened with subscribe, live in the background: an SSE stream
// per room up to Options.MaxStreams (subscribe first, then recover the gap
// from history, de-duplicated by seq), polling beyond, reconnecting with
// backoff; room.join_request and room.agent_status items feed the reviewer
// inbox and the status cache.
//
// # Presented heads and writes
//
// Each MCP session has a presented head per room — the head its agent has
// actually seen (room_open, room_state, a contiguous unfiltered timeline
// read, a held or rejected write, draft_get, or its own write accepted on
// top of it) — and it is the default base of that session's writes, so the
// host checks freshness against what the agent read. Writes are built
// inside (actor, created_at, nonce, base, mentions at the top level,
// references in the payload), checked locally before anything is signed
// (ADP rules, plugin validators, a token bucket per room and kind mirroring
// host quotas), then signed with a nonce allocated in the same transaction
// that stores the envelope in the outbox. Head-bound and contract writes
// whose base is no longer the head follow on_head_mismatch (hold as a
// HeldDraft with the changes, reject, or send_anyway with at most
// MaxAutoResigns re-signs); signal writes are never held. An envelope whose
// outcome is unknown stays in the outbox and is resubmitted — an exact
// resubmission is idempotent on the host — or resolved from history.
//
// # Concurrency
//
// Calls are safe from many goroutines and sessions. Writes of one room are
// serialized in the process, and signing and submitting are serialized per
// Agent ID so hosts see its nonces in order. Several processes may share a
// home and Agent ID: nonces are allocated in IMMEDIATE transactions, inbox
// claims and presented heads live in the database, and a record batch is
// applied only at the position it was verified against (a record another
// process applied first is skipped, never applied twice).
//
// # Plugins
//
// The extension points are host/plugin's interfaces: plugin.Validator runs
// on proposed events before signing (a failing one refuses writes of its
// types only), plugin.Watcher turns verified record batches into
// room.event.custom inbox items (completed and bounded by the connector),
// plugin.ToolProvider adds tools whose event proposals, when the provider
// may propose them (plugin.Proposer), go through the normal write path;
// plugin.Scoper names the records their room contexts carry, filled from
// the store. Options.Plugins wires every WebAssembly plugin of a
// host/plugin registry in directly (a *plugin.Plugin is all of them) and
// expands their type packs in room_create and type.define before signing;
// Go extensions implement the same interfaces.
package discourse
