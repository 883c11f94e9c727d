package adp

// dialect says which rules judge an event.
//
// A host enforces the current rules (those of the reference SDK 0.12.6).
// A reader — a connector verifying what it syncs, an archive verifier —
// judges each record by the union of the current rules and the 0f87fee
// drafts' (dialect historical): a record either set accepts is accepted, so a
// room written by an older host, or by a current one, verifies. The union is
// taken rule by rule where the rules differ:
//
//   - payload shapes: a value either kernel schema accepts (policy
//     observer_allowed, type definitions with version, prefixed pack
//     digests, custom type names under message., open roles in a private
//     room);
//   - blank strings: only what both call blank is blank (the older drafts
//     trimmed Unicode white space, which leaves U+FEFF);
//   - direct joins: an open role under either default (the older default
//     for public rooms was speaker and observer, and applied to public rooms
//     only);
//   - external packs: the pack whose id is the import URL, else (older
//     hosts) every type of the document;
//   - registered pack payloads: valid under the current or the 0f87fee
//     definition of the type.
//
// The head rule needs no union: a message based on the head of the older
// rule is never behind the current head.
type dialect uint8

const (
	current dialect = iota
	historical
)
