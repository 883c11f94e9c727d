package mail

import (
	"regexp"
	"strconv"
	"time"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// The relay's acceptance rules, as pure functions in the order of the SDK's
// MailRelayStore (crate src/mail/state.rs, python mail_state.py). The
// relay looks up what they need (the mailbox's current card, a tombstone,
// its usage) inside its transaction, calls them, and commits what they
// allow. Every refusal is an *identity.Error whose code HTTPStatus maps to
// the relay's status.

// CardAction is what a relay does with a card it accepts.
type CardAction int

const (
	// CardCreate: the first card of a new mailbox; the mailbox is bound to
	// its owner from now on.
	CardCreate CardAction = iota + 1
	// CardReplace: a newer card of the mailbox; it becomes the current
	// card (the relay keeps only the current one).
	CardReplace
	// CardResubmit: the current card again, byte for byte; answer with the
	// stored record, change nothing and consume no nonce.
	CardResubmit
)

func (a CardAction) String() string {
	switch a {
	case CardCreate:
		return "create"
	case CardReplace:
		return "replace"
	case CardResubmit:
		return "resubmit"
	}
	return "invalid"
}

// CheckPublish decides a verified card (ParseCard) published to the relay
// at origin, given the mailbox's current card (nil when the relay does not
// know the mailbox), as MailRelayStore.publish does, in its order:
//
//  1. now within 0..2^53-1 (invalid_request);
//  2. a known mailbox stays bound to its first owner (mailbox_conflict);
//     its current card again is CardResubmit; otherwise the nonce must
//     exceed the current card's (nonce_not_greater, data {"max_nonce"});
//  3. a first card must list origin among its routes (permission_denied);
//  4. created_at within FutureSkew of now, either way
//     (timestamp_out_of_window).
//
// The one check left to the caller, last of all so that a refused card
// consumes no nonce, is the agent's shared live nonce (the hub's nonce
// store, as for every live write). Then the record is {envelope,
// accepted_at = now}.
func CheckPublish(card, current *Card, origin string, now int64) (CardAction, error) {
	if err := checkClock(now); err != nil {
		return 0, err
	}
	action := CardCreate
	if current != nil {
		if current.Owner() != card.Owner() {
			return 0, fail(CodeMailboxConflict, "/event/actor", "the mailbox belongs to another owner")
		}
		if current.Hash() == card.Hash() {
			return CardResubmit, nil
		}
		if card.Nonce() <= current.Nonce() {
			e := fail(CodeNonceNotGreater, "/event/nonce", "the card's nonce %d does not exceed the current card's %d", card.Nonce(), current.Nonce())
			e.Data = map[string]any{"max_nonce": current.Nonce()}
			return 0, e
		}
		action = CardReplace
	} else if !card.HasRoute(origin) {
		return 0, fail(CodePermissionDenied, "/event/payload/routes", "a new mailbox's first card must list this relay (%s) among its routes", origin)
	}
	if d := card.CreatedAt() - now; d > FutureSkew || d < -FutureSkew {
		return 0, fail(CodeTimestampOutOfWindow, "/event/created_at", "a card is a live write: created_at must be within %d ms of now", FutureSkew)
	}
	return action, nil
}

// Quota is a relay's per-mailbox storage limit.
type Quota struct {
	MaxPackets int
	MaxBytes   int64
}

// DefaultQuota is the SDK relay's: 10 000 packets and 64 MiB per mailbox.
func DefaultQuota() Quota {
	return Quota{MaxPackets: DefaultRelayMaxPackets, MaxBytes: DefaultRelayMaxBytes}
}

// Usage is what a mailbox holds at a relay: its live packets (expired ones
// already dropped), their total size, and the last seq it assigned.
type Usage struct {
	Packets int
	Bytes   int64
	LastSeq int64
}

// DeliveryResult is a relay's answer to an accepted packet (202). It never
// carries the mailbox's seq.
type DeliveryResult struct {
	PacketID   string `json:"packet_id"`
	AcceptedAt int64  `json:"accepted_at"`
}

// Value returns the result as a JSON object value.
func (r DeliveryResult) Value() map[string]any {
	return map[string]any{"packet_id": r.PacketID, "accepted_at": r.AcceptedAt}
}

// Delivery is one POST {route}/v1/mailboxes/{MailboxID}/packets, with the
// facts the relay looked up for it.
type Delivery struct {
	// Origin is the relay's own origin.
	Origin string
	// MailboxID is the mailbox ID of the request path.
	MailboxID string
	// Packet is the verified body (ParsePacket).
	Packet *Packet
	// Current is the mailbox's current card; nil when the relay does not
	// know the mailbox.
	Current *Card
	// Tombstone is the result this packet ID got when it was accepted
	// before (and its tombstone has not expired); nil otherwise.
	Tombstone *DeliveryResult
	// Usage is the mailbox's live usage.
	Usage Usage
	// Quota is the relay's per-mailbox quota.
	Quota Quota
	// SenderBlocked is the owner's policy for the packet's sender.
	SenderBlocked bool
	// Now is the relay's clock, in milliseconds.
	Now int64
}

// CheckDelivery decides a packet delivery as MailRelayStore.deliver does,
// in its order:
//
//  1. now within 0..2^53-1 (invalid_request); the path's mailbox ID an ID
//     (invalid_request; check it with CheckPathID before parsing the body,
//     as the SDK does);
//  2. the header's mailbox is the path's (invalid_event);
//  3. the mailbox known (mailbox_unavailable);
//  4. a packet accepted before gets its first result again (fresh false):
//     delivery is idempotent, and nothing is stored;
//  5. this relay one of the current card's routes (mailbox_unavailable);
//  6. the header names the current card, and it has not expired
//     (stale_card);
//  7. now < header.expires_at (packet_expired);
//  8. header.expires_at <= min(receive_until, now + MaxTTL + FutureSkew)
//     (invalid_event);
//  9. created_at <= now + FutureSkew (timestamp_out_of_window): packets
//     are asynchronous, with no live window and no nonce check;
//  10. the packet within the card's max_packet_bytes (payload_too_large);
//  11. the quota: fewer packets than MaxPackets, bytes within MaxBytes and
//     a seq left (rate_limited);
//  12. the sender not blocked by the owner (permission_denied).
//
// On success with fresh true the relay stores, in one transaction, the
// record {packet_id, packet, accepted_at = now, seq = Usage.LastSeq + 1} and
// a tombstone of the result that lives until header.expires_at, and answers
// 202 with the result.
func CheckDelivery(d Delivery) (res DeliveryResult, fresh bool, err error) {
	if err := checkClock(d.Now); err != nil {
		return res, false, err
	}
	if err := CheckPathID(d.MailboxID, IDBytes); err != nil {
		return res, false, err
	}
	p := d.Packet
	h := p.header
	if h.MailboxID != d.MailboxID {
		return res, false, fail(CodeInvalidEvent, "/event/payload/header/mailbox_id", "the header's mailbox is not the path's")
	}
	if d.Current == nil {
		return res, false, fail(CodeMailboxUnavailable, "", "unknown mailbox")
	}
	if d.Tombstone != nil {
		return *d.Tombstone, false, nil
	}
	c := d.Current.payload
	if !d.Current.HasRoute(d.Origin) {
		return res, false, fail(CodeMailboxUnavailable, "", "this relay is not a current route of the mailbox")
	}
	if h.CardHash != d.Current.Hash() || d.Now >= c.ExpiresAt {
		return res, false, fail(CodeStaleCard, "/event/payload/header/card_hash", "the packet needs the mailbox's current, unexpired card")
	}
	if d.Now >= h.ExpiresAt {
		return res, false, fail(CodePacketExpired, "/event/payload/header/expires_at", "the packet has expired")
	}
	if h.ExpiresAt > min(c.ReceiveUntil, d.Now+MaxTTL+FutureSkew) {
		return res, false, fail(CodeInvalidEvent, "/event/payload/header/expires_at", "the packet outlives what the mailbox accepts")
	}
	if p.CreatedAt() > d.Now+FutureSkew {
		return res, false, fail(CodeTimestampOutOfWindow, "/event/created_at", "the packet is future-dated")
	}
	size := int64(p.Size())
	if size > c.MaxPacketBytes {
		return res, false, fail(CodePayloadTooLarge, "", "the packet is %d bytes, more than the card's %d", size, c.MaxPacketBytes)
	}
	if d.Usage.Packets >= d.Quota.MaxPackets || d.Usage.Bytes+size > d.Quota.MaxBytes || d.Usage.LastSeq >= identity.MaxSafeInteger {
		return res, false, fail(CodeRateLimited, "", "the mailbox's storage quota is exhausted")
	}
	if d.SenderBlocked {
		return res, false, fail(CodePermissionDenied, "/event/actor", "the owner does not admit this sender")
	}
	return DeliveryResult{PacketID: p.ID(), AcceptedAt: d.Now}, true, nil
}

// PacketLive reports whether a stored packet (or its tombstone) is kept at
// now: until its header's expires_at.
func PacketLive(h Header, now int64) bool { return now < h.ExpiresAt }

// MailboxRetained reports whether a relay keeps a mailbox at now: until
// the current card's receive_until, and after it while packets or
// tombstones remain. A card for a forgotten mailbox is a new registration.
func MailboxRetained(current *Card, packets, tombstones int, now int64) bool {
	return now < current.payload.ReceiveUntil || packets > 0 || tombstones > 0
}

// CheckPathID checks an ID from a request path or cursor: canonical
// base64url of n bytes (16 for mailboxes, 32 for packets), else
// invalid_request.
func CheckPathID(id string, n int) error {
	if !ValidID(id, n) {
		return fail(CodeInvalidRequest, "", "%q is not a %d-byte base64url ID", text.Truncate(id, 80), n)
	}
	return nil
}

// VerifyOwnerToken verifies the request JWT of an owner call as the SDK's
// verify_mail_owner_jwt does: origin a serialized HTTPS origin
// (invalid_request), a valid token for audience origin (invalid_token,
// through identity.VerifyToken with skew; 0 gives the SDK's verdicts), and,
// when owner is not empty, iss = owner (permission_denied).
func VerifyOwnerToken(token, origin, owner string, now int64, skew time.Duration) (*identity.TokenClaims, error) {
	if err := checkClock(now); err != nil {
		return nil, err
	}
	if !identity.ValidOrigin(origin) {
		return nil, fail(CodeInvalidRequest, "", "the relay origin %q is not a serialized HTTPS origin", origin)
	}
	claims, err := identity.VerifyToken(token, origin, time.UnixMilli(now), identity.MaxTokenLifetime, skew)
	if err != nil {
		return nil, wrap(err, CodeInvalidToken, "", "invalid owner token")
	}
	if owner != "" && claims.AgentID != owner {
		return nil, fail(CodePermissionDenied, "", "the requester is not the mailbox owner")
	}
	return claims, nil
}

// CheckOwnerCall checks an owner call on one mailbox (list or delete its
// packets) as MailRelayStore does: the path's mailbox ID (invalid_request),
// the token (invalid_token), the mailbox known (mailbox_unavailable; current
// is its current card or nil), and the token's issuer its owner
// (permission_denied).
func CheckOwnerCall(mailboxID, token, origin string, current *Card, now int64, skew time.Duration) (*identity.TokenClaims, error) {
	if err := CheckPathID(mailboxID, IDBytes); err != nil {
		return nil, err
	}
	claims, err := VerifyOwnerToken(token, origin, "", now, skew)
	if err != nil {
		return nil, err
	}
	if current == nil {
		return nil, fail(CodeMailboxUnavailable, "", "unknown mailbox")
	}
	if claims.AgentID != current.Owner() {
		return nil, fail(CodePermissionDenied, "", "the requester is not the mailbox owner")
	}
	return claims, nil
}

// CheckListLimit checks a list's limit: 1..MaxListLimit (invalid_request).
func CheckListLimit(limit int) error {
	if limit < 1 || limit > MaxListLimit {
		return fail(CodeInvalidRequest, "", "limit must be from 1 to %d", MaxListLimit)
	}
	return nil
}

// packetCursor is a decimal safe integer: at most 16 digits, no sign, no
// leading zero.
var packetCursor = regexp.MustCompile(`^(?:0|[1-9][0-9]{0,15})$`)

// ParsePacketCursor reads the cursor of a packet list (present in the
// request): the decimal seq of the last record of the previous page, 0 to
// 2^53-1 without leading zeros (invalid_request otherwise). Records with a
// greater seq follow.
func ParsePacketCursor(cursor string) (int64, error) {
	if !packetCursor.MatchString(cursor) {
		return 0, fail(CodeInvalidRequest, "", "invalid cursor")
	}
	n, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || n > identity.MaxSafeInteger {
		return 0, fail(CodeInvalidRequest, "", "invalid cursor")
	}
	return n, nil
}

// CheckMailboxCursor checks the cursor of GET /v1/me/mailboxes: the last
// mailbox ID of the previous page (invalid_request otherwise). Mailboxes
// with a greater ID, in byte order, follow.
func CheckMailboxCursor(cursor string) error {
	if !ValidID(cursor, IDBytes) {
		return fail(CodeInvalidRequest, "", "invalid cursor")
	}
	return nil
}

// Discovery is the relay's /.well-known/agent-mail document. It is
// informational: delivery paths are fixed at each card route.
func Discovery(origin string) map[string]any {
	return map[string]any{"protocol": Protocol, "service": origin}
}
