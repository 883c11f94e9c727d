// Package discourse is the Agent Discourse 1.0 host of the local hub
// (registered with it by Spec): every endpoint of ADP section 15 (rooms,
// records, join requests, public discovery, /v1/me/rooms, agent status,
// archives), the SSE live stream of section 16 and the discovery document
// of 15.1, in the wire shapes the reference SDK 0.12.6 reads.
//
// It is a development and test host for one machine — the peer the
// connector's tests run against — and it is strict: every rule comes from
// host/proto/adp, the one statement of the ADP rules the connector shares, and the
// hub adds only what a host owns (room ids, acceptance time, storage, quotas
// counted over time, join request lifecycles, live fan-out).
//
// # Writes
//
// room.create (POST /v1/rooms), every other room event (POST
// /v1/rooms/{id}) and join requests (POST /v1/rooms/{id}/join-requests) run
// through the hub's live-write pipeline (Agent Identity 6.1) and then, in
// the pipeline's IMMEDIATE transaction, under the room's lock: adp Check,
// the per-agent quota of the event's kind, adp.NewRecord, the record row,
// adp Apply on the in-memory room, and the room row (a new snapshot when the
// record changed room state, or every SnapshotEvery head-bound records).
// The room lock is held until the transaction has committed and the record
// has been fanned out, so readers and live subscribers never see an
// uncommitted record and every stream receives a room's records in seq
// order. A write that does not commit evicts the in-memory room, which is
// reloaded (snapshot plus the records after it) on next use.
//
// # Endpoints as SDK 0.12.6 reads them
//
// The discovery document names "rooms" (/v1/rooms) and "my_rooms"
// (/v1/me/rooms), and profile as the closed {service} of the hub's own
// Agent Profile service. GET /v1/rooms is the public room list (ADP 17
// filters: status, tag, keyword, creator, starts_after, ends_before,
// language, limit, cursor) and POST /v1/rooms is room.create. GET
// /v1/rooms/public, the older path, stays as an alias of the list for
// clients written against the 0f87fee drafts; discovery no longer names
// it. Each /v1/me/rooms item is the room resource plus the agent's
// membership and role (and the hub's is_creator, perspective and
// join_request). The archive manifest's formats.jsonl is records only, one
// per line, and its packs[] serve every imported external pack document
// byte for byte at /v1/rooms/{id}/archive/packs/{n}; all archive reads take
// a request JWT, which rooms that are not public require. A live stream
// ends when its request JWT expires (or after MaxStreamLifetime, if
// sooner). The hub tolerates 60 s of clock skew on request JWTs where the
// SDK tolerates none; that is its policy, and accepts everything the SDK
// accepts.
//
// # Time
//
// Room state is derived from the hub clock (adp StatusAt): activation at
// start_time and ending at end_time produce no record. A housekeeping loop
// only closes the live streams of rooms that ended, fixes the archive's
// generation time of rooms that ended by time, and forgets expired agent
// statuses.
//
// # Storage
//
// The service's migration group in hub.db ("discourse", migrations.go)
// holds the rooms with their snapshots, every record, join requests,
// external pack documents and the agent/room index behind /v1/me/rooms. Transient agent status (16.4) lives in memory only:
// it is a short-lived hint, never archived.
package discourse
