package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/mail"
)

// mailFixture is a card of bob's published on a relay and a packet of
// alice's sealed to it.
func mailFixture(t *testing.T, relay string, bob, alice identity.Signer) (*mail.Card, *mail.Packet) {
	t.Helper()
	key, err := mail.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := mail.NewID()
	now := time.Now().UnixMilli()
	card, err := mail.SignCard(bob, mail.DefaultCardPayload(id, key.PublicKey(), []string{relay}, now), now, now)
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := mail.NewID()
	m, err := mail.NewMessage(alice.AgentID(), now, mail.MessageContent{To: bob.AgentID(), ExpiresAt: now + 3600_000, ThreadID: tid,
		Parts: []mail.Part{mail.TextPart("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := mail.Seal(alice, m, card, now, now)
	if err != nil {
		t.Fatal(err)
	}
	return card, p
}

// Every endpoint against the real hub's relay, with the client's checks.
func TestMailRelayAgainstTheHub(t *testing.T) {
	h, hc := realHub(t)
	bob, alice := hubtest.NewAgent(0x41), hubtest.NewAgent(0x42)
	r, err := NewMailRelay(h.Origin(), hc, bob.Signer, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if d, err := r.Discovery(ctx); err != nil || d["service"] != h.Origin() {
		t.Fatalf("discovery %v %v", d, err)
	}
	card, p := mailFixture(t, h.Origin(), bob.Signer, alice.Signer)
	rec, err := r.Publish(ctx, card)
	if err != nil || rec.Card.Hash() != card.Hash() {
		t.Fatalf("publish %v %v", rec, err)
	}
	if got, err := r.Card(ctx, card.MailboxID(), bob.ID); err != nil || got.Card.Hash() != card.Hash() {
		t.Fatalf("card %v %v", got, err)
	}
	if _, err := r.Card(ctx, card.MailboxID(), alice.ID); mail.ErrorCode(err) != mail.CodeInvalidActor {
		t.Fatalf("card of another owner: %v", err)
	}
	res, err := r.Deliver(ctx, p)
	if err != nil || res.PacketID != p.ID() {
		t.Fatalf("deliver %v %v", res, err)
	}
	page, err := r.Packets(ctx, card.MailboxID(), 10, "")
	if err != nil || len(page.Result) != 1 || page.Result[0].PacketID != p.ID() {
		t.Fatalf("packets %+v %v", page, err)
	}
	if err := r.Delete(ctx, card.MailboxID(), p.ID()); err != nil {
		t.Fatal(err)
	}
	if boxes, err := r.Mailboxes(ctx, 10, ""); err != nil || len(boxes.Result) != 1 {
		t.Fatalf("mailboxes %+v %v", boxes, err)
	}
	// A relay refusal is the service's *Error, with its status.
	var ce *Error
	unknown, _ := mail.NewID()
	if _, err := r.Card(ctx, unknown, bob.ID); !errors.As(err, &ce) || ce.Status != 404 || ce.Code != mail.CodeMailboxUnavailable {
		t.Fatalf("unknown mailbox: %v", err)
	}
	// Owner calls need the signer; bad arguments never reach the relay.
	anon, _ := NewMailRelay(h.Origin(), hc, nil, Options{})
	if _, err := anon.Packets(ctx, card.MailboxID(), 10, ""); !errors.Is(err, ErrNoSigner) {
		t.Fatalf("packets without a signer: %v", err)
	}
	if _, err := r.Packets(ctx, card.MailboxID(), 0, ""); mail.ErrorCode(err) != mail.CodeInvalidRequest {
		t.Fatalf("limit 0: %v", err)
	}
	if err := r.Delete(ctx, "x", p.ID()); mail.ErrorCode(err) != mail.CodeInvalidRequest {
		t.Fatalf("bad mailbox ID: %v", err)
	}
}

// A relay's success that breaks the SDK's response rules is refused with
// the SDK's code: another status, another content type, a redirect, a body
// on a 204, an answer that is not the record asked for, too large a body.
func TestMailRelayResponseChecks(t *testing.T) {
	f := newFake(t)
	bob, alice := testSigner("bob"), testSigner("alice")
	card, p := mailFixture(t, f.origin, bob, alice)
	r, err := NewMailRelay(f.origin, f.httpClient(), bob, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	r.maxBytes = 64 << 10 // MaxMailResponseBytes is 128 MiB
	ctx := context.Background()
	deliverPath := "/v1/mailboxes/" + card.MailboxID() + "/packets"
	good := `{"packet_id":"` + p.ID() + `","accepted_at":` + itoa64(time.Now().UnixMilli()) + `}`
	var answer func(w http.ResponseWriter, r *http.Request)
	f.handle("/", func(w http.ResponseWriter, r *http.Request) { answer(w, r) })
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		code   string
	}{
		{"200 instead of 202", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(good))
		}, mail.CodeInvalidResponse},
		{"text/plain", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(good))
		}, mail.CodeInvalidResponse},
		{"a redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example"+r.URL.Path, http.StatusTemporaryRedirect)
		}, mail.CodeInvalidResponse},
		{"another packet's result", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(strings.Replace(good, p.ID(), card.Hash(), 1)))
		}, mail.CodeInvalidResponse},
		{"duplicate members", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"packet_id":"a","packet_id":"b","accepted_at":1}`))
		}, mail.CodeInvalidResponse},
		{"an oversized body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"x":"` + strings.Repeat("a", 64<<10) + `"}`))
		}, mail.CodePayloadTooLarge},
	} {
		answer = tc.answer
		_, err := r.Deliver(ctx, p)
		if mail.ErrorCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if n := f.count(deliverPath); n != 6 {
		t.Errorf("%d deliveries, want one each (writes are never retried)", n)
	}
	// (Go's HTTP/1.1 and HTTP/2 stacks never deliver a 204's body; the
	// client refuses one anyway, as the SDK does.)
	answer = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }
	if err := r.Delete(ctx, card.MailboxID(), p.ID()); mail.ErrorCode(err) != mail.CodeInvalidResponse {
		t.Errorf("a 200 for a deletion: %v", err)
	}
	answer = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }
	if err := r.Delete(ctx, card.MailboxID(), p.ID()); err != nil {
		t.Errorf("an empty 204: %v", err)
	}
	// Each owner call carried a fresh request JWT of the signer for the relay.
	auths := f.authorizations()
	if len(auths) == 0 {
		t.Fatal("no owner token was sent")
	}
	for _, a := range auths {
		claims, err := identity.VerifyToken(strings.TrimPrefix(a, "Bearer "), f.origin, time.Now(), identity.MaxTokenLifetime, identity.DefaultClockSkew)
		if err != nil || claims.AgentID != bob.AgentID() {
			t.Errorf("owner token %q: %v", a, err)
		}
	}
}
