// Package client talks to Agent Protocols services — ADP hosts, Agent
// Profile services and Agent Mail relays — over HTTPS: only configured origins, only https, the
// host's own CA file when one is configured, no redirects, a timeout on every
// request and bounded response sizes.
//
// # Hosts
//
// A Host is one configured ADP host as seen by one agent: its origin, an
// *http.Client that trusts the host's CA (NewHTTPClient), and the agent's
// identity.Signer, used only to mint a fresh request JWT for every
// authenticated request (never stored, returned or logged). Endpoint URLs
// come from the host's discovery document (cached; read again only after a
// network error, a 429 or a 5xx) and must be on the configured origin; when
// the document lists no rooms endpoint the default /v1 paths are used.
//
// Reads are retried with exponential backoff and jitter on network errors,
// 429 (honouring Retry-After within bounds) and 5xx, with bounded attempts
// and total time. Writes — POSTs of signed envelopes — are never retried
// here: a failure is returned to the caller, which resubmits the exact
// envelope from its outbox (an exact resubmission is idempotent on the
// host). A *NetworkError from a write means the outcome is unknown.
//
// Every service error is an *Error carrying the service's code, message and
// data exactly as sent, plus Max-Seen-Nonce and Retry-After. A response the
// service sent that cannot be used (malformed, oversized, wrong shape) is a
// *ResponseError. Network failures are *NetworkError.
//
// Records (from history pages, write responses and live streams) are parsed
// strictly with adp.RecordFromValue — shape and record hash — and are NOT
// otherwise verified: envelope hashes, signatures, links and room rules are
// the caller's (host/room).
//
// # Archives
//
// Host.Archive reads the manifest (ADP 18); Host.DownloadArchive follows its
// links as SDK 0.12.6 lays them out — formats.jsonl, one record per line,
// parsed as it streams in, and every manifest.packs[].url — and returns
// everything adp.VerifyArchive needs offline (Archive.Verify). Older
// apconnect hubs' self-contained JSON Lines (manifest, pack lines, records)
// are read too.
//
// # Live streams
//
// Host.Live opens the SSE stream of a room (ADP 16). Stream.Next returns
// room.event records, room.agent_status and room.join_request notices; a
// stream with no bytes (not even a heartbeat comment) for the idle timeout is
// reported dead with ErrStreamIdle. Hosts close a stream when its request
// JWT expires (SDK 0.12.6); Next takes such a clean close as "subscribe again
// with a fresh JWT" and returns a KindResubscribed item, after which the
// caller reads the gap from history. Reconnecting after any other end and
// recovering the gap (ADP 16.3) is the caller's; Backoff helps pace
// reconnects.
//
// # Profile services
//
// ProfileService is the Agent Profile 1.0 client (section 7): profile reads,
// batch reads, signed updates and the signed event history.
//
// # Mail relays
//
// MailRelay is the Agent Mail client of one relay origin, as the reference
// SDK 0.12.6's MailClient: fixed paths, no redirects, every success from the
// relay's origin with its exact status and an application/json body, owner
// JWTs for the owner calls, and every answer checked with host/proto/mail.
//
// # Knowledge services
//
// KnowledgeService is the Agent Knowledge 1.0 client, as the SDK's
// KnowledgeClient: the discovery document is required and names every
// endpoint; submissions, single reads, exact queries (Traverse follows a
// query's pages under one checkpoint), batch reads and ranked search, each
// answer checked with host/proto/knowledge's response validators.
package client
