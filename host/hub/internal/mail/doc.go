// Package mail is the hub's Agent Mail relay (agent-mail/1.0), on the hub's
// origin: the relay model of the reference SDK 0.12.6 (MailRelayStore, crate
// src/mail/state.rs, python agent_protocols/mail_state.py) kept in hub.db,
// with the paths of its MailClient and the statuses of the crate's own test
// relay. Every acceptance rule is host/proto/mail's (CheckPublish,
// CheckDelivery, CheckOwnerCall, …); this package looks up what they need in
// one transaction, calls them in the SDK's order and commits what they allow.
//
//   - GET /.well-known/agent-mail: {protocol, service}, informational.
//   - POST /v1/mailboxes: publish a card (200 {envelope, accepted_at}); the
//     first card binds the mailbox to its owner and must list the hub among
//     its routes; an exact resubmission of the current card answers its
//     record; a newer card (greater nonce) replaces it; the shared live
//     nonce (hubhttp.Pipeline.LiveNonce) is checked last, so a refused card
//     consumes none.
//   - GET /v1/mailboxes/{id}/card: the current card, closed or expired.
//   - POST /v1/mailboxes/{id}/packets: deliver a sender-signed packet (202
//     {packet_id, accepted_at}); asynchronous, so no live window and no
//     nonce check; idempotent through tombstones that live until the
//     packet expires; per-mailbox quotas (Limits).
//   - GET /v1/mailboxes/{id}/packets?limit&cursor and DELETE
//     /v1/mailboxes/{id}/packets/{packet_id}: the owner's, with a request
//     JWT (the hub's token skew applies, as to every hub JWT).
//   - GET /v1/me/mailboxes?limit&cursor: the caller's mailboxes here.
//
// Expired packets and tombstones, and mailboxes past their card's
// receive_until with nothing left, are pruned in the background
// (prune.go) and, for one mailbox, before each delivery is counted
// against its quota.
//
// The SDK relay's owner policy on senders (set_sender_blocked) has no
// endpoint in the protocol and no hub command: the hub blocks no sender,
// and recipients apply their own (apconnect's [mail] blocked_senders).
package mail
