package mail

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// cardEvent is a mailbox.publish event object from bob, with payload.
func cardEvent(p CardPayload, nonce int64) map[string]any {
	return map[string]any{"protocol": Protocol, "type": TypeMailboxPublish, "actor": bob.AgentID(),
		"created_at": t0, "nonce": nonce, "payload": p.Value()}
}

func TestCardRules(t *testing.T) {
	nine := make([]string, 9)
	for i := range nine {
		nine[i] = "https://r" + string(rune('0'+i)) + ".example"
	}
	for _, tc := range []struct {
		name string
		mod  func(*CardPayload)
		code string
	}{
		{"valid", func(*CardPayload) {}, "ok"},
		{"closed", func(p *CardPayload) { p.Routes = nil }, "ok"},
		{"eight routes", func(p *CardPayload) { p.Routes = nine[:8] }, "ok"},
		{"nine routes", func(p *CardPayload) { p.Routes = nine }, CodeInvalidEvent},
		{"duplicate route", func(p *CardPayload) { p.Routes = []string{relay, relay} }, CodeInvalidEvent},
		{"uppercase route", func(p *CardPayload) { p.Routes = []string{"https://Relay.example"} }, CodeInvalidURL},
		{"short IPv4 route", func(p *CardPayload) { p.Routes = []string{"https://127.1"} }, CodeInvalidURL},
		{"route with port 443", func(p *CardPayload) { p.Routes = []string{"https://relay.example:443"} }, CodeInvalidEvent},
		{"route with a path", func(p *CardPayload) { p.Routes = []string{"https://relay.example/"} }, CodeInvalidEvent},
		{"http route", func(p *CardPayload) { p.Routes = []string{"http://relay.example"} }, CodeInvalidEvent},
		{"expires at created", func(p *CardPayload) { p.ExpiresAt, p.ReceiveUntil = t0, t0 }, CodeInvalidEvent},
		{"expires 30 d after", func(p *CardPayload) { p.ExpiresAt, p.ReceiveUntil = t0+MaxTTL, t0+MaxTTL }, "ok"},
		{"expires 30 d + 1 ms after", func(p *CardPayload) { p.ExpiresAt, p.ReceiveUntil = t0+MaxTTL+1, t0+MaxTTL+1 }, CodeInvalidEvent},
		{"receive_until before expiry", func(p *CardPayload) { p.ReceiveUntil = p.ExpiresAt - 1 }, CodeInvalidEvent},
		{"receive_until at expiry", func(p *CardPayload) { p.ReceiveUntil = p.ExpiresAt }, "ok"},
		{"receive_until 30 d after expiry", func(p *CardPayload) { p.ReceiveUntil = p.ExpiresAt + MaxTTL }, "ok"},
		{"receive_until 30 d + 1 ms after expiry", func(p *CardPayload) { p.ReceiveUntil = p.ExpiresAt + MaxTTL + 1 }, CodeInvalidEvent},
		{"max_packet_bytes 4095", func(p *CardPayload) { p.MaxPacketBytes = 4095 }, CodeInvalidEvent},
		{"max_packet_bytes 4096", func(p *CardPayload) { p.MaxPacketBytes = MinCardPacketBytes }, "ok"},
		{"max_packet_bytes 1 MiB", func(p *CardPayload) { p.MaxPacketBytes = MaxPacketBytes }, "ok"},
		{"max_packet_bytes 1 MiB + 1", func(p *CardPayload) { p.MaxPacketBytes = MaxPacketBytes + 1 }, CodeInvalidEvent},
		{"32-byte mailbox ID", func(p *CardPayload) { p.MailboxID = identity.EncodeBase64URL(make([]byte, 32)) }, CodeInvalidEvent},
		{"31-byte key", func(p *CardPayload) { p.PublicKey = identity.EncodeBase64URL(make([]byte, 31)) }, CodeInvalidEvent},
		{"all-zero key", func(p *CardPayload) { p.PublicKey = identity.EncodeBase64URL(make([]byte, 32)) }, CodeInvalidEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := signValue(t, bob, cardEvent(payloadOf(t, tc.mod), 100))
			c, err := CardFromValue(v, "")
			wantCode(t, err, tc.code)
			if err == nil && (c.Owner() != bob.AgentID() || c.Nonce() != 100 || c.MailboxID() != payloadOf(t, tc.mod).MailboxID) {
				t.Fatalf("card %+v", c.Payload())
			}
		})
	}
}

// littleEndian encodes n mod 2^256 in 32 bytes.
func littleEndian(n *big.Int) []byte {
	n = new(big.Int).Mod(n, new(big.Int).Lsh(big.NewInt(1), 256))
	be := n.FillBytes(make([]byte, 32))
	slices.Reverse(be)
	return be
}

// Low-order points and their non-canonical aliases are refused by the
// probe decapsulation, which stdlib's KEM.NewPublicKey alone does not do
// (it accepts the all-zero key); ordinary keys, bit 255 set or not, pass.
func TestCheckPublicKeyProbe(t *testing.T) {
	if _, err := suiteKEM.NewPublicKey(make([]byte, 32)); err != nil {
		t.Fatalf("KEM.NewPublicKey now refuses the zero key (%v): the probe is still required by the SDK, keep it", err)
	}
	p, _ := new(big.Int).SetString("57896044618658097711785492504343953926634992332820282019728792003956564819949", 10)
	o8a, _ := new(big.Int).SetString("325606250916557431795983626356110631294008115727848805560023387167927233504", 10)
	o8b, _ := new(big.Int).SetString("39382357235489614581723060781553021112529911719440698176882885853963445705823", 10)
	add := func(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }
	one, two := big.NewInt(1), big.NewInt(2)
	low := map[string]*big.Int{
		"0": big.NewInt(0), "1": one, "order 8 a": o8a, "order 8 b": o8b,
		"p-1": new(big.Int).Sub(p, one), "p": p, "p+1": add(p, one),
	}
	for name, n := range low {
		key := identity.EncodeBase64URL(littleEndian(n))
		if err := CheckPublicKey(key); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("low-order %s: %v", name, err)
		}
		// Sealing relies on the card's check, and NewSender refuses one too.
		if _, _, err := hpkeSeal(key, nil, []byte("x")); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("sealing to low-order %s: %v", name, err)
		}
	}
	// At or above 2^255, X25519 drops bit 255 (RFC 7748): these are ordinary
	// points, and the SDK accepts them too (interop "above 2^255" cases).
	masked := map[string]*big.Int{
		"p+order 8 a": add(p, o8a), "2p-1": new(big.Int).Sub(new(big.Int).Mul(two, p), one),
		"2p": new(big.Int).Mul(two, p), "2p+1": add(new(big.Int).Mul(two, p), one),
	}
	for name, n := range masked {
		if err := CheckPublicKey(identity.EncodeBase64URL(littleEndian(n))); err != nil {
			t.Errorf("%s (above 2^255): %v", name, err)
		}
	}
	nine := littleEndian(big.NewInt(9))
	high := slices.Clone(nine)
	high[31] |= 0x80
	for name, b := range map[string][]byte{"9": nine, "9 with bit 255": high, "a real key": mustB64(t, mustKey(t, bobSecret).PublicKey())} {
		if err := CheckPublicKey(identity.EncodeBase64URL(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, bad := range []string{"", "AAAA", strings.Repeat("A", 43) + "=", identity.EncodeBase64URL(make([]byte, 33))} {
		if err := CheckPublicKey(bad); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestCardTampering(t *testing.T) {
	good := cardOf(t, 100).Value()
	other := cardOf(t, 101).Value()
	for _, tc := range []struct {
		name string
		v    func() any
		code string
	}{
		{"another event's hash", func() any { v := clone(t, good).(map[string]any); v["hash"] = other["hash"]; return v }, CodeInvalidEventHash},
		{"another event's signature", func() any {
			v := clone(t, good).(map[string]any)
			v["signature"] = other["signature"]
			return v
		}, CodeInvalidSignature},
		{"signed by another agent", func() any {
			v := clone(t, resign(t, carol, good, func(map[string]any) {})).(map[string]any)
			v["event"].(map[string]any)["actor"] = bob.AgentID()
			return v
		}, CodeInvalidEventHash},
		{"wrong type", func() any { return resign(t, bob, good, func(ev map[string]any) { ev["type"] = TypeMailSubmit }) }, CodeInvalidEvent},
		{"extra event field", func() any { return resign(t, bob, good, func(ev map[string]any) { ev["room_id"] = "x" }) }, CodeInvalidEvent},
		{"extra envelope field", func() any { v := clone(t, good).(map[string]any); v["id"] = "x"; return v }, CodeInvalidEvent},
		{"not an object", func() any { return []any{clone(t, good)} }, CodeInvalidEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CardFromValue(tc.v(), "")
			wantCode(t, err, tc.code)
		})
	}
	if _, err := ParseCard([]byte(`{"a":1,"a":2}`)); ErrorCode(err) != CodeInvalidEvent {
		t.Fatalf("duplicate key: %v", err)
	}
	if _, err := ParseCard(make([]byte, MaxPacketBodyBytes+1)); ErrorCode(err) != CodePayloadTooLarge {
		t.Fatalf("oversize body: %v", err)
	}
}

func TestCheckCardUsable(t *testing.T) {
	open := cardOf(t, 100)
	closed := cardOf(t, 101, func(p *CardPayload) { p.Routes = nil })
	for _, tc := range []struct {
		name  string
		card  *Card
		owner string
		now   int64
		code  string
	}{
		{"open", open, bob.AgentID(), t0, "ok"},
		{"another owner", open, carol.AgentID(), t0, CodeInvalidActor},
		{"future-dated", open, bob.AgentID(), t0 - FutureSkew - 1, CodeTimestampOutOfWindow},
		{"at the skew edge", open, bob.AgentID(), t0 - FutureSkew, "ok"},
		{"closed", closed, bob.AgentID(), t0, CodeMailboxUnavailable},
		{"closed and expired", closed, bob.AgentID(), t0 + day, CodeMailboxUnavailable},
		{"a millisecond before expiry", open, bob.AgentID(), t0 + day - 1, "ok"},
		{"expired", open, bob.AgentID(), t0 + day, CodeStaleCard},
		{"negative clock", open, bob.AgentID(), -1, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, CheckCardUsable(tc.card, tc.owner, tc.now), tc.code) })
	}
	for _, tc := range []struct {
		card *Card
		now  int64
		want string
	}{{open, t0, StatusOpen}, {open, t0 + day, StatusExpired}, {closed, t0, StatusClosed}, {closed, t0 + day, StatusClosed}} {
		if got := tc.card.Status(tc.now); got != tc.want {
			t.Errorf("Status = %s, want %s", got, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	p := DefaultCardPayload(mb, "k", []string{relay}, t0)
	if p.ExpiresAt != t0+30*day || p.ReceiveUntil != t0+60*day || p.MaxPacketBytes != 262144 {
		t.Fatalf("%+v", p)
	}
	c, err := SignCard(bob, DefaultCardPayload(mb, mustKey(t, bobSecret).PublicKey(), []string{relay}, t0), t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := DefaultMessageExpiry(t0, c); got != t0+7*day {
		t.Fatalf("message expiry %d", got)
	}
	short := cardOf(t, 100, func(p *CardPayload) { p.ReceiveUntil = p.ExpiresAt })
	if got := DefaultMessageExpiry(t0, short); got != t0+day {
		t.Fatalf("capped message expiry %d, want receive_until %d", got, t0+day)
	}
	id, err := NewID()
	if err != nil || !ValidID(id, IDBytes) {
		t.Fatalf("NewID %q %v", id, err)
	}
	if id2, _ := NewID(); id2 == id {
		t.Fatal("NewID repeats")
	}
}

// An integer written as a float (or with an exponent) passes the schema's
// "integer" but is refused here, where the SDKs read it as the integer
// (the interop suite's MAIL_DIFFERENCES): never read as zero.
func TestIntegersWrittenAsFloats(t *testing.T) {
	card := cardOf(t, 100).Value()
	for _, tc := range []struct {
		name, field, text string
	}{
		{"max_packet_bytes", "max_packet_bytes", "65536.0"},
		{"expires_at", "expires_at", "1.7908128e12"},
		{"receive_until", "receive_until", "1790899200000.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := clone(t, card).(map[string]any)
			v["event"].(map[string]any)["payload"].(map[string]any)[tc.field] = json.Number(tc.text)
			_, err := CardFromValue(v, "")
			wantCode(t, err, CodeInvalidEvent)
			if e := err.(*identity.Error); e.Pointer != "/event/payload/"+tc.field {
				t.Fatalf("pointer %s", e.Pointer)
			}
		})
	}
}
