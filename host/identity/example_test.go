package identity_test

import (
	"crypto/ed25519"
	"fmt"

	"apconnect/host/identity"
)

// Canonical JSON (JCS, RFC 8785): members sorted by UTF-16 code units,
// no insignificant whitespace, numbers in their shortest form.
func ExampleCanonicalizeJSON() {
	out, err := identity.CanonicalizeJSON([]byte(`{"b": [1.0, true, null], "a": "é", "A": 1e3}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"A":1000,"a":"é","b":[1,true,null]}
}

// Sign an Agent Discourse message and verify the envelope, as a host does
// with everything it receives; a changed byte fails verification.
func ExampleSignEvent() {
	// A fixed seed keeps the example's output stable; apconnect's keys
	// come from crypto/rand and live sealed in the key store.
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	signer := identity.NewKeySigner(key)

	payload, err := identity.ParseStrict([]byte(`{"content":"hello","content_type":"text/plain"}`))
	if err != nil {
		panic(err)
	}
	// The room and the head the message was written against (seq 1, the
	// room.create record, here a made-up hash).
	// Agent Discourse defines those top-level fields beyond the six; this
	// package signs them as they are, its rules (host/proto/adp) check them.
	env, err := identity.SignEvent(signer, identity.Event{
		Protocol:  "agent-discourse/1.0",
		Type:      "message.create",
		Actor:     signer.AgentID(),
		CreatedAt: 1_800_000_000_000,
		Nonce:     1,
		Payload:   payload,
		Fields:    map[string]any{"room_id": "room_example", "base_seq": int64(1), "base_hash": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
	})
	if err != nil {
		panic(err)
	}
	canonical, _ := env.Event.Canonical()
	fmt.Println(string(canonical))
	fmt.Println("event ID:", env.Hash)
	fmt.Println("verified:", env.Verify() == nil)

	env.Event.Nonce = 2 // anything changed after signing
	err = env.Verify()
	fmt.Println("tampered:", identity.ErrorCode(err))
	// Output:
	// {"actor":"did:agent:O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik","base_hash":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","base_seq":1,"created_at":1800000000000,"nonce":1,"payload":{"content":"hello","content_type":"text/plain"},"protocol":"agent-discourse/1.0","room_id":"room_example","type":"message.create"}
	// event ID: c2tNbOIh5ljqtCE11Nk_uieHV0skpe8ufuVurazRkUo
	// verified: true
	// tampered: invalid_event_hash
}
