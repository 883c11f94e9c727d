package mail_test

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/connector/mail"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	proto "apconnect/host/proto/mail"
)

// currentCard is a's latest card of mailbox id.
func (a *agent) currentCard(id string) *proto.Card {
	a.t.Helper()
	rows, err := a.conn.Store().Read().OwnCards(ctx, id)
	if err != nil || len(rows) == 0 {
		a.t.Fatalf("no card: %v", err)
	}
	c, err := proto.ParseCard(rows[len(rows)-1].Envelope)
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// deliverRaw delivers a packet straight to the hub.
func deliverRaw(t *testing.T, h *hubtest.Hub, p *proto.Packet) {
	t.Helper()
	res := h.Do(http.MethodPost, "/v1/mailboxes/"+p.Header().MailboxID+"/packets", p.Canonical(), nil)
	if res.Status != http.StatusAccepted {
		t.Fatalf("delivery: %d %s", res.Status, res.Body)
	}
}

// sealRaw seals a letter from signer with a chosen message ID.
func sealRaw(t *testing.T, s identity.Signer, card *proto.Card, messageID, text string, nonce int64) *proto.Packet {
	t.Helper()
	now := time.Now().UnixMilli()
	m, err := proto.NewMessage(s.AgentID(), now, proto.MessageContent{To: card.Owner(), ExpiresAt: now + 3600_000,
		ThreadID: messageID, Parts: []proto.Part{proto.TextPart(text)}})
	if err != nil {
		t.Fatal(err)
	}
	m.MessageID = messageID
	p, err := proto.Seal(s, m, card, nonce, now)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// errorCodes lists the codes of a sync's errors.
func errorCodes(r *mail.SyncResult) []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Code)
	}
	return out
}

// Packets that cannot be opened or verified, and a message ID reused for
// other content, are kept at the relay and reported, never shown as
// letters; the genuine letter beside them is received.
func TestBadPacketsAreReportedNotShown(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	bob := newAgent(t, h, 0xE1)
	alice := connectortest.NewAgent(t, h, 0xE2, "")
	box := bob.mailbox(h.Origin())
	card := bob.currentCard(box.MailboxID)
	// A signed packet of random bytes: the relay takes it, Bob cannot open it.
	enc, ct := make([]byte, 32), make([]byte, proto.MinCiphertextBytes)
	enc[0] = 9
	_, _ = rand.Read(ct)
	now := time.Now().UnixMilli()
	ev := identity.Event{Protocol: proto.Protocol, Type: proto.TypeMailSubmit, Actor: alice.ID, CreatedAt: now, Nonce: 10,
		Payload: map[string]any{"header": proto.Header{MailboxID: box.MailboxID, CardHash: card.Hash(), ExpiresAt: now + 3600_000}.Value(),
			"enc": identity.EncodeBase64URL(enc), "ciphertext": identity.EncodeBase64URL(ct)}}
	env, err := identity.SignEvent(alice.Sig, ev)
	if err != nil {
		t.Fatal(err)
	}
	garbage, err := proto.PacketFromValue(env.Value(), "")
	if err != nil {
		t.Fatal(err)
	}
	deliverRaw(t, h, garbage)
	id, _ := proto.NewID()
	deliverRaw(t, h, sealRaw(t, alice.Sig, card, id, "first", 11))
	deliverRaw(t, h, sealRaw(t, alice.Sig, card, id, "other content, same ID", 12))
	got := bob.sync()
	if len(got.Received) != 1 || *got.Received[0].Parts[0].Text != "first" {
		t.Fatalf("received %+v", got.Received)
	}
	if codes := errorCodes(got); len(codes) != 2 || codes[0] != "invalid_event" || codes[1] != "invalid_event" || got.Errors[0].PacketID != garbage.ID() {
		t.Fatalf("errors %+v", got.Errors)
	}
	// Kept and reported again; still one letter.
	if again := bob.sync(); len(again.Errors) != 2 || len(again.Received) != 0 {
		t.Fatalf("second sync: %+v", again)
	}
	if l := bob.list(mail.ListInput{}); len(l.Messages) != 1 {
		t.Fatalf("letters: %+v", l)
	}
}

// A relay's answer that breaks the client's checks fails the read with the
// SDK's code, changes nothing and shows nothing: a tampered packet list, a
// wrong content type, a redirect, another owner's card, an older card than
// the pinned one.
func TestBadRelayAnswers(t *testing.T) {
	t.Parallel()
	h := connectortest.StartHub(t)
	p := connectortest.NewProxy(t, h)
	alice, bob := newAgent(t, h, 0xE3, via(p)), newAgent(t, h, 0xE4, via(p))
	carol := newAgent(t, h, 0xE5, via(p))
	box := bob.mailbox(h.Origin())
	carolBox := carol.mailbox(h.Origin())
	alice.send(mail.SendInput{To: box.Address, Text: ptr("hi")})
	packets := "/v1/mailboxes/" + box.MailboxID + "/packets"
	cases := []struct {
		name      string
		intercept func(w http.ResponseWriter, r *http.Request) bool
		rewrite   func(path string, body []byte) []byte
		code      string
	}{
		{name: "tampered packet", code: "invalid_event_hash", rewrite: func(path string, body []byte) []byte {
			if path != packets {
				return body
			}
			i := bytes.Index(body, []byte(`"ciphertext":"`)) + len(`"ciphertext":"`) + 5
			b := bytes.Clone(body)
			if b[i] == 'A' {
				b[i] = 'B'
			} else {
				b[i] = 'A'
			}
			return b
		}},
		{name: "truncated list", code: "invalid_response", rewrite: func(path string, body []byte) []byte {
			if path != packets {
				return body
			}
			return body[:len(body)/2]
		}},
		{name: "wrong content type", code: "invalid_response", intercept: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != packets {
				return false
			}
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(`{"result":[]}`))
			return true
		}},
		{name: "redirect", code: "invalid_response", intercept: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != packets {
				return false
			}
			http.Redirect(w, r, "https://elsewhere.example"+packets, http.StatusFound)
			return true
		}},
	}
	for _, tc := range cases {
		p.SetIntercept(tc.intercept)
		p.SetRewrite(tc.rewrite)
		got := bob.sync()
		if len(got.Received) != 0 || len(got.Errors) != 1 || got.Errors[0].Code != tc.code {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
	p.SetIntercept(nil)
	p.SetRewrite(nil)
	if got := bob.sync(); len(got.Received) != 1 {
		t.Fatalf("the letter after the bad answers: %+v", got)
	}

	// Cards: another owner's card, then an older card than the pin.
	carolCard := h.Do(http.MethodGet, "/v1/mailboxes/"+carolBox.MailboxID+"/card", nil, nil).Body
	p.SetRewrite(func(path string, body []byte) []byte {
		if strings.HasSuffix(path, "/card") {
			return carolCard
		}
		return body
	})
	res, err := alice.Resolve(ctx, "s", mail.ResolveInput{AgentID: bob.id, Address: box.Address})
	// The pin Alice made when she wrote stays; nothing of Carol's is taken.
	if err != nil || len(res.Mailboxes) != 1 || len(res.Errors) != 1 || res.Errors[0]["code"] != "invalid_actor" ||
		!bytes.Contains(res.Mailboxes[0].Card, []byte(box.CardHash)) {
		t.Fatalf("another owner's card: %+v %v", res, err)
	}
	p.SetRewrite(nil)
	old := h.Do(http.MethodGet, "/v1/mailboxes/"+box.MailboxID+"/card", nil, nil).Body
	must[*mail.MailboxPublishResult](t, "agent_protocols_mail_mailbox_publish")(bob.MailboxPublish(ctx, "s",
		mail.MailboxPublishInput{MailboxID: box.MailboxID, Routes: []string{h.Origin()}}))
	fresh := must[*mail.ResolveResult](t, "agent_protocols_mail_resolve")(alice.Resolve(ctx, "s", mail.ResolveInput{AgentID: bob.id, Address: box.Address}))
	p.SetRewrite(func(path string, body []byte) []byte {
		if strings.HasSuffix(path, "/card") {
			return old
		}
		return body
	})
	res, err = alice.Resolve(ctx, "s", mail.ResolveInput{AgentID: bob.id, Address: box.Address})
	if err != nil || len(res.Errors) != 1 || res.Errors[0]["code"] != "stale_card" || string(res.Mailboxes[0].Card) != string(fresh.Mailboxes[0].Card) {
		t.Fatalf("an older card: %+v %v", res, err)
	}
	p.SetRewrite(nil)
}
