package mail

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha3"
	"testing"

	"apconnect/host/identity"
)

// Fixtures shared by the tests: the keys of the stored mail vectors (seed
// 0x07 sends, seed 0x08 owns the mailbox, secret 0x09 is its X25519 key),
// and a third agent.
const (
	t0     int64 = 1790726400000
	day    int64 = 86_400_000
	relay        = "https://relay.example"
	mirror       = "https://mirror.example"
	mb           = "AAECAwQFBgcICQoLDA0ODw" // bytes 0..15
	mb2          = "EBESExQVFhcYGRobHB0eHw" // bytes 16..31
	thread       = "MDEyMzQ1Njc4OTo7PD0-Pw"
	msgID        = "ZmVkY2JhOTg3NjU0MzIxMA"
)

var (
	alice     = signerOf(7)
	bob       = signerOf(8)
	carol     = signerOf(12)
	bobSecret = fill(9)
	rotSecret = fill(10)
)

func fill(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func signerOf(b byte) *identity.KeySigner {
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(fill(b)))
}

func mustKey(t testing.TB, secret []byte) *Key {
	t.Helper()
	k, err := KeyFromSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// payloadOf is the vectors' card payload for bob's key, changed by mods.
func payloadOf(t testing.TB, mods ...func(*CardPayload)) CardPayload {
	p := CardPayload{MailboxID: mb, ExpiresAt: t0 + day, ReceiveUntil: t0 + 2*day,
		PublicKey: mustKey(t, bobSecret).PublicKey(), Routes: []string{relay, mirror}, MaxPacketBytes: 65536}
	for _, m := range mods {
		m(&p)
	}
	return p
}

func cardOf(t testing.TB, nonce int64, mods ...func(*CardPayload)) *Card {
	t.Helper()
	c, err := SignCard(bob, payloadOf(t, mods...), t0, nonce)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// signValue signs any event object, valid or not for Mail (the hash is
// SHA3-256 of its JCS, the signature Ed25519 over the hash), and returns the
// envelope as a parsed JSON value.
func signValue(t testing.TB, s identity.Signer, ev map[string]any) any {
	t.Helper()
	canon, err := identity.Canonicalize(ev)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha3.Sum256(canon)
	return clone(t, map[string]any{"event": ev, "hash": identity.EncodeBase64URL(digest[:]),
		"signature": identity.EncodeBase64URL(s.SignDigest(digest[:]))})
}

// clone deep-copies a JSON value through its canonical text.
func clone(t testing.TB, v any) any {
	t.Helper()
	b, err := identity.Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := identity.ParseStrict(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resign copies an envelope value, changes its event and signs it again
// with s (the actor becomes s).
func resign(t testing.TB, s identity.Signer, env any, change func(ev map[string]any)) any {
	t.Helper()
	ev := clone(t, env).(map[string]any)["event"].(map[string]any)
	ev["actor"] = s.AgentID()
	change(ev)
	return signValue(t, s, ev)
}

func letter(mods ...func(*Message)) *Message {
	subject := "A private question / 私信"
	m := &Message{MessageID: msgID, From: alice.AgentID(), CreatedAt: t0, To: bob.AgentID(), ExpiresAt: t0 + day,
		ThreadID: thread, Subject: &subject,
		Parts: []Part{TextPart("Can we compare our evidence?\n我们可以核对证据吗？"), BytesPart("application/octet-stream", []byte{0, 1, 0xfe, 0xff}, "evidence.bin")}}
	for _, f := range mods {
		f(m)
	}
	return m
}

func sealed(t testing.TB, m *Message, c *Card, nonce int64) *Packet {
	t.Helper()
	p, err := Seal(alice, m, c, nonce, t0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rawSeal seals any plaintext bytes to c with the packet's real AAD and
// signs the packet as s: what Seal never lets a sender produce.
func rawSeal(t testing.TB, s identity.Signer, c *Card, plaintext []byte, h Header) *Packet {
	t.Helper()
	ev := identity.Event{Protocol: Protocol, Type: TypeMailSubmit, Actor: s.AgentID(), CreatedAt: t0, Nonce: 500}
	ad, err := aad(ev.Protocol, ev.Type, ev.Actor, ev.CreatedAt, ev.Nonce, h.Value())
	if err != nil {
		t.Fatal(err)
	}
	enc, ct, err := hpkeSeal(c.payload.PublicKey, ad, plaintext)
	if err != nil {
		t.Fatal(err)
	}
	ev.Payload = packetPayload(h, identity.EncodeBase64URL(enc), identity.EncodeBase64URL(ct))
	env, err := identity.SignEvent(s, ev)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PacketFromValue(clone(t, env.Value()), "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func headerFor(c *Card) Header {
	return Header{MailboxID: c.MailboxID(), CardHash: c.Hash(), ExpiresAt: t0 + day}
}

func mustCanon(t testing.TB, m *Message) []byte {
	t.Helper()
	b, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustFrame(t testing.TB, data []byte) []byte {
	t.Helper()
	f, err := Frame(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wantCode fails unless err carries code ("ok" for nil).
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	got := "ok"
	if err != nil {
		got = ErrorCode(err)
		if got == "" {
			got = "uncoded: " + err.Error()
		}
	}
	if got != code {
		t.Fatalf("got %s (%v), want %s", got, err, code)
	}
}
