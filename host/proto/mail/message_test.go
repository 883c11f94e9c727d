package mail

import (
	"strings"
	"testing"

	"apconnect/host/identity"
)

func TestMessageRules(t *testing.T) {
	ptr := func(s string) *string { return &s }
	x := TextPart("x")
	replyCard, err := SignCard(alice, payloadOf(t, func(p *CardPayload) { p.MailboxID = mb2 }), t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*Message)
		code string
	}{
		{"valid", func(*Message) {}, "ok"},
		{"no subject", func(m *Message) { m.Subject = nil }, "ok"},
		{"empty subject", func(m *Message) { m.Subject = ptr("") }, "ok"},
		{"subject of 1024 code points", func(m *Message) { m.Subject = ptr(strings.Repeat("é", 1024)) }, "ok"},
		{"subject of 1025 code points", func(m *Message) { m.Subject = ptr(strings.Repeat("é", 1025)) }, CodeInvalidEvent},
		{"32-byte message ID", func(m *Message) { m.MessageID = identity.EncodeBase64URL(make([]byte, 32)) }, CodeInvalidEvent},
		{"no parts", func(m *Message) { m.Parts = nil }, CodeInvalidEvent},
		{"32 parts", func(m *Message) { m.Parts = repeatPart(x, 32) }, "ok"},
		{"33 parts", func(m *Message) { m.Parts = repeatPart(x, 33) }, CodeInvalidEvent},
		{"uppercase media type", func(m *Message) { m.Parts = []Part{{MediaType: "Text/plain", Data: "eA"}} }, CodeInvalidEvent},
		{"name of 255", func(m *Message) { m.Parts = []Part{BytesPart("a/b", nil, strings.Repeat("n", 255))} }, "ok"},
		{"name of 256", func(m *Message) { m.Parts = []Part{BytesPart("a/b", nil, strings.Repeat("n", 256))} }, CodeInvalidEvent},
		{"text part not UTF-8", func(m *Message) { m.Parts = []Part{BytesPart("text/plain", []byte{0xff}, "")} }, CodeInvalidEvent},
		{"binary part not UTF-8", func(m *Message) { m.Parts = []Part{BytesPart("image/png", []byte{0xff}, "")} }, "ok"},
		{"non-canonical data", func(m *Message) { m.Parts = []Part{{MediaType: "text/plain", Data: "eB"}} }, CodeInvalidEvent},
		{"expires at created", func(m *Message) { m.ExpiresAt = m.CreatedAt }, CodeInvalidEvent},
		{"expires 30 d after", func(m *Message) { m.ExpiresAt = m.CreatedAt + MaxTTL }, "ok"},
		{"expires 30 d + 1 ms after", func(m *Message) { m.ExpiresAt = m.CreatedAt + MaxTTL + 1 }, CodeInvalidEvent},
		{"in reply to an ID", func(m *Message) { m.InReplyTo = mb }, "ok"},
		{"in reply to a hash", func(m *Message) { m.InReplyTo = replyCard.Hash() }, CodeInvalidEvent},
		{"reply card of the sender", func(m *Message) { m.ReplyCard = replyCard }, "ok"},
		{"reply card of another", func(m *Message) { m.ReplyCard = cardOf(t, 100) }, CodeInvalidActor},
		{"sender not an Agent ID", func(m *Message) { m.From = "did:agent:x" }, CodeInvalidEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := letter(tc.mod)
			wantCode(t, m.Check(), tc.code)
			if tc.code != "ok" {
				return
			}
			again, err := ParseMessage(mustCanon(t, m))
			if err != nil || string(mustCanon(t, again)) != string(mustCanon(t, m)) {
				t.Fatalf("round trip: %v", err)
			}
		})
	}
}

func repeatPart(p Part, n int) []Part {
	out := make([]Part, n)
	for i := range out {
		out[i] = p
	}
	return out
}

func TestNewMessageAndReplies(t *testing.T) {
	parent, err := NewMessage(alice.AgentID(), t0, MessageContent{To: bob.AgentID(), ExpiresAt: t0 + day, ThreadID: thread, Parts: []Part{TextPart("q")}})
	if err != nil {
		t.Fatal(err)
	}
	if !ValidID(parent.MessageID, IDBytes) || parent.From != alice.AgentID() || parent.CreatedAt != t0 {
		t.Fatalf("%+v", parent)
	}
	if _, err := NewMessage(alice.AgentID(), t0, MessageContent{To: bob.AgentID(), ExpiresAt: t0, ThreadID: thread, Parts: []Part{TextPart("q")}}); ErrorCode(err) != CodeInvalidEvent {
		t.Fatalf("invalid content: %v", err)
	}
	reply := func(mod func(*Message)) *Message {
		m := &Message{MessageID: mb2, From: bob.AgentID(), To: alice.AgentID(), CreatedAt: t0 + 1, ExpiresAt: t0 + day,
			ThreadID: thread, InReplyTo: parent.MessageID, Parts: []Part{TextPart("a")}}
		if mod != nil {
			mod(m)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		mod  func(*Message)
		code string
	}{
		{"reply", nil, "ok"},
		{"to another", func(m *Message) { m.To = carol.AgentID() }, CodeInvalidEvent},
		{"from another", func(m *Message) { m.From = carol.AgentID() }, CodeInvalidEvent},
		{"another parent", func(m *Message) { m.InReplyTo = mb }, CodeInvalidEvent},
		{"no parent", func(m *Message) { m.InReplyTo = "" }, CodeInvalidEvent},
		{"another thread", func(m *Message) { m.ThreadID = mb }, CodeInvalidEvent},
		{"invalid reply", func(m *Message) { m.Parts = nil }, CodeInvalidEvent},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, CheckReply(reply(tc.mod), parent), tc.code) })
	}
}

func TestMessageDigest(t *testing.T) {
	a, b := letter(), letter()
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db || !ValidID(da, 32) {
		t.Fatalf("digests %s %s", da, db)
	}
	empty := ""
	c := letter(func(m *Message) { m.Subject = &empty })
	d := letter(func(m *Message) { m.Subject = nil })
	dc, _ := c.Digest()
	dd, _ := d.Digest()
	if dc == dd || dc == da {
		t.Fatal("an empty subject and no subject must be different letters")
	}
}
