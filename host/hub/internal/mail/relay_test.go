package mail_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	rules "apconnect/host/proto/mail"
)

var t0 = time.UnixMilli(1790726400000)

// relay is a hub on a test clock with its two agents: bob owns mailboxes,
// alice writes to them.
type relay struct {
	t          *testing.T
	h          *hubtest.Hub
	alice, bob *hubtest.Agent
	carol      *hubtest.Agent
	key        *rules.Key
}

func newRelay(t *testing.T, opts ...hubtest.Option) *relay {
	t.Helper()
	clock := hubtest.NewClock(t0)
	h := hubtest.Start(t, append([]hubtest.Option{hubtest.WithClock(clock)}, opts...)...)
	key, err := rules.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return &relay{t: t, h: h, alice: hubtest.NewAgent(0x51), bob: hubtest.NewAgent(0x52), carol: hubtest.NewAgent(0x53), key: key}
}

func (r *relay) now() time.Time { return r.h.Clock.Now() }

// card signs a card of owner for mailbox id with the relay's routes.
func (r *relay) card(owner *hubtest.Agent, id string, nonce int64, edit ...func(*rules.CardPayload)) *rules.Card {
	r.t.Helper()
	p := rules.DefaultCardPayload(id, r.key.PublicKey(), []string{r.h.Origin()}, r.now().UnixMilli())
	for _, e := range edit {
		e(&p)
	}
	c, err := rules.SignCard(owner.Signer, p, r.now().UnixMilli(), nonce)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

func (r *relay) publish(c *rules.Card) *hubtest.Response {
	b, _ := c.MarshalJSON()
	return r.h.Do(http.MethodPost, "/v1/mailboxes", b, nil)
}

// packet seals a letter from alice to the card's owner.
func (r *relay) packet(c *rules.Card, nonce int64, edit ...func(*rules.MessageContent)) *rules.Packet {
	r.t.Helper()
	now := r.now().UnixMilli()
	tid, _ := rules.NewID()
	content := rules.MessageContent{To: c.Owner(), ExpiresAt: now + int64(time.Hour/time.Millisecond), ThreadID: tid, Parts: []rules.Part{rules.TextPart("hello")}}
	for _, e := range edit {
		e(&content)
	}
	m, err := rules.NewMessage(r.alice.ID, now, content)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := rules.Seal(r.alice.Signer, m, c, nonce, now)
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

func (r *relay) deliver(id string, p *rules.Packet) *hubtest.Response {
	return r.h.Do(http.MethodPost, "/v1/mailboxes/"+id+"/packets", p.Canonical(), nil)
}

func (r *relay) owner(a *hubtest.Agent) http.Header {
	return hubtest.Bearer(a.Token(r.t, r.h.Origin(), r.now(), time.Minute))
}

func want(t *testing.T, what string, got *hubtest.Response, status int, code string) {
	t.Helper()
	if got.Status != status || got.ErrorCode() != code {
		t.Errorf("%s: HTTP %d %q, want %d %q: %s", what, got.Status, got.ErrorCode(), status, code, got.Body)
	}
	if ct := got.Header.Get("Content-Type"); got.Status != http.StatusNoContent && ct != "application/json" {
		t.Errorf("%s: content type %q", what, ct)
	}
}

func newID(t *testing.T) string {
	id, err := rules.NewID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestDiscovery(t *testing.T) {
	r := newRelay(t)
	res := r.h.Do(http.MethodGet, rules.DiscoveryPath, nil, nil)
	want(t, "discovery", res, 200, "")
	var v any
	res.Decode(t, &v)
	if err := rules.ValidateDiscovery(v, r.h.Origin()); err != nil {
		t.Fatal(err)
	}
}

// Card publication in the SDK relay's order, every status of the crate's
// test relay.
func TestPublish(t *testing.T) {
	r := newRelay(t)
	id := newID(t)
	first := r.card(r.bob, id, 100)
	res := r.publish(first)
	want(t, "first card", res, 200, "")
	var rec map[string]any
	res.Decode(t, &rec)
	if rec["accepted_at"] != float64(r.now().UnixMilli()) || rec["envelope"].(map[string]any)["hash"] != first.Hash() {
		t.Fatalf("record %v", rec)
	}
	r.h.Clock.Advance(time.Second)
	want(t, "exact resubmission", r.publish(first), 200, "")
	var again map[string]any
	r.publish(first).Decode(t, &again)
	if again["accepted_at"] != rec["accepted_at"] {
		t.Errorf("a resubmission answers the stored record: %v", again)
	}
	older := r.card(r.bob, id, 99)
	res = r.publish(older)
	want(t, "older nonce", res, http.StatusConflict, "nonce_not_greater")
	if res.Header.Get("Max-Seen-Nonce") != "100" {
		t.Errorf("Max-Seen-Nonce %q", res.Header.Get("Max-Seen-Nonce"))
	}
	want(t, "another owner", r.publish(r.card(r.carol, id, 500)), http.StatusConflict, "mailbox_conflict")
	elsewhere := r.card(r.bob, newID(t), 200, func(p *rules.CardPayload) { p.Routes = []string{"https://elsewhere.example"} })
	want(t, "first card not routed here", r.publish(elsewhere), http.StatusForbidden, "permission_denied")
	// A newer card replaces the current one, closed cards included.
	closed := r.card(r.bob, id, 300, func(p *rules.CardPayload) { p.Routes = []string{} })
	want(t, "closing card", r.publish(closed), 200, "")
	got := r.h.Do(http.MethodGet, "/v1/mailboxes/"+id+"/card", nil, nil)
	want(t, "card read", got, 200, "")
	if !bytes.Contains(got.Body, []byte(closed.Hash())) {
		t.Errorf("card read %s", got.Body)
	}
	// The shared live nonce: a card whose nonce the hub saw from another
	// protocol is refused last, after its own rules.
	r.h.Post("/v1/profiles", r.bob.ProfileUpdate(t, r.now(), 1000, `{"id":"`+r.bob.ID+`","name":"Bob"}`))
	want(t, "nonce the hub saw", r.publish(r.card(r.bob, id, 900)), http.StatusConflict, "nonce_not_greater")
	// The live window.
	stale := r.card(r.bob, newID(t), 2000)
	r.h.Clock.Advance(301 * time.Second)
	want(t, "outside the live window", r.publish(stale), http.StatusBadRequest, "timestamp_out_of_window")
	bad := []byte(`{"event":{}}`)
	want(t, "not a card", r.h.Do(http.MethodPost, "/v1/mailboxes", bad, nil), http.StatusBadRequest, "invalid_event")
	want(t, "unknown card", r.h.Do(http.MethodGet, "/v1/mailboxes/"+newID(t)+"/card", nil, nil), http.StatusNotFound, "mailbox_unavailable")
	want(t, "bad mailbox id", r.h.Do(http.MethodGet, "/v1/mailboxes/xyz/card", nil, nil), http.StatusBadRequest, "invalid_request")
}

// Delivery in the SDK relay's order: statuses, idempotence through
// tombstones, the quota.
func TestDeliver(t *testing.T) {
	r := newRelay(t, hubtest.WithOptions(func(o *hub.Options) { o.Limits.Mail.MaxPackets = 2 }))
	id := newID(t)
	card := r.card(r.bob, id, 100)
	want(t, "card", r.publish(card), 200, "")
	p := r.packet(card, 1)
	res := r.deliver(id, p)
	want(t, "delivery", res, http.StatusAccepted, "")
	var first map[string]any
	res.Decode(t, &first)
	if first["packet_id"] != p.ID() {
		t.Fatalf("result %v", first)
	}
	r.h.Clock.Advance(time.Second)
	again := r.deliver(id, p)
	want(t, "resent packet", again, http.StatusAccepted, "")
	var second map[string]any
	again.Decode(t, &second)
	if second["accepted_at"] != first["accepted_at"] {
		t.Errorf("a resent packet gets its first result: %v %v", first, second)
	}
	// Deleted, it is still recognized by its tombstone.
	del := r.h.Do(http.MethodDelete, "/v1/mailboxes/"+id+"/packets/"+p.ID(), nil, r.owner(r.bob))
	if del.Status != http.StatusNoContent || len(del.Body) != 0 {
		t.Fatalf("delete: %d %s", del.Status, del.Body)
	}
	want(t, "resent after deletion", r.deliver(id, p), http.StatusAccepted, "")
	list := r.h.Do(http.MethodGet, "/v1/mailboxes/"+id+"/packets", nil, r.owner(r.bob))
	if !bytes.Equal(bytes.TrimSpace(list.Body), []byte(`{"result":[]}`)) {
		t.Errorf("a tombstone stores nothing: %s", list.Body)
	}
	want(t, "second", r.deliver(id, r.packet(card, 2)), http.StatusAccepted, "")
	want(t, "third", r.deliver(id, r.packet(card, 3)), http.StatusAccepted, "")
	want(t, "over the quota", r.deliver(id, r.packet(card, 4)), http.StatusTooManyRequests, "rate_limited")

	other := newID(t)
	want(t, "path and header differ", r.deliver(other, r.packet(card, 5)), http.StatusBadRequest, "invalid_event")
	want(t, "bad path id", r.deliver("nope", r.packet(card, 6)), http.StatusBadRequest, "invalid_request")
	unknown := r.card(r.bob, other, 101)
	want(t, "unknown mailbox", r.deliver(other, r.packet(unknown, 7)), http.StatusNotFound, "mailbox_unavailable")
	short := r.packet(card, 8, func(c *rules.MessageContent) { c.ExpiresAt = r.now().UnixMilli() + 1000 })
	r.h.Clock.Advance(2 * time.Second)
	want(t, "expired packet", r.deliver(id, short), http.StatusGone, "packet_expired")
	newer := r.card(r.bob, id, 200)
	want(t, "newer card", r.publish(newer), 200, "")
	want(t, "packet for the old card", r.deliver(id, r.packet(card, 9)), http.StatusConflict, "stale_card")
	tampered := map[string]any{}
	_ = json.Unmarshal(r.packet(newer, 10).Canonical(), &tampered)
	tampered["event"].(map[string]any)["nonce"] = json.Number("11")
	b, _ := json.Marshal(tampered)
	want(t, "tampered packet", r.h.Do(http.MethodPost, "/v1/mailboxes/"+id+"/packets", b, nil), http.StatusBadRequest, "invalid_event_hash")
	huge := bytes.Repeat([]byte(" "), rules.MaxPacketBodyBytes+1)
	want(t, "oversized body", r.h.Do(http.MethodPost, "/v1/mailboxes/"+id+"/packets", huge, nil), http.StatusRequestEntityTooLarge, "payload_too_large")
	closed := r.card(r.bob, id, 300, func(p *rules.CardPayload) { p.Routes = []string{} })
	want(t, "closing", r.publish(closed), 200, "")
	want(t, "closed mailbox", r.deliver(id, r.packet(newer, 12)), http.StatusNotFound, "mailbox_unavailable")
}

// Owner calls: the token, the owner, the pages.
func TestOwnerCalls(t *testing.T) {
	r := newRelay(t)
	id := newID(t)
	card := r.card(r.bob, id, 100)
	want(t, "card", r.publish(card), 200, "")
	var ids []string
	for i := range 5 {
		p := r.packet(card, int64(i+1))
		want(t, "delivery", r.deliver(id, p), http.StatusAccepted, "")
		ids = append(ids, p.ID())
	}
	path := "/v1/mailboxes/" + id + "/packets"
	want(t, "no token", r.h.Do(http.MethodGet, path, nil, nil), http.StatusUnauthorized, "invalid_token")
	want(t, "bad token", r.h.Do(http.MethodGet, path, nil, hubtest.Bearer("x.y.z")), http.StatusUnauthorized, "invalid_token")
	want(t, "another agent", r.h.Do(http.MethodGet, path, nil, r.owner(r.alice)), http.StatusForbidden, "permission_denied")
	want(t, "unknown mailbox", r.h.Do(http.MethodGet, "/v1/mailboxes/"+newID(t)+"/packets", nil, r.owner(r.bob)), http.StatusNotFound, "mailbox_unavailable")
	want(t, "limit 0", r.h.Do(http.MethodGet, path+"?limit=0", nil, r.owner(r.bob)), http.StatusBadRequest, "invalid_request")
	want(t, "bad cursor", r.h.Do(http.MethodGet, path+"?cursor=01", nil, r.owner(r.bob)), http.StatusBadRequest, "invalid_request")
	var got []string
	cursor := ""
	for {
		q := path + "?limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		res := r.h.Do(http.MethodGet, q, nil, r.owner(r.bob))
		want(t, "page", res, 200, "")
		var v any
		if err := json.Unmarshal(res.Body, &v); err != nil {
			t.Fatal(err)
		}
		strict, _ := identity.ParseStrict(res.Body)
		page, err := rules.PacketListFromValue(strict, id, 2)
		if err != nil {
			t.Fatalf("page %s: %v", res.Body, err)
		}
		for _, rec := range page.Result {
			got = append(got, rec.PacketID)
		}
		if page.NextCursor == "" {
			break
		}
		if page.NextCursor != strconv.FormatInt(page.Result[len(page.Result)-1].Seq, 10) {
			t.Errorf("cursor %q", page.NextCursor)
		}
		cursor = page.NextCursor
	}
	if len(got) != 5 || got[0] != ids[0] || got[4] != ids[4] {
		t.Errorf("listed %v, want %v", got, ids)
	}
	want(t, "delete by another", r.h.Do(http.MethodDelete, path+"/"+ids[0], nil, r.owner(r.alice)), http.StatusForbidden, "permission_denied")
	want(t, "delete a bad id", r.h.Do(http.MethodDelete, path+"/xyz", nil, r.owner(r.bob)), http.StatusBadRequest, "invalid_request")
	for range 2 {
		if res := r.h.Do(http.MethodDelete, path+"/"+ids[0], nil, r.owner(r.bob)); res.Status != http.StatusNoContent {
			t.Errorf("delete: %d %s", res.Status, res.Body)
		}
	}
	// The agent's mailboxes, by ID, in pages.
	for i := range 2 {
		want(t, "card", r.publish(r.card(r.bob, newID(t), int64(200+i))), 200, "")
	}
	me := func(q string, a *hubtest.Agent) *hubtest.Response {
		return r.h.Do(http.MethodGet, "/v1/me/mailboxes"+q, nil, r.owner(a))
	}
	want(t, "me without token", r.h.Do(http.MethodGet, "/v1/me/mailboxes", nil, nil), http.StatusUnauthorized, "invalid_token")
	want(t, "me bad cursor", me("?cursor=x", r.bob), http.StatusBadRequest, "invalid_request")
	res := me("?limit=1", r.bob)
	strict, _ := identity.ParseStrict(res.Body)
	page, err := rules.MailboxListFromValue(strict, r.bob.ID, 1)
	if err != nil || len(page.Result) != 1 || page.NextCursor == "" {
		t.Fatalf("me page: %v %s", err, res.Body)
	}
	if res := me("", r.alice); !bytes.Equal(bytes.TrimSpace(res.Body), []byte(`{"result":[]}`)) {
		t.Errorf("alice has no mailbox here: %s", res.Body)
	}
}

// Pruning: expired packets and tombstones go, then a mailbox past its
// receive_until.
func TestPrune(t *testing.T) {
	r := newRelay(t, hubtest.WithOptions(func(o *hub.Options) { o.Limits.Mail.PruneInterval = 20 * time.Millisecond }))
	id := newID(t)
	card := r.card(r.bob, id, 100, func(p *rules.CardPayload) {
		p.ExpiresAt = r.now().UnixMilli() + int64(2*time.Hour/time.Millisecond)
		p.ReceiveUntil = p.ExpiresAt
	})
	want(t, "card", r.publish(card), 200, "")
	p := r.packet(card, 1)
	want(t, "delivery", r.deliver(id, p), http.StatusAccepted, "")
	r.h.Clock.Advance(3 * time.Hour)
	deadline := time.Now().Add(5 * time.Second)
	for {
		res := r.h.Do(http.MethodGet, "/v1/mailboxes/"+id+"/card", nil, nil)
		if res.Status == http.StatusNotFound {
			want(t, "forgotten mailbox", res, http.StatusNotFound, "mailbox_unavailable")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mailbox was not pruned: %d %s", res.Status, res.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
