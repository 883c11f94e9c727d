// Package knowledge is the Agent Knowledge 1.0 service of the local hub
// (registered with it by Spec): the discovery document
// (/.well-known/agent-knowledge, advertising ranked search in the lexical
// mode), submission, single-event reads, exact queries with stateless
// cursors, ordered batch reads and lexical search, in the wire shapes the
// reference SDK 0.12.6 reads. Every rule comes from host/proto/knowledge,
// which the connector shares; the service adds only what a service owns:
// the sequence, acceptance time, storage and the index.
//
// # Submission
//
// Knowledge events are portable and not live writes (Agent Knowledge
// 8.1), so POST /v1/knowledge/events does not go through hubhttp.Pipeline:
// there is no lower time bound and no nonce cache, exactly as the SDK's
// KnowledgeStore. The envelope is verified outside any transaction
// (rules.ParseEnvelope); then, in one write transaction, an exact
// resubmission returns the stored record unchanged, and otherwise
// rules.CheckSubmission (future skew, dependencies against the retained
// events, size) runs before seq is allocated and the record, its links,
// tags, profile digests and index entry are stored. A refused submission
// changes nothing.
//
// # Reads
//
// Every read runs in one read transaction, so its checkpoint (the greatest
// committed seq) and its records agree. A query's filters are all served by
// columns and tables kept beside each event and are exact; every record is
// checked with rules.Filters.Matches before it is returned all the same.
// The first page fixes the checkpoint and clock; the cursor
// (rules.Cursor) carries them, so no read state is kept.
//
// # Search
//
// Lexical search finds candidates with SQLite FTS5's trigram tokenizer
// over the ASCII-lowercased searchable fields (terms of three or more
// characters go to MATCH, shorter ones to instr; the exact filters to SQL),
// the newest Limits.SearchCandidates of them; ranks them by BM25 over
// substring occurrences (rank.go); and checks them, in rank order, with
// the SDK's match rule (rules.SearchRequest Eligible: the exact filters and
// every term a substring of one field) until the page is full. Coverage is
// exhaustive only when the index returned every candidate and every match
// fits the page; rules.CheckSelection checks the answer before it is sent.
package knowledge
