package mail

import (
	"strings"

	"apconnect/host/identity"
)

// Seal encrypts a letter to a card and signs the packet, as the SDK's
// encrypt_mail does, in its order:
//
//  1. now within 0..2^53-1 (invalid_request); the message valid
//     (Message.Check);
//  2. the message's sender is the signer (invalid_actor);
//  3. the card usable for the message's recipient (CheckCardUsable:
//     invalid_actor, timestamp_out_of_window, mailbox_unavailable,
//     stale_card);
//  4. the message neither future-dated (created_at <= now + FutureSkew) nor
//     expired (now < expires_at), else packet_expired;
//  5. expires_at <= the card's receive_until (invalid_event);
//  6. the nonce 1..2^53-1 (invalid_event);
//  7. the packet, computed before encrypting, within the card's
//     max_packet_bytes (payload_too_large).
//
// The plaintext is the frame of JCS(message) (Frame), sealed with fresh
// HPKE randomness to the card's key, with PacketAAD of the event about to
// be signed (created_at = now) as AAD. The header is {card's mailbox_id,
// card hash, message's expires_at}. Seal never retries: a packet to resend
// is kept and resent byte for byte.
func Seal(s identity.Signer, m *Message, card *Card, nonce, now int64) (*Packet, error) {
	if err := checkClock(now); err != nil {
		return nil, err
	}
	ev := identity.Event{Protocol: Protocol, Type: TypeMailSubmit, Actor: s.AgentID(), CreatedAt: now, Nonce: nonce}
	if err := SealEvent(&ev, m, card, now); err != nil {
		return nil, err
	}
	env, err := identity.SignEvent(s, ev)
	if err != nil {
		return nil, err
	}
	return SignedPacket(env, card)
}

// SealEvent is Seal without the signature, for a signer that allocates the
// nonce itself (the connector's signing pipeline): ev is the mail.submit
// event about to be signed — protocol, type, actor (the sender), created_at
// and nonce already set — and SealEvent checks the letter against card at
// now (Seal's steps 1 to 7, with ev's actor as the signer and ev's nonce)
// and sets ev.Payload to the sealed {header, enc, ciphertext}. Sign ev as it
// is and check the envelope with SignedPacket.
func SealEvent(ev *identity.Event, m *Message, card *Card, now int64) error {
	if err := checkClock(now); err != nil {
		return err
	}
	if ev.Protocol != Protocol || ev.Type != TypeMailSubmit {
		return fail(CodeInvalidEvent, "/event/type", "a packet is a %s %s event", Protocol, TypeMailSubmit)
	}
	if err := m.Check(); err != nil {
		return err
	}
	if m.From != ev.Actor {
		return fail(CodeInvalidActor, "/from", "the message's sender %s is not the signer %s", m.From, ev.Actor)
	}
	if err := CheckCardUsable(card, m.To, now); err != nil {
		return err
	}
	if m.CreatedAt > now+FutureSkew || now >= m.ExpiresAt {
		return fail(CodePacketExpired, "/expires_at", "the message is expired or future-dated")
	}
	cp := card.payload
	if m.ExpiresAt > cp.ReceiveUntil {
		return fail(CodeInvalidEvent, "/expires_at", "the message expires after the card's receive_until")
	}
	if ev.Nonce < 1 || ev.Nonce > identity.MaxSafeInteger {
		return fail(CodeInvalidEvent, "/event/nonce", "the nonce must be an integer from 1 to 2^53-1")
	}
	header := Header{MailboxID: cp.MailboxID, CardHash: card.Hash(), ExpiresAt: m.ExpiresAt}
	canon, err := m.Canonical()
	if err != nil {
		return fail(CodeInvalidEvent, "", "cannot canonicalize the message: %v", err)
	}
	plaintext, err := Frame(canon)
	if err != nil {
		return err
	}
	size, err := projectedSize(*ev, header, len(plaintext)+16)
	if err != nil {
		return err
	}
	if size > cp.MaxPacketBytes {
		return fail(CodePayloadTooLarge, "", "the packet would be %d bytes, more than the card's %d", size, cp.MaxPacketBytes)
	}
	ad, err := aad(ev.Protocol, ev.Type, ev.Actor, ev.CreatedAt, ev.Nonce, header.Value())
	if err != nil {
		return fail(CodeInvalidEvent, "", "cannot build the AAD: %v", err)
	}
	enc, ciphertext, err := hpkeSeal(cp.PublicKey, ad, plaintext)
	if err != nil {
		return err
	}
	ev.Payload = packetPayload(header, identity.EncodeBase64URL(enc), identity.EncodeBase64URL(ciphertext))
	return nil
}

// SignedPacket checks the envelope of an event SealEvent sealed to card and
// its signer signed, as Seal's result is checked (PacketFromValue, and the
// card's max_packet_bytes).
func SignedPacket(env *identity.Envelope, card *Card) (*Packet, error) {
	p, err := PacketFromValue(env.Value(), "")
	if err != nil {
		return nil, err
	}
	if int64(p.Size()) > card.payload.MaxPacketBytes {
		return nil, fail(CodePayloadTooLarge, "", "the packet is %d bytes, more than the card's %d", p.Size(), card.payload.MaxPacketBytes)
	}
	return p, nil
}

// projectedSize is len(JCS(packet)) of ev with header and a ciphertext of
// ctLen bytes, before encrypting: enc, hash and signature have fixed
// lengths, so this is the signed packet's exact size.
func projectedSize(ev identity.Event, header Header, ctLen int) (int64, error) {
	ev.Payload = packetPayload(header, strings.Repeat("A", 43), strings.Repeat("A", (ctLen*8+5)/6))
	env := identity.Envelope{Event: ev, Hash: strings.Repeat("A", 43), Signature: strings.Repeat("A", 86)}
	b, err := env.MarshalJSON()
	if err != nil {
		return 0, fail(CodeInvalidEvent, "", "cannot canonicalize the packet: %v", err)
	}
	return int64(len(b)), nil
}

func packetPayload(h Header, enc, ciphertext string) map[string]any {
	return map[string]any{"header": h.Value(), "enc": enc, "ciphertext": ciphertext}
}

// Open verifies and decrypts a packet sealed to card, for owner (this
// identity) holding key, as the SDK's decrypt_mail does, in its order:
//
//  1. now within 0..2^53-1 (invalid_request);
//  2. the card's owner is owner (invalid_actor);
//  3. the packet not future-dated: created_at <= now + FutureSkew
//     (timestamp_out_of_window);
//  4. the header names this card and its mailbox (invalid_event);
//  5. the packet within the card's max_packet_bytes (payload_too_large);
//  6. header.expires_at <= the card's receive_until (invalid_event);
//  7. key is the card's key (invalid_private_key);
//  8. HPKE open with PacketAAD (invalid_event);
//  9. the plaintext a minimal zero-padded frame of canonical JSON of a
//     valid message (DecodePlaintext, invalid_event);
//  10. from = the packet's signer, to = owner, expires_at = the header's
//     (invalid_event);
//  11. created_at <= min(now, packet created_at) + FutureSkew
//     (timestamp_out_of_window).
//
// It is a historical check: an expired packet still opens. Refusing to
// newly accept an expired letter, deduplication and sender policy are
// the inbox's (CheckReceived). The message is untrusted content and
// authorizes nothing.
func Open(p *Packet, card *Card, key *Key, owner string, now int64) (*Message, error) {
	if err := checkClock(now); err != nil {
		return nil, err
	}
	if card.Owner() != owner {
		return nil, fail(CodeInvalidActor, "", "the card's owner %s is not %s", card.Owner(), owner)
	}
	if p.CreatedAt() > now+FutureSkew {
		return nil, fail(CodeTimestampOutOfWindow, "/event/created_at", "the packet is future-dated")
	}
	h, cp := p.header, card.payload
	if h.CardHash != card.Hash() || h.MailboxID != cp.MailboxID {
		return nil, fail(CodeInvalidEvent, "/event/payload/header", "the packet is not sealed to this card")
	}
	if int64(p.Size()) > cp.MaxPacketBytes {
		return nil, fail(CodePayloadTooLarge, "", "the packet is %d bytes, more than the card's %d", p.Size(), cp.MaxPacketBytes)
	}
	if h.ExpiresAt > cp.ReceiveUntil {
		return nil, fail(CodeInvalidEvent, "/event/payload/header/expires_at", "the packet outlives the card's receive_until")
	}
	if key.PublicKey() != cp.PublicKey {
		return nil, fail(CodeInvalidPrivateKey, "", "the recipient key is not the card's")
	}
	ad, err := PacketAAD(p)
	if err != nil {
		return nil, fail(CodeInvalidEvent, "", "cannot build the AAD: %v", err)
	}
	plaintext, err := key.open(p.enc, ad, p.ciphertext)
	if err != nil {
		return nil, err
	}
	m, err := DecodePlaintext(plaintext)
	if err != nil {
		return nil, repoint(err, "/plaintext")
	}
	if m.From != p.Sender() || m.To != owner || m.ExpiresAt != h.ExpiresAt {
		return nil, fail(CodeInvalidEvent, "/plaintext", "the letter's sender, recipient or expiry does not match its packet")
	}
	if m.CreatedAt > min(now, p.CreatedAt())+FutureSkew {
		return nil, fail(CodeTimestampOutOfWindow, "/plaintext/created_at", "the letter is future-dated")
	}
	return m, nil
}
