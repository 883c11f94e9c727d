package mail

import (
	"crypto/ed25519"
	"testing"

	"apconnect/host/identity"
)

func TestSmoke(t *testing.T) {
	seed := func(b byte) *identity.KeySigner {
		s := make([]byte, 32)
		for i := range s { s[i] = b }
		return identity.NewKeySigner(ed25519.NewKeyFromSeed(s))
	}
	alice, bob := seed(7), seed(8)
	key, _ := KeyFromSecret(make([]byte, 32))
	now := int64(1790726400000)
	mb, _ := NewID()
	card, err := SignCard(bob, DefaultCardPayload(mb, key.PublicKey(), []string{"https://relay.example"}, now), now, 100)
	if err != nil { t.Fatal(err) }
	th, _ := NewID()
	subj := "hi"
	m, err := NewMessage(alice.AgentID(), now, MessageContent{To: bob.AgentID(), ExpiresAt: DefaultMessageExpiry(now, card), ThreadID: th, Parts: []Part{TextPart("hello")}, Subject: &subj})
	if err != nil { t.Fatal(err) }
	p, err := Seal(alice, m, card, 5, now)
	if err != nil { t.Fatal(err) }
	b, _ := p.MarshalJSON()
	p2, err := ParsePacket(b)
	if err != nil { t.Fatal(err) }
	got, err := Open(p2, card, key, bob.AgentID(), now)
	if err != nil { t.Fatal(err) }
	t.Log(Summary(got), p.Size(), len(b))
}
