// Package knowledge is the one statement of the Agent Knowledge 1.0 rules
// (agent-knowledge/1.0) in apconnect, as the reference SDK agent-protocols
// 0.12.6 speaks them. The hub's knowledge service and the connector's
// knowledge module both use it, so they cannot disagree. It does no I/O and
// reads no clock: every time is passed in, in Unix milliseconds.
//
// The SDK is newer than every stored spec text and wins where they differ: a
// retraction carries only {target, reason, extra?} (no license), and text
// goes only through ranked search (the query parameter q is gone).
//
// # Files
//
//   - protocol.go: the protocol, event types, kinds, relations, verdicts,
//     search modes and limits.
//   - errors.go: the six Knowledge error codes, the Agent Identity codes
//     repeated, and the two client-side codes (invalid_response,
//     invalid_discovery).
//   - schema.go: the bundled knowledge.schema.json (schema/, verbatim, see
//     schema/SOURCE.md), compiled once with its ECMA patterns translated for
//     RE2; ValidateSchema and SchemaErrors check a value against one of its
//     $defs.
//   - jsonvalue.go: strict-JSON shape checks and the integer reading both SDKs
//     share (1.0 is an integer).
//   - url.go: the HTTPS URL rule of licenses, evidence and profiles.
//   - event.go: ValidateEnvelope and ParseEnvelope (schema, strict JSON,
//     hash and signature, canonical 32-byte ids, HTTPS URLs, unique profile
//     digests), ValidID, EnvelopeSize, NewEvent, VerifyEvidence.
//   - payload.go: ValidatePayload, the connector's check of a payload before
//     it signs (up to 16 {path, message} errors in data.errors).
//   - deps.go: Dependencies, Target and CheckDependencies (missing_dependency,
//     invalid_target).
//   - record.go: the acceptance record {envelope, accepted_at, seq}, the
//     submission checks a service runs after the envelope check
//     (CheckSubmission: future skew, dependencies, size), and the flattened
//     Item the connector's tools return.
//   - query.go: Filters, Query, ParseQuery (HTTP parameters), QueryFromValue
//     (JSON) and Matches, the exact filter predicate; ParseBatchRequest and
//     ParseReadJSON for read bodies.
//   - cursor.go: the stateless cursor checkpoint.as_of.last_seq.digest,
//     QueryDigest, and Query.Window, which a service uses to read a page.
//   - search.go: TextTerms and TextMatches (the lexical term rules),
//     ParseSearchRequest and CheckSelection (what a service may return).
//   - status.go: Status, the connector's lifecycle view of one item.
//   - response.go: the client-side checks of query, batch and search
//     responses and of records, and PageTracker.
//   - discovery.go: the discovery document, its builder and validator.
//
// # How a service uses it
//
// Submission: ParseEnvelope (or ValidateEnvelope on a strictly parsed value);
// an exact resubmission returns the stored record; otherwise CheckSubmission
// with the service clock, a Lookup over the retained items and the limits;
// then allocate seq and store NewRecord. Knowledge events never consult a
// nonce cache. Queries: ParseQuery, Query.Window with the current seq and
// clock, Matches over the records in the window, Window.NextCursor when the
// page is full. Batches: ParseBatchRequest. Search: ParseSearchRequest with
// the advertised modes, then CheckSelection before answering.
//
// # How a client uses it
//
// ValidatePayload before signing, ValidateEnvelope after; ValidateDiscovery
// on the well-known document; ValidateRecord, ValidateQueryResponse,
// ValidateBatchResponse and ValidateSearchResponse on answers, and
// PageTracker over a traversal. Status reduces a target query to the
// lifecycle the connector reports.
package knowledge
