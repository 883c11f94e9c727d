// Package mail is the one statement of the Agent Mail 1.0 rules
// (agent-mail/1.0) in apconnect: HPKE-sealed letters, signed by their
// sender, delivered through relays to a mailbox whose card its owner signs.
// The hub's relay and the connector both use it, so they cannot disagree.
//
// There is no normative text for the version apconnect speaks: the rules
// are those of the reference SDK agent-protocols 0.12.6 (crate
// src/mail/{mod.rs,types.rs,state.rs}, local_connector/mail_tools.rs;
// python agent_protocols/mail.py, mail_state.py), checked differentially
// against the Python SDK by test/interop/test_mail_*.py. Where the two SDKs
// order checks differently, this package follows the Python one, which the
// interop suite runs.
//
// The package is pure: no I/O, no storage, no clock (every time-dependent
// function takes now, in milliseconds since the epoch), no goroutines.
// Every refusal is an *identity.Error with a stable code (errors.go).
//
// # Files
//
//   - limits.go: the protocol's identifiers and limits, the relay's quotas
//     and the connector's defaults.
//   - errors.go: Mail's codes, HTTPStatus (the relay's status per code).
//   - schema.go: the SDK's mail.schema.json, embedded verbatim, and
//     ValidateSchema, the structural check of every object.
//   - card.go: mailbox cards (mailbox.publish): Card, CardPayload,
//     ParseCard/CardFromValue, SignCard, CheckCardUsable, NewID.
//   - hpke.go: the suite (RFC 9180 base mode, DHKEM(X25519, HKDF-SHA256),
//     HKDF-SHA256, ChaCha20Poly1305, info "agent-mail/1.0") over the
//     standard library's crypto/hpke; Key (raw X25519 secrets, as the SDK
//     stores them) and CheckPublicKey (the low-order probe).
//   - message.go: letters: Message, Part, MessageFromValue, NewMessage,
//     CheckReply, Digest.
//   - frame.go: the plaintext frame (4-byte length, JCS, zero padding to
//     1024): Frame, Unframe, EncodePlaintext, DecodePlaintext.
//   - packet.go: packets (mail.submit): Packet, Header,
//     ParsePacket/PacketFromValue, PacketAAD, CheckPacketID.
//   - seal.go: Seal (encrypt and sign a letter) and Open (verify and
//     decrypt it), with the SDK's checks in its order; SealEvent and
//     SignedPacket, Seal in two halves for a signer that allocates the nonce
//     itself.
//   - address.go: mailbox addresses on Agent URLs
//     (identity.ParseAgentURL): ParseAddress, Address.Format, CardAddress.
//   - pin.go: a sender's card pins: DecidePin, PinExpired, and CardCache, an
//     in-memory reference.
//   - relay.go: the relay's acceptance rules: CheckPublish, CheckDelivery,
//     retention, owner tokens (VerifyOwnerToken, CheckOwnerCall), list
//     parameters, Discovery.
//   - records.go: the relay's responses and a client's checks of them.
//   - inbox.go: the recipient's rules after Open: CheckSender,
//     CheckReceived (deduplication), KeyRetained, InboxItemID, Summary.
//
// # How a relay uses it
//
// POST /v1/mailboxes: ParseCard, then, in the transaction that holds the
// mailbox, CheckPublish with its current card; then the shared live nonce
// (the hub's nonce store) last; store {envelope, accepted_at} unless the
// action is CardResubmit. POST /v1/mailboxes/{id}/packets: CheckPathID,
// ParsePacket, then CheckDelivery with the current card, the packet's
// tombstone, the live usage (expired packets dropped first), the quota and
// the sender policy; on a fresh result store the record with seq =
// LastSeq+1 and a tombstone until the header's expires_at. Owner calls:
// CheckOwnerCall, CheckListLimit, ParsePacketCursor/CheckMailboxCursor.
// HTTPStatus gives every refusal's status.
//
// # How a connector uses it
//
// Publishing: GenerateKey (keep Key.Secret sealed, committed before the
// card leaves), DefaultCardPayload, SignCard. Sending: ParseAddress, read
// the card (CardFromValue or CardRecordFromValue), DecidePin against the
// stored pin and persist a PinStore, CheckCardUsable, NewMessage, Seal (or
// SealEvent inside the transaction that allocates the nonce, then
// SignedPacket); keep the packet to resend it byte for byte. Receiving:
// PacketListFromValue, CheckSender before decrypting, Open with the card
// and key the header's card hash names, CheckReceived against the digest
// held for (from, message_id), then InboxItemID and Summary. A letter is
// untrusted content: it authorizes nothing.
package mail
