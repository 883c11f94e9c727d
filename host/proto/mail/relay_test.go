package mail

import (
	"net/http"
	"testing"
	"time"

	"apconnect/host/identity"
)

func TestHTTPStatus(t *testing.T) {
	for code, status := range map[string]int{
		CodeMailboxUnavailable: 404, CodeStaleCard: 409, CodeMailboxConflict: 409, CodePacketExpired: 410,
		CodePermissionDenied: 403, CodeInvalidToken: 401, CodePayloadTooLarge: 413, CodeRateLimited: 429,
		CodeInvalidEvent: 400, CodeInvalidRequest: 400, CodeNonceNotGreater: 400, CodeTimestampOutOfWindow: 400,
		CodeInvalidSignature: 400, "anything else": http.StatusBadRequest,
	} {
		if got := HTTPStatus(code); got != status {
			t.Errorf("%s: %d, want %d", code, got, status)
		}
	}
}

func TestCheckPublish(t *testing.T) {
	c100 := cardOf(t, 100)
	c101 := cardOf(t, 101)
	conflict := cardOf(t, 100, func(p *CardPayload) { p.MaxPacketBytes = 32768 })
	foreign, err := SignCard(alice, payloadOf(t), t0, 300)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := cardOf(t, 100, func(p *CardPayload) { p.Routes = []string{mirror} })
	for _, tc := range []struct {
		name          string
		card, current *Card
		now           int64
		want          CardAction
		code          string
	}{
		{"first card", c100, nil, t0, CardCreate, "ok"},
		{"first card not routed here", elsewhere, nil, t0, 0, CodePermissionDenied},
		{"newer card", c101, c100, t0, CardReplace, "ok"},
		{"newer card no longer routed here", elsewhere, cardOf(t, 99), t0, CardReplace, "ok"},
		{"the current card again", c100, c100, t0 + day, CardResubmit, "ok"},
		{"older card", c100, c101, t0, 0, CodeNonceNotGreater},
		{"same nonce, other content", conflict, c100, t0, 0, CodeNonceNotGreater},
		{"another owner's mailbox", foreign, c100, t0, 0, CodeMailboxConflict},
		{"another owner, even routed elsewhere", foreign, elsewhere, t0, 0, CodeMailboxConflict},
		{"old card", c100, nil, t0 + FutureSkew + 1, 0, CodeTimestampOutOfWindow},
		{"future card", c100, nil, t0 - FutureSkew - 1, 0, CodeTimestampOutOfWindow},
		{"card at the window's edges", c100, nil, t0 + FutureSkew, CardCreate, "ok"},
		{"negative clock", c100, nil, -1, 0, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckPublish(tc.card, tc.current, relay, tc.now)
			wantCode(t, err, tc.code)
			if got != tc.want {
				t.Fatalf("action %v, want %v", got, tc.want)
			}
			if tc.code == CodeNonceNotGreater {
				if n, _ := identity.IntValue(err.(*identity.Error).Data["max_nonce"]); n != tc.current.Nonce() {
					t.Fatalf("data %v", err.(*identity.Error).Data)
				}
			}
		})
	}
}

func TestCheckDelivery(t *testing.T) {
	card := cardOf(t, 100)
	rotated := cardOf(t, 101)
	moved := cardOf(t, 102, func(p *CardPayload) { p.Routes = []string{mirror} })
	closed := cardOf(t, 103, func(p *CardPayload) { p.Routes = nil })
	p := sealed(t, letter(), card, 300)
	short := sealed(t, letter(func(m *Message) { m.ExpiresAt = t0 + 1000 }), card, 301)
	re := func(change func(ev map[string]any)) *Packet {
		q, err := PacketFromValue(resign(t, alice, p.Value(), change), "")
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	future := re(func(ev map[string]any) { ev["created_at"] = t0 + FutureSkew + 1 })
	beyond := re(func(ev map[string]any) {
		ev["payload"].(map[string]any)["header"].(map[string]any)["expires_at"] = t0 + 2*day + 1
	})
	small := cardOf(t, 104, func(p *CardPayload) { p.MaxPacketBytes = MinCardPacketBytes })
	big := rawSeal(t, alice, small, mustFrame(t, mustCanon(t, letter(func(m *Message) {
		m.Parts = []Part{BytesPart("a/b", make([]byte, 3000), "")}
	}))), headerFor(small))
	earlier := &DeliveryResult{PacketID: p.ID(), AcceptedAt: t0 - 5}
	d := func(mod func(*Delivery)) Delivery {
		x := Delivery{Origin: relay, MailboxID: mb, Packet: p, Current: card, Quota: DefaultQuota(), Now: t0}
		if mod != nil {
			mod(&x)
		}
		return x
	}
	for _, tc := range []struct {
		name  string
		d     Delivery
		code  string
		fresh bool
	}{
		{"packet", d(nil), "ok", true},
		{"negative clock", d(func(x *Delivery) { x.Now = -1 }), CodeInvalidRequest, false},
		{"bad path ID", d(func(x *Delivery) { x.MailboxID = "x" }), CodeInvalidRequest, false},
		{"another mailbox's path", d(func(x *Delivery) { x.MailboxID = mb2 }), CodeInvalidEvent, false},
		{"unknown mailbox", d(func(x *Delivery) { x.Current = nil }), CodeMailboxUnavailable, false},
		{"unknown mailbox beats a tombstone", d(func(x *Delivery) { x.Current, x.Tombstone = nil, earlier }), CodeMailboxUnavailable, false},
		{"accepted before", d(func(x *Delivery) { x.Tombstone = earlier }), "ok", false},
		{"accepted before, even if now stale", d(func(x *Delivery) { x.Tombstone, x.Current = earlier, rotated }), "ok", false},
		{"relay not a route", d(func(x *Delivery) { x.Current = moved }), CodeMailboxUnavailable, false},
		{"mailbox closed", d(func(x *Delivery) { x.Current = closed }), CodeMailboxUnavailable, false},
		{"not the current card", d(func(x *Delivery) { x.Current = rotated }), CodeStaleCard, false},
		{"card expired", d(func(x *Delivery) { x.Now = t0 + day }), CodeStaleCard, false},
		{"packet expired", d(func(x *Delivery) { x.Packet, x.Now = short, t0+1000 }), CodePacketExpired, false},
		{"packet a millisecond before expiry", d(func(x *Delivery) { x.Packet, x.Now = short, t0+999 }), "ok", true},
		{"packet outlives receive_until", d(func(x *Delivery) { x.Packet = beyond }), CodeInvalidEvent, false},
		{"packet future-dated", d(func(x *Delivery) { x.Packet = future }), CodeTimestampOutOfWindow, false},
		{"packet over the card's limit", d(func(x *Delivery) { x.Packet, x.Current = big, small }), CodePayloadTooLarge, false},
		{"packet quota", d(func(x *Delivery) { x.Usage.Packets = DefaultRelayMaxPackets }), CodeRateLimited, false},
		{"byte quota", d(func(x *Delivery) { x.Usage.Bytes = DefaultRelayMaxBytes - int64(p.Size()) + 1 }), CodeRateLimited, false},
		{"byte quota met exactly", d(func(x *Delivery) { x.Usage.Bytes = DefaultRelayMaxBytes - int64(p.Size()) }), "ok", true},
		{"seq exhausted", d(func(x *Delivery) { x.Usage.LastSeq = identity.MaxSafeInteger }), CodeRateLimited, false},
		{"blocked sender", d(func(x *Delivery) { x.SenderBlocked = true }), CodePermissionDenied, false},
		{"quota before blocking", d(func(x *Delivery) { x.SenderBlocked, x.Usage.Packets = true, DefaultRelayMaxPackets }), CodeRateLimited, false},
		{"stale card before packet expiry", d(func(x *Delivery) { x.Packet, x.Now, x.Current = short, t0+1000, rotated }), CodeStaleCard, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, fresh, err := CheckDelivery(tc.d)
			wantCode(t, err, tc.code)
			if fresh != tc.fresh {
				t.Fatalf("fresh %v", fresh)
			}
			switch {
			case err == nil && fresh && (res.PacketID != tc.d.Packet.ID() || res.AcceptedAt != tc.d.Now):
				t.Fatalf("result %+v", res)
			case err == nil && !fresh && res != *tc.d.Tombstone:
				t.Fatalf("replay %+v", res)
			}
		})
	}
}

func TestRetention(t *testing.T) {
	card := cardOf(t, 100)
	h := Header{ExpiresAt: t0 + 10}
	if !PacketLive(h, t0+9) || PacketLive(h, t0+10) {
		t.Fatal("PacketLive")
	}
	for _, tc := range []struct {
		packets, tombstones int
		now                 int64
		want                bool
	}{{0, 0, t0 + 2*day - 1, true}, {0, 0, t0 + 2*day, false}, {1, 0, t0 + 3*day, true}, {0, 1, t0 + 3*day, true}} {
		if got := MailboxRetained(card, tc.packets, tc.tombstones, tc.now); got != tc.want {
			t.Errorf("%+v: %v", tc, got)
		}
	}
	if !KeyRetained(card, t0+2*day-1) || KeyRetained(card, t0+2*day) {
		t.Fatal("KeyRetained")
	}
}

func token(t *testing.T, s identity.Signer, origin string, now int64) string {
	t.Helper()
	tok, err := identity.IssueToken(s, origin, time.UnixMilli(now), 300*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestOwnerCalls(t *testing.T) {
	card := cardOf(t, 100)
	now := t0 + 1234
	bobs, carols := token(t, bob, relay, now), token(t, carol, relay, now)
	for _, tc := range []struct {
		name, tok, origin, owner string
		now                      int64
		code                     string
	}{
		{"owner", bobs, relay, bob.AgentID(), now, "ok"},
		{"any requester", carols, relay, "", now, "ok"},
		{"not the owner", carols, relay, bob.AgentID(), now, CodePermissionDenied},
		{"another audience", token(t, bob, mirror, now), relay, bob.AgentID(), now, CodeInvalidToken},
		{"issued in the future", bobs, relay, bob.AgentID(), now - 1000, CodeInvalidToken},
		{"expired", bobs, relay, bob.AgentID(), now + 301_000, CodeInvalidToken},
		{"garbage", "a.b.c", relay, bob.AgentID(), now, CodeInvalidToken},
		{"origin not an origin", bobs, relay + "/", bob.AgentID(), now, CodeInvalidRequest},
		{"negative clock", bobs, relay, bob.AgentID(), -1, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := VerifyOwnerToken(tc.tok, tc.origin, tc.owner, tc.now, 0)
			wantCode(t, err, tc.code)
			if err == nil && claims.Aud != relay {
				t.Fatalf("claims %+v", claims)
			}
		})
	}
	// A tolerated skew lets a token issued a second ahead through.
	if _, err := VerifyOwnerToken(bobs, relay, bob.AgentID(), now-1000, identity.DefaultClockSkew); err != nil {
		t.Fatalf("skew: %v", err)
	}
	for _, tc := range []struct {
		name, mailbox, tok string
		current            *Card
		code               string
	}{
		{"owner", mb, bobs, card, "ok"},
		{"bad path", "x", bobs, card, CodeInvalidRequest},
		{"bad path before bad token", "x", "a.b.c", card, CodeInvalidRequest},
		{"bad token", mb, "a.b.c", card, CodeInvalidToken},
		{"bad token before unknown mailbox", mb, "a.b.c", nil, CodeInvalidToken},
		{"unknown mailbox", mb, bobs, nil, CodeMailboxUnavailable},
		{"unknown mailbox before ownership", mb, carols, nil, CodeMailboxUnavailable},
		{"not the owner", mb, carols, card, CodePermissionDenied},
	} {
		t.Run("call/"+tc.name, func(t *testing.T) {
			_, err := CheckOwnerCall(tc.mailbox, tc.tok, relay, tc.current, now, 0)
			wantCode(t, err, tc.code)
		})
	}
}

func TestListParameters(t *testing.T) {
	for limit, code := range map[int]string{0: CodeInvalidRequest, 1: "ok", 1000: "ok", 1001: CodeInvalidRequest, -1: CodeInvalidRequest} {
		wantCode(t, CheckListLimit(limit), code)
	}
	for _, tc := range []struct {
		cursor string
		want   int64
		ok     bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"9007199254740991", identity.MaxSafeInteger, true},
		{"9007199254740992", 0, false}, {"01", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"", 0, false},
		{"1.0", 0, false}, {"99999999999999999", 0, false}, {" 1", 0, false},
	} {
		got, err := ParsePacketCursor(tc.cursor)
		if (err == nil) != tc.ok || got != tc.want || (err != nil && ErrorCode(err) != CodeInvalidRequest) {
			t.Errorf("%q: %d, %v", tc.cursor, got, err)
		}
	}
	wantCode(t, CheckMailboxCursor(mb), "ok")
	wantCode(t, CheckMailboxCursor("x"), CodeInvalidRequest)
	wantCode(t, CheckPathID(cardOf(t, 1).Hash(), 32), "ok")
	wantCode(t, CheckPathID(mb, 32), CodeInvalidRequest)
	if d := Discovery(relay); d["protocol"] != Protocol || d["service"] != relay {
		t.Fatalf("%v", d)
	}
	wantCode(t, ValidateDiscovery(clone(t, Discovery(relay)), relay), "ok")
	for a, s := range map[CardAction]string{CardCreate: "create", CardReplace: "replace", CardResubmit: "resubmit", 0: "invalid"} {
		if a.String() != s {
			t.Errorf("%d: %s", a, a)
		}
	}
}
