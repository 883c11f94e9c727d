// Package adp is the one statement of the Agent Discourse Protocol 1.0 rules
// in apconnect. The local hub (a conformant ADP host) and the connector (which
// verifies and materializes the records it syncs) both use it, so they cannot
// disagree.
//
// The rules are those of the published reference SDK, agent-protocols
// 0.12.6, wherever it differs from the 0f87fee drafts (design/PROTOCOL-0.12.md
// lists every difference). A host enforces them as they are. A reader judges
// each record by the union of the current rules and the drafts' (see
// dialect), so histories written by older hosts still verify.
//
// # What it covers
//
//   - Server records and the hash chain (14, 14.1): Record, RecordHash,
//     ParseRecord, CheckLink, VerifyChain, redaction.
//   - Freshness classes and the room head (5.1): Class, ClassOf, CheckBase.
//     Only genesis, contract and control records move the head; messages
//     and signals anchor on any accepted record (messages and control at or
//     after the head).
//   - The type system (12): built-in types, TypeDef, Registry, declarations
//     with registered packs (bundled copy of 1.0.packs.json) and external
//     packs (PackResolver, HTTPSPackFetcher, digest check), the type schema
//     profile (CheckTypeSchema, CheckPattern) and payload validation with
//     compiled schemas cached by digest (SchemaCache).
//   - Permissions (13), policy (8.3) and lifecycle derived from time (7).
//   - The room state machine: Room, with CheckCreate/NewRoom for room.create,
//     Check for every other write, CheckJoinRequest for join requests, and
//     Apply for accepted records; VerifyRecord/VerifyGenesis for readers;
//     Replay and VerifyArchive for archives (18).
//   - Replayed envelopes (replayed.go): a reader refuses a history in which
//     two records carry the same signed envelope (CheckReplayed,
//     CheckOptions.Envelopes), which no conformant host writes.
//   - Limits (20) and the error codes of section 19 (Error).
//
// # How a host uses it
//
// For room.create: verify the envelope as a live write (identity), then
// CheckCreate, assign a room id, build the record with NewRecord and
// materialize it with NewRoom. For every other write, under an exclusive
// lock on the room: verify the envelope (identity), Room.Check with the host
// clock as CheckOptions.Now, a RecordLookup over the room's records and a
// JoinRequestLookup over its pending requests; then NewRecord with
// Room.Last.Link(), persist, and Room.Apply. Join requests use
// Room.CheckJoinRequest; their lifecycle (pending, superseded, expired) is
// host state the caller keeps. Rules.PrefetchPacks resolves external packs
// before taking the lock.
//
// # How a reader uses it
//
// Parse records with ParseRecord, then VerifyGenesis for seq 1 and
// Room.VerifyRecord followed by Room.Apply for each later record, with
// CheckOptions.TrustUnknownAnchors when only a window of record hashes is
// kept, and CheckOptions.Envelopes over every event hash the room's verified
// records carry (not only the window's), so a replay of an envelope recorded
// long ago is still refused. Snapshot the Room as JSON between syncs: it is plain data and round
// trips losslessly.
//
// Nothing here checks an envelope's timestamp window or nonce, and Check does
// not verify hashes or signatures: those are the identity package's and the
// caller's.
package adp
