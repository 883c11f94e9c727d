// Package room turns server records into verified local state: it verifies
// each record (record shape and hash, pre_hash link, envelope hash, strict
// signature, and every ADP acceptance rule evaluated at the record's
// accepted_at through host/proto/adp), applies it to the materialized room, and
// computes everything it causes — the timeline item, the inbox items of the
// connector spec (4.2), the active turn — as plain values the caller writes
// to its store in one transaction.
//
// It is pure: no I/O, no clock, no store. The ADP rules themselves live in
// host/proto/adp; this package only sequences them for a reader and projects the
// result for agents (TimelineItem, InboxItem, ActiveTurn, MemberView).
//
// Verification is the expensive part of a catch-up sync, so Process checks
// record hashes and envelope signatures of a batch in parallel before the
// sequential pass that needs the room state (links, freshness, membership,
// registry, payload schemas) and applies the records in order. The first
// record that fails stops the batch: the records before it are applied, the
// failing one and everything after it are not, and the Result says why.
package room
