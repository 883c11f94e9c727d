package mail

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"apconnect/host/identity"
)

func TestSealOpenRoundTrip(t *testing.T) {
	card := cardOf(t, 100)
	key := mustKey(t, bobSecret)
	for _, m := range []*Message{
		letter(),
		letter(func(m *Message) { m.Subject = nil }),
		letter(func(m *Message) {
			m.Parts = []Part{BytesPart("application/octet-stream", bytes.Repeat([]byte{7}, 20000), "blob")}
		}),
	} {
		p := sealed(t, m, card, 300)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParsePacket(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Open(again, card, key, bob.AgentID(), t0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustCanon(t, got), mustCanon(t, m)) {
			t.Fatal("the opened letter differs")
		}
		ct := len(p.ciphertext)
		if ct < MinCiphertextBytes || ct%FrameBlock != 16 || ct != FrameSize(len(mustCanon(t, m)))+16 {
			t.Fatalf("ciphertext of %d bytes", ct)
		}
		h := p.Header()
		if h != (Header{MailboxID: mb, CardHash: card.Hash(), ExpiresAt: m.ExpiresAt}) || p.Sender() != alice.AgentID() || p.CreatedAt() != t0 || p.Nonce() != 300 {
			t.Fatalf("header %+v", h)
		}
	}
	// Two seals of one letter differ (fresh HPKE randomness) and both open.
	p1, p2 := sealed(t, letter(), card, 300), sealed(t, letter(), card, 300)
	if p1.ID() == p2.ID() || bytes.Equal(p1.enc, p2.enc) {
		t.Fatal("sealing is deterministic")
	}
}

func TestSealRefusals(t *testing.T) {
	card := cardOf(t, 100)
	closed := cardOf(t, 101, func(p *CardPayload) { p.Routes = nil })
	small := cardOf(t, 102, func(p *CardPayload) { p.MaxPacketBytes = MinCardPacketBytes })
	big := letter(func(m *Message) { m.Parts = []Part{BytesPart("a/b", make([]byte, 3000), "")} })
	for _, tc := range []struct {
		name   string
		signer identity.Signer
		m      *Message
		card   *Card
		nonce  int64
		now    int64
		code   string
	}{
		{"letter", alice, letter(), card, 1, t0, "ok"},
		{"signer is not the sender", carol, letter(), card, 1, t0, CodeInvalidActor},
		{"card of another owner", alice, letter(func(m *Message) { m.To = carol.AgentID() }), card, 1, t0, CodeInvalidActor},
		{"closed card", alice, letter(), closed, 1, t0, CodeMailboxUnavailable},
		{"expired card", alice, letter(func(m *Message) { m.CreatedAt, m.ExpiresAt = t0+day, t0+2*day }), card, 1, t0 + day, CodeStaleCard},
		{"future card", alice, letter(), card, 1, t0 - FutureSkew - 1, CodeTimestampOutOfWindow},
		{"expired letter", alice, letter(func(m *Message) { m.ExpiresAt = t0 + 10 }), card, 1, t0 + 10, CodePacketExpired},
		{"future letter", alice, letter(func(m *Message) { m.CreatedAt = t0 + FutureSkew + 1 }), card, 1, t0, CodePacketExpired},
		{"letter at the skew edge", alice, letter(func(m *Message) { m.CreatedAt = t0 + FutureSkew }), card, 1, t0, "ok"},
		{"letter past receive_until", alice, letter(func(m *Message) { m.ExpiresAt = t0 + 2*day + 1 }), card, 1, t0, CodeInvalidEvent},
		{"letter at receive_until", alice, letter(func(m *Message) { m.ExpiresAt = t0 + 2*day }), card, 1, t0, "ok"},
		{"nonce 0", alice, letter(), card, 0, t0, CodeInvalidEvent},
		{"nonce 2^53", alice, letter(), card, identity.MaxSafeInteger + 1, t0, CodeInvalidEvent},
		{"negative clock", alice, letter(), card, 1, -1, CodeInvalidRequest},
		{"invalid letter", alice, letter(func(m *Message) { m.Parts = nil }), card, 1, t0, CodeInvalidEvent},
		{"letter over the card's limit", alice, big, small, 1, t0, CodePayloadTooLarge},
		{"letter within the card's limit", alice, letter(), small, 1, t0, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Seal(tc.signer, tc.m, tc.card, tc.nonce, tc.now)
			wantCode(t, err, tc.code)
			if err == nil && int64(p.Size()) > tc.card.payload.MaxPacketBytes {
				t.Fatalf("packet of %d bytes over the card's %d", p.Size(), tc.card.payload.MaxPacketBytes)
			}
		})
	}
}

// The size is known before encrypting: a card whose limit is exactly the
// packet's size takes it, one byte less refuses it.
func TestSealExactLimit(t *testing.T) {
	m := letter(func(m *Message) { m.Parts = []Part{BytesPart("a/b", make([]byte, 2500), "")} })
	size := sealed(t, m, cardOf(t, 100), 300).Size()
	if size <= MinCardPacketBytes {
		t.Fatalf("size %d", size)
	}
	exact := cardOf(t, 101, func(p *CardPayload) { p.MaxPacketBytes = int64(size) })
	if p, err := Seal(alice, m, exact, 300, t0); err != nil || p.Size() != size {
		t.Fatalf("exact limit: %v", err)
	}
	short := cardOf(t, 102, func(p *CardPayload) { p.MaxPacketBytes = int64(size - 1) })
	if _, err := Seal(alice, m, short, 300, t0); ErrorCode(err) != CodePayloadTooLarge {
		t.Fatalf("one byte short: %v", err)
	}
}

func TestOpenRefusals(t *testing.T) {
	card := cardOf(t, 100)
	rotated := cardOf(t, 101, func(p *CardPayload) { p.PublicKey = mustKey(t, rotSecret).PublicKey() })
	small := cardOf(t, 102, func(p *CardPayload) { p.MaxPacketBytes = MinCardPacketBytes })
	key := mustKey(t, bobSecret)
	p := sealed(t, letter(), card, 300)
	good := mustCanon(t, letter())
	hdr := headerFor(card)
	re := func(change func(ev map[string]any)) *Packet {
		q, err := PacketFromValue(resign(t, alice, p.Value(), change), "")
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	payload := func(ev map[string]any) map[string]any { return ev["payload"].(map[string]any) }
	flipped := bytes.Clone(p.ciphertext)
	flipped[len(flipped)-1] ^= 1
	for _, tc := range []struct {
		name  string
		p     *Packet
		card  *Card
		key   *Key
		owner string
		now   int64
		code  string
	}{
		{"letter", p, card, key, bob.AgentID(), t0, "ok"},
		{"opened after it expired", p, card, key, bob.AgentID(), t0 + 40*day, "ok"},
		{"another owner", p, card, key, carol.AgentID(), t0, CodeInvalidActor},
		{"future packet", p, card, key, bob.AgentID(), t0 - FutureSkew - 1, CodeTimestampOutOfWindow},
		{"another card", p, rotated, mustKey(t, rotSecret), bob.AgentID(), t0, CodeInvalidEvent},
		{"another key", p, card, mustKey(t, rotSecret), bob.AgentID(), t0, CodeInvalidPrivateKey},
		{"negative clock", p, card, key, bob.AgentID(), -1, CodeInvalidRequest},
		{"tag flipped", re(func(ev map[string]any) { payload(ev)["ciphertext"] = identity.EncodeBase64URL(flipped) }), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"a block added", re(func(ev map[string]any) {
			payload(ev)["ciphertext"] = identity.EncodeBase64URL(append(bytes.Clone(p.ciphertext), make([]byte, 1024)...))
		}), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"zero enc", re(func(ev map[string]any) { payload(ev)["enc"] = identity.EncodeBase64URL(make([]byte, 32)) }), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"header expiry changed (AAD)", re(func(ev map[string]any) { payload(ev)["header"].(map[string]any)["expires_at"] = t0 + day - 1 }), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"header past receive_until", re(func(ev map[string]any) { payload(ev)["header"].(map[string]any)["expires_at"] = t0 + 2*day + 1 }), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"nonce changed (AAD)", re(func(ev map[string]any) { ev["nonce"] = 301 }), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"re-signed by another sender", func() *Packet {
			q, _ := PacketFromValue(resign(t, carol, p.Value(), func(map[string]any) {}), "")
			return q
		}(), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"raw letter", rawSeal(t, alice, card, mustFrame(t, good), hdr), card, key, bob.AgentID(), t0, "ok"},
		{"bad padding", rawSeal(t, alice, card, append(mustFrame(t, good)[:1023:1023], 1), hdr), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"non-minimal padding", rawSeal(t, alice, card, append(mustFrame(t, good), make([]byte, 1024)...), hdr), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"non-canonical JSON", rawSeal(t, alice, card, mustFrame(t, []byte(strings.Replace(string(good), ",", ", ", 1))), hdr), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"to another", rawSeal(t, alice, card, mustFrame(t, mustCanon(t, letter(func(m *Message) { m.To = carol.AgentID() }))), hdr), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"from another", rawSeal(t, alice, card, mustFrame(t, mustCanon(t, letter(func(m *Message) { m.From = carol.AgentID() }))), hdr), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"expiry differs from the header", rawSeal(t, alice, card, mustFrame(t, mustCanon(t, letter(func(m *Message) { m.ExpiresAt-- }))), hdr), card, key, bob.AgentID(), t0, CodeInvalidEvent},
		{"letter future-dated", rawSeal(t, alice, card, mustFrame(t, mustCanon(t, letter(func(m *Message) { m.CreatedAt = t0 + FutureSkew + 1 }))), hdr), card, key, bob.AgentID(), t0 + day, CodeTimestampOutOfWindow},
		{"larger than the card's limit", rawSeal(t, alice, small, mustFrame(t, mustCanon(t, letter(func(m *Message) {
			m.Parts = []Part{BytesPart("a/b", make([]byte, 3000), "")}
		}))), headerFor(small)), small, key, bob.AgentID(), t0, CodePayloadTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Open(tc.p, tc.card, tc.key, tc.owner, tc.now)
			wantCode(t, err, tc.code)
			if err == nil && m.From != tc.p.Sender() {
				t.Fatal("opened a letter from another sender")
			}
		})
	}
}

func TestPacketRules(t *testing.T) {
	card := cardOf(t, 100)
	p := sealed(t, letter(), card, 300)
	withCT := func(n int) any {
		return resign(t, alice, p.Value(), func(ev map[string]any) {
			ev["payload"].(map[string]any)["ciphertext"] = identity.EncodeBase64URL(make([]byte, n))
		})
	}
	withExpiry := func(e int64) any {
		return resign(t, alice, p.Value(), func(ev map[string]any) {
			ev["payload"].(map[string]any)["header"].(map[string]any)["expires_at"] = e
		})
	}
	for _, tc := range []struct {
		name string
		v    any
		code string
	}{
		{"sealed", p.Value(), "ok"},
		{"ciphertext 1039", withCT(1039), CodeInvalidEvent},
		{"ciphertext 1040", withCT(1040), "ok"},
		{"ciphertext 1041", withCT(1041), CodeInvalidEvent},
		{"ciphertext 2063", withCT(2063), CodeInvalidEvent},
		{"ciphertext 2064", withCT(2064), "ok"},
		{"ciphertext 785424 (largest the schema takes)", withCT(785424), "ok"},
		{"ciphertext 786448", withCT(786448), CodeInvalidEvent},
		{"expires at created", withExpiry(t0), CodeInvalidEvent},
		{"expires 30 d + 300 s after", withExpiry(t0 + MaxTTL + FutureSkew), "ok"},
		{"expires 30 d + 300 s + 1 ms after", withExpiry(t0 + MaxTTL + FutureSkew + 1), CodeInvalidEvent},
		{"header with protocol", resign(t, alice, p.Value(), func(ev map[string]any) {
			ev["payload"].(map[string]any)["header"].(map[string]any)["protocol"] = Protocol
		}), CodeInvalidEvent},
		{"enc of 31 bytes", resign(t, alice, p.Value(), func(ev map[string]any) {
			ev["payload"].(map[string]any)["enc"] = identity.EncodeBase64URL(make([]byte, 31))
		}), CodeInvalidEvent},
		{"card type", resign(t, alice, p.Value(), func(ev map[string]any) { ev["type"] = TypeMailboxPublish }), CodeInvalidEvent},
		{"changed without re-signing", func() any {
			v := clone(t, p.Value()).(map[string]any)
			v["event"].(map[string]any)["nonce"] = 301
			return v
		}(), CodeInvalidEventHash},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := PacketFromValue(tc.v, "")
			wantCode(t, err, tc.code)
			if err == nil && (q.Size() > MaxPacketBytes || q.ID() != tc.v.(map[string]any)["hash"]) {
				t.Fatalf("size %d id %s", q.Size(), q.ID())
			}
		})
	}
	if _, err := ParsePacket(append(p.Canonical(), bytes.Repeat([]byte(" "), MaxPacketBodyBytes)...)); ErrorCode(err) != CodePayloadTooLarge {
		t.Fatalf("raw body over the bound: %v", err)
	}
	wantCode(t, CheckPacketID(p, p.ID()), "ok")
	wantCode(t, CheckPacketID(p, card.Hash()), CodeInvalidEvent)
}

// The AAD is JCS of the outer event's five fields and its header, as
// signed; no payload member other than header is in it.
func TestPacketAAD(t *testing.T) {
	p := sealed(t, letter(), cardOf(t, 100), 300)
	got, err := PacketAAD(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"actor":"` + alice.AgentID() + `","created_at":1790726400000,"header":{"card_hash":"` + p.Header().CardHash +
		`","expires_at":1790812800000,"mailbox_id":"` + mb + `"},"nonce":300,"protocol":"agent-mail/1.0","type":"mail.submit"}`
	if string(got) != want {
		t.Fatalf("AAD\n%s\nwant\n%s", got, want)
	}
}

// SealEvent and SignedPacket are Seal in two halves: an event sealed by the
// first, signed as it is and checked by the second, opens like Seal's
// packet; an event of another type, or of a sender who is not the letter's,
// is refused before anything is encrypted.
func TestSealEventHalves(t *testing.T) {
	card := cardOf(t, 100)
	m := letter()
	ev := identity.Event{Protocol: Protocol, Type: TypeMailSubmit, Actor: alice.AgentID(), CreatedAt: t0, Nonce: 77}
	if err := SealEvent(&ev, m, card, t0); err != nil {
		t.Fatal(err)
	}
	env, err := identity.SignEvent(alice, ev)
	if err != nil {
		t.Fatal(err)
	}
	p, err := SignedPacket(env, card)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Open(p, card, mustKey(t, bobSecret), bob.AgentID(), t0)
	if err != nil || got.MessageID != m.MessageID || p.Nonce() != 77 {
		t.Fatalf("open: %v %+v", err, got)
	}
	for _, tc := range []struct {
		name string
		ev   identity.Event
		code string
	}{
		{"a card event", identity.Event{Protocol: Protocol, Type: TypeMailboxPublish, Actor: alice.AgentID(), CreatedAt: t0, Nonce: 1}, CodeInvalidEvent},
		{"another protocol", identity.Event{Protocol: "agent-profile/1.0", Type: TypeMailSubmit, Actor: alice.AgentID(), CreatedAt: t0, Nonce: 1}, CodeInvalidEvent},
		{"another sender", identity.Event{Protocol: Protocol, Type: TypeMailSubmit, Actor: carol.AgentID(), CreatedAt: t0, Nonce: 1}, CodeInvalidActor},
		{"nonce 0", identity.Event{Protocol: Protocol, Type: TypeMailSubmit, Actor: alice.AgentID(), CreatedAt: t0}, CodeInvalidEvent},
	} {
		ev := tc.ev
		if err := SealEvent(&ev, m, card, t0); ErrorCode(err) != tc.code || ev.Payload != nil {
			t.Errorf("%s: %v (payload %v), want %s", tc.name, err, ev.Payload, tc.code)
		}
	}
	// A packet is checked against the card's limit.
	big := letter(func(m *Message) { m.Parts = []Part{BytesPart("a/b", make([]byte, 5000), "")} })
	ev = identity.Event{Protocol: Protocol, Type: TypeMailSubmit, Actor: alice.AgentID(), CreatedAt: t0, Nonce: 78}
	if err := SealEvent(&ev, big, card, t0); err != nil {
		t.Fatal(err)
	}
	if env, err = identity.SignEvent(alice, ev); err != nil {
		t.Fatal(err)
	}
	small := cardOf(t, 101, func(p *CardPayload) { p.MaxPacketBytes = MinCardPacketBytes })
	if _, err := SignedPacket(env, small); ErrorCode(err) != CodePayloadTooLarge {
		t.Errorf("a packet over the card's limit: %v", err)
	}
}
