package mail

import "testing"

func TestDecidePin(t *testing.T) {
	c100 := cardOf(t, 100)
	c101 := cardOf(t, 101, func(p *CardPayload) { p.PublicKey = mustKey(t, rotSecret).PublicKey() })
	conflict := cardOf(t, 100, func(p *CardPayload) { p.MaxPacketBytes = 32768 })
	other := cardOf(t, 100, func(p *CardPayload) { p.MailboxID = mb2 })
	pin := func(c *Card) *Pin { p := PinOf(c); return &p }
	for _, tc := range []struct {
		name   string
		pinned *Pin
		card   *Card
		owner  string
		now    int64
		want   PinAction
		code   string
	}{
		{"first card", nil, c100, bob.AgentID(), t0, PinStore, "ok"},
		{"the pinned card", pin(c100), c100, bob.AgentID(), t0, PinKeep, "ok"},
		{"a newer card", pin(c100), c101, bob.AgentID(), t0, PinStore, "ok"},
		{"an older card", pin(c101), c100, bob.AgentID(), t0, 0, CodeStaleCard},
		{"same nonce, other content", pin(c100), conflict, bob.AgentID(), t0, 0, CodeStaleCard},
		{"expired card, pinned all the same", nil, c100, bob.AgentID(), t0 + 2*day, PinStore, "ok"},
		{"another owner", nil, c100, carol.AgentID(), t0, 0, CodeInvalidActor},
		{"future-dated", nil, c100, bob.AgentID(), t0 - FutureSkew - 1, 0, CodeTimestampOutOfWindow},
		{"at the skew edge", nil, c100, bob.AgentID(), t0 - FutureSkew, PinStore, "ok"},
		{"pin of another mailbox", pin(other), c100, bob.AgentID(), t0, 0, CodeInvalidRequest},
		{"negative clock", nil, c100, bob.AgentID(), -1, 0, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecidePin(tc.pinned, tc.card, tc.owner, tc.now)
			wantCode(t, err, tc.code)
			if got != tc.want {
				t.Fatalf("action %v, want %v", got, tc.want)
			}
		})
	}
	p := PinOf(c100)
	if PinExpired(p, t0+MaxTTL+FutureSkew-1) || !PinExpired(p, t0+MaxTTL+FutureSkew) {
		t.Fatal("a pin lives until created_at + 30 d + 300 s")
	}
}

// The cache pins before the usability check, as the SDK does: a closed
// card that is newer still becomes the pin, so an older open one is then
// refused.
func TestCardCache(t *testing.T) {
	c100 := cardOf(t, 100)
	closed := cardOf(t, 102, func(p *CardPayload) { p.Routes = nil })
	c101 := cardOf(t, 101)
	cache := NewCardCache()
	if _, err := cache.Observe(c100, bob.AgentID(), t0, true); err != nil {
		t.Fatal(err)
	}
	_, err := cache.Observe(closed, bob.AgentID(), t0, true)
	wantCode(t, err, CodeMailboxUnavailable)
	if cache.Get(bob.AgentID(), mb).Hash() != closed.Hash() {
		t.Fatal("a refused but newer card is not the pin")
	}
	_, err = cache.Observe(c101, bob.AgentID(), t0, true)
	wantCode(t, err, CodeStaleCard)
	if _, err := cache.Observe(closed, bob.AgentID(), t0, false); err != nil {
		t.Fatal(err)
	}
	if cache.Len() != 1 || cache.Get(carol.AgentID(), mb) != nil {
		t.Fatal("pins are per owner and mailbox")
	}
	cache.Prune(t0 + MaxTTL + FutureSkew - 1)
	if cache.Len() != 1 {
		t.Fatal("pruned early")
	}
	cache.Prune(t0 + MaxTTL + FutureSkew)
	if cache.Len() != 0 {
		t.Fatal("not pruned")
	}
	for a, s := range map[PinAction]string{PinStore: "store", PinKeep: "keep", 0: "invalid"} {
		if a.String() != s {
			t.Errorf("%d: %s", a, a)
		}
	}
}
