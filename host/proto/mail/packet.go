package mail

import (
	"apconnect/host/identity"
)

// Header is a packet's clear header: the mailbox, the hash of the card the
// letter was sealed to, and the letter's expiry.
type Header struct {
	MailboxID string `json:"mailbox_id"`
	CardHash  string `json:"card_hash"`
	ExpiresAt int64  `json:"expires_at"`
}

// Value returns the header as a JSON object value.
func (h Header) Value() map[string]any {
	return map[string]any{"mailbox_id": h.MailboxID, "card_hash": h.CardHash, "expires_at": h.ExpiresAt}
}

// Packet is a verified packet: a mail.submit envelope, signed by the
// sender, of {header, enc, ciphertext}, whose shape, hash, signature,
// ciphertext length, lifetime and size have been checked. Only this package
// makes one (ParsePacket, PacketFromValue, Seal). Its ID is its event hash.
type Packet struct {
	env        *identity.Envelope
	header     Header
	enc        []byte
	ciphertext []byte
	canonical  []byte
}

// Envelope returns the signed envelope. Callers must not modify it.
func (p *Packet) Envelope() *identity.Envelope { return p.env }

// ID is the packet ID: the envelope's event hash.
func (p *Packet) ID() string { return p.env.Hash }

// Sender is the event's actor.
func (p *Packet) Sender() string { return p.env.Event.Actor }

// CreatedAt is the event's created_at, the time the packet was sealed.
func (p *Packet) CreatedAt() int64 { return p.env.Event.CreatedAt }

// Nonce is the event's nonce.
func (p *Packet) Nonce() int64 { return p.env.Event.Nonce }

// Header returns the clear header.
func (p *Packet) Header() Header { return p.header }

// Size is len(JCS(packet)), the size the card's max_packet_bytes and the
// relay's quotas count.
func (p *Packet) Size() int { return len(p.canonical) }

// Canonical returns a copy of JCS(packet).
func (p *Packet) Canonical() []byte { return append([]byte(nil), p.canonical...) }

// Value returns the envelope as a JSON object value.
func (p *Packet) Value() map[string]any { return p.env.Value() }

// MarshalJSON writes the packet in canonical form.
func (p *Packet) MarshalJSON() ([]byte, error) { return p.Canonical(), nil }

// ParsePacket strictly parses a packet body (at most MaxPacketBodyBytes,
// else payload_too_large) and checks it with PacketFromValue.
func ParsePacket(data []byte) (*Packet, error) {
	v, err := parseBody(data)
	if err != nil {
		return nil, err
	}
	return PacketFromValue(v, "")
}

// PacketFromValue checks a strictly parsed packet as the SDK does before
// any policy check or key operation, in its order: the schema
// (invalid_event); the event hash and signature (invalid_event_hash,
// invalid_signature); a ciphertext of at least MinCiphertextBytes and 16
// modulo FrameBlock (invalid_event); created_at < header.expires_at <=
// created_at + MaxTTL + FutureSkew (invalid_event); JCS(packet) at most
// MaxPacketBytes (payload_too_large). It checks nothing about the card or
// the clock: packets are asynchronous, and a relay (CheckDelivery) or a
// recipient (Open) applies those.
func PacketFromValue(v any, pointer string) (*Packet, error) {
	if err := ValidateSchema(v, DefPacketEnvelope, CodeInvalidEvent, pointer); err != nil {
		return nil, err
	}
	env, err := verifiedEnvelope(v, pointer)
	if err != nil {
		return nil, err
	}
	payload := env.Event.Payload.(map[string]any)
	hm := payload["header"].(map[string]any)
	p := &Packet{env: env, header: Header{MailboxID: hm["mailbox_id"].(string), CardHash: hm["card_hash"].(string)}}
	at := pointer + "/event/payload"
	if p.header.ExpiresAt, err = intMember(hm, "expires_at", at+"/header", CodeInvalidEvent); err != nil {
		return nil, err
	}
	if p.enc, err = identity.DecodeBase64URLLen(payload["enc"].(string), KeySize); err != nil {
		return nil, fail(CodeInvalidEvent, at+"/enc", "enc must be %d bytes of canonical base64url", KeySize)
	}
	if p.ciphertext, err = identity.DecodeBase64URL(payload["ciphertext"].(string)); err != nil {
		return nil, fail(CodeInvalidEvent, at+"/ciphertext", "ciphertext is not canonical base64url")
	}
	if n := len(p.ciphertext); n < MinCiphertextBytes || n%FrameBlock != 16 {
		return nil, fail(CodeInvalidEvent, at+"/ciphertext", "invalid ciphertext length %d: at least %d and 16 modulo %d", n, MinCiphertextBytes, FrameBlock)
	}
	created := env.Event.CreatedAt
	if p.header.ExpiresAt <= created || p.header.ExpiresAt > created+MaxTTL+FutureSkew {
		return nil, fail(CodeInvalidEvent, at+"/header/expires_at", "invalid packet lifetime: expires_at must be after created_at and at most 30 days and 300 s later")
	}
	if p.canonical, err = env.MarshalJSON(); err != nil {
		return nil, fail(CodeInvalidEvent, pointer, "cannot canonicalize the packet: %v", err)
	}
	if len(p.canonical) > MaxPacketBytes {
		return nil, fail(CodePayloadTooLarge, pointer, "the packet is %d bytes, more than %d", len(p.canonical), MaxPacketBytes)
	}
	return p, nil
}

// CheckPacketID checks a packet ID a relay listed against the packet's own
// (invalid_event when they differ).
func CheckPacketID(p *Packet, claimed string) error {
	if p.ID() != claimed {
		return fail(CodeInvalidEvent, "/packet_id", "the packet ID %q is not the packet's hash", claimed)
	}
	return nil
}

// PacketAAD is the HPKE additional data of a packet, built only from the
// verified outer event: JCS of {protocol, type, actor, created_at, nonce,
// header}, the header exactly as signed.
func PacketAAD(p *Packet) ([]byte, error) {
	ev := &p.env.Event
	return aad(ev.Protocol, ev.Type, ev.Actor, ev.CreatedAt, ev.Nonce, ev.Payload.(map[string]any)["header"])
}

func aad(protocol, typ, actor string, createdAt, nonce int64, header any) ([]byte, error) {
	return identity.Canonicalize(map[string]any{
		"protocol": protocol, "type": typ, "actor": actor,
		"created_at": createdAt, "nonce": nonce, "header": header,
	})
}
