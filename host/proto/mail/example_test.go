package mail_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"

	"apconnect/host/identity"
	"apconnect/host/proto/mail"
)

func signer(seed byte) *identity.KeySigner {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return identity.NewKeySigner(ed25519.NewKeyFromSeed(s))
}

// Bob publishes a mailbox card; Alice reads it, pins it, seals a letter
// to it; Bob's relay accepts the packet; Bob opens it and files it.
func Example() {
	alice, bob := signer(7), signer(8)
	now := int64(1790726400000)
	const relay = "https://relay.example"

	// Bob: a recipient key (kept sealed, never in a card) and a card.
	key, _ := mail.GenerateKey()
	mailbox, _ := mail.NewID()
	card, err := mail.SignCard(bob, mail.DefaultCardPayload(mailbox, key.PublicKey(), []string{relay}, now), now, 1)
	if err != nil {
		panic(err)
	}
	// The relay: a first card must list the relay.
	action, err := mail.CheckPublish(card, nil, relay, now)
	fmt.Println("publish:", action, err)

	// Alice: the card comes from a relay as JSON; she checks and pins it.
	body, _ := json.Marshal(card)
	read, err := mail.ParseCard(body)
	if err != nil {
		panic(err)
	}
	pin, _ := mail.DecidePin(nil, read, bob.AgentID(), now)
	fmt.Println("pin:", pin, mail.CheckCardUsable(read, bob.AgentID(), now))

	thread, _ := mail.NewID()
	subject := "Hello"
	letter, err := mail.NewMessage(alice.AgentID(), now, mail.MessageContent{
		To: bob.AgentID(), ExpiresAt: mail.DefaultMessageExpiry(now, read), ThreadID: thread,
		Subject: &subject, Parts: []mail.Part{mail.TextPart("Can we compare notes?")},
	})
	if err != nil {
		panic(err)
	}
	packet, err := mail.Seal(alice, letter, read, 2, now)
	if err != nil {
		panic(err)
	}

	// The relay: POST /v1/mailboxes/{mailbox}/packets.
	raw, _ := json.Marshal(packet)
	got, err := mail.ParsePacket(raw)
	if err != nil {
		panic(err)
	}
	res, fresh, err := mail.CheckDelivery(mail.Delivery{Origin: relay, MailboxID: mailbox, Packet: got,
		Current: card, Quota: mail.DefaultQuota(), Now: now})
	fmt.Println("deliver:", res.PacketID == packet.ID(), fresh, err)

	// Bob: open the packet, deduplicate, file the inbox item.
	opened, err := mail.Open(got, card, key, bob.AgentID(), now+1000)
	if err != nil {
		panic(err)
	}
	acceptance, _ := mail.CheckReceived(opened, "", now+1000)
	fmt.Println("received:", acceptance, mail.Summary(opened))
	fmt.Println(mail.InboxItemID(opened.From, opened.MessageID) == "mail.received:"+alice.AgentID()+":"+letter.MessageID)

	// Output:
	// publish: create <nil>
	// pin: store <nil>
	// deliver: true true <nil>
	// received: accepted Hello
	// true
}

// A relay maps each refusal to the SDK test relay's status.
func ExampleHTTPStatus() {
	for _, code := range []string{mail.CodeMailboxUnavailable, mail.CodeStaleCard, mail.CodePacketExpired, mail.CodeInvalidEvent} {
		fmt.Println(code, mail.HTTPStatus(code))
	}
	// Output:
	// mailbox_unavailable 404
	// stale_card 409
	// packet_expired 410
	// invalid_event 400
}

func ExampleParseAddress() {
	a, err := mail.ParseAddress("did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw/mail/AAECAwQFBgcICQoLDA0ODw?route=https://relay.example")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.MailboxID, a.Routes)
	_, err = mail.ParseAddress("AAECAwQFBgcICQoLDA0ODw@relay.example")
	fmt.Println(mail.ErrorCode(err))
	// Output:
	// AAECAwQFBgcICQoLDA0ODw [https://relay.example]
	// invalid_url
}
