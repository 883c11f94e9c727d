package mail

import (
	"crypto/sha3"
	"strings"
	"unicode/utf8"

	"apconnect/host/identity"
)

// Part is one part of a letter: a media type, the bytes in base64url and an
// optional file name. A text/* part holds UTF-8.
type Part struct {
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	Name      string `json:"name,omitempty"`
}

// TextPart is a text/plain part.
func TextPart(text string) Part {
	return Part{MediaType: "text/plain", Data: identity.EncodeBase64URL([]byte(text))}
}

// BytesPart is a part of any media type; name may be empty.
func BytesPart(mediaType string, data []byte, name string) Part {
	return Part{MediaType: mediaType, Data: identity.EncodeBase64URL(data), Name: name}
}

// Bytes decodes the part's data.
func (p Part) Bytes() ([]byte, error) { return identity.DecodeBase64URL(p.Data) }

// IsText reports whether the part's media type is text/*.
func (p Part) IsText() bool { return strings.HasPrefix(p.MediaType, "text/") }

// Value returns the part as a JSON object value.
func (p Part) Value() map[string]any {
	m := map[string]any{"media_type": p.MediaType, "data": p.Data}
	if p.Name != "" {
		m["name"] = p.Name
	}
	return m
}

// Message is a letter's plaintext (the messagePayload of the schema): a
// 16-byte message ID, the sender, the time it was written, the recipient,
// its expiry (the packet header's), a 16-byte thread ID, one to 32 parts,
// and optionally a subject (which may be empty), the message ID it answers
// and a card of the sender's to reply to. A Message is immutable once
// sealed: its JCS bytes are what the recipient deduplicates on.
type Message struct {
	MessageID string
	From      string
	CreatedAt int64
	To        string
	ExpiresAt int64
	ThreadID  string
	Parts     []Part
	Subject   *string
	InReplyTo string
	ReplyCard *Card
}

// Value returns the message as a JSON object value.
func (m *Message) Value() map[string]any {
	parts := make([]any, len(m.Parts))
	for i, p := range m.Parts {
		parts[i] = p.Value()
	}
	v := map[string]any{
		"message_id": m.MessageID,
		"from":       m.From,
		"created_at": m.CreatedAt,
		"to":         m.To,
		"expires_at": m.ExpiresAt,
		"thread_id":  m.ThreadID,
		"parts":      parts,
	}
	if m.Subject != nil {
		v["subject"] = *m.Subject
	}
	if m.InReplyTo != "" {
		v["in_reply_to"] = m.InReplyTo
	}
	if m.ReplyCard != nil {
		v["reply_card"] = m.ReplyCard.Value()
	}
	return v
}

// Canonical returns JCS(message), the bytes that are framed and sealed.
func (m *Message) Canonical() ([]byte, error) { return identity.Canonicalize(m.Value()) }

// MarshalJSON writes the message in canonical form.
func (m *Message) MarshalJSON() ([]byte, error) { return m.Canonical() }

// Digest is base64url(SHA3-256(JCS(message))): two letters with one
// (from, message_id) are the same letter exactly when their digests agree.
func (m *Message) Digest() (string, error) {
	b, err := m.Canonical()
	if err != nil {
		return "", err
	}
	sum := sha3.Sum256(b)
	return identity.EncodeBase64URL(sum[:]), nil
}

// ParseMessage strictly parses a message and checks it (MessageFromValue).
func ParseMessage(data []byte) (*Message, error) {
	v, err := parseBody(data)
	if err != nil {
		return nil, err
	}
	return MessageFromValue(v, "")
}

// MessageFromValue checks a strictly parsed message as the SDK's
// validate_mail_message does, in its order: the schema (invalid_event);
// created_at < expires_at <= created_at + MaxTTL (invalid_event); every
// part's data canonical base64url and a text/* part's bytes UTF-8
// (invalid_event); a reply_card a valid card (CardFromValue) whose owner is
// the sender (invalid_actor). A message authenticates nothing by itself:
// its packet's signature does.
func MessageFromValue(v any, pointer string) (*Message, error) {
	if err := ValidateSchema(v, DefMessage, CodeInvalidEvent, pointer); err != nil {
		return nil, err
	}
	obj := v.(map[string]any)
	m := &Message{
		MessageID: obj["message_id"].(string),
		From:      obj["from"].(string),
		To:        obj["to"].(string),
		ThreadID:  obj["thread_id"].(string),
	}
	var err error
	if m.CreatedAt, err = intMember(obj, "created_at", pointer, CodeInvalidEvent); err != nil {
		return nil, err
	}
	if m.ExpiresAt, err = intMember(obj, "expires_at", pointer, CodeInvalidEvent); err != nil {
		return nil, err
	}
	if s, ok := obj["subject"].(string); ok {
		m.Subject = &s
	}
	m.InReplyTo, _ = obj["in_reply_to"].(string)
	if m.ExpiresAt <= m.CreatedAt || m.ExpiresAt > m.CreatedAt+MaxTTL {
		return nil, fail(CodeInvalidEvent, pointer+"/expires_at", "invalid message lifetime: expires_at must be after created_at and at most 30 days later")
	}
	for i, pv := range obj["parts"].([]any) {
		po := pv.(map[string]any)
		p := Part{MediaType: po["media_type"].(string), Data: po["data"].(string)}
		p.Name, _ = po["name"].(string)
		at := pointer + "/parts/" + itoa(int64(i))
		b, err := p.Bytes()
		if err != nil {
			return nil, fail(CodeInvalidEvent, at+"/data", "part data is not canonical base64url")
		}
		if p.IsText() && !utf8.Valid(b) {
			return nil, fail(CodeInvalidEvent, at+"/data", "a text part is not UTF-8")
		}
		m.Parts = append(m.Parts, p)
	}
	if rc, ok := obj["reply_card"]; ok {
		card, err := CardFromValue(rc, pointer+"/reply_card")
		if err != nil {
			return nil, err
		}
		if card.Owner() != m.From {
			return nil, fail(CodeInvalidActor, pointer+"/reply_card/event/actor", "the reply card's owner is not the sender")
		}
		m.ReplyCard = card
	}
	return m, nil
}

// Check checks m as MessageFromValue does (a Message built field by field
// has not been checked).
func (m *Message) Check() error {
	v, err := identity.ParseStrict(mustCanonical(m.Value()))
	if err != nil {
		return fail(CodeInvalidEvent, "", "the message is not valid JSON: %v", err)
	}
	_, err = MessageFromValue(v, "")
	return err
}

// MessageContent is what a sender writes; NewMessage adds the message ID,
// the sender and the time.
type MessageContent struct {
	To        string
	ExpiresAt int64
	ThreadID  string
	Parts     []Part
	Subject   *string
	InReplyTo string
	ReplyCard *Card
}

// NewMessage makes a letter from from, written at createdAt, with a fresh
// random message ID, as the SDK's create_mail_message does, and checks it.
func NewMessage(from string, createdAt int64, c MessageContent) (*Message, error) {
	id, err := NewID()
	if err != nil {
		return nil, err
	}
	m := &Message{MessageID: id, From: from, CreatedAt: createdAt, To: c.To, ExpiresAt: c.ExpiresAt,
		ThreadID: c.ThreadID, Parts: c.Parts, Subject: c.Subject, InReplyTo: c.InReplyTo, ReplyCard: c.ReplyCard}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}

// DefaultMessageExpiry is a letter's expires_at when the sender names none,
// as the SDK connector sets it: now + DefaultMessageTTL, but no later than
// the card's receive_until.
func DefaultMessageExpiry(now int64, card *Card) int64 {
	return min(now+DefaultMessageTTL, card.payload.ReceiveUntil)
}

// CheckReply checks that reply answers parent as the SDK's
// validate_mail_reply does: both valid, reply from parent's recipient to
// parent's sender, in_reply_to = parent's message ID, and the same thread
// (invalid_event otherwise).
func CheckReply(reply, parent *Message) error {
	if err := reply.Check(); err != nil {
		return err
	}
	if err := parent.Check(); err != nil {
		return err
	}
	if reply.From != parent.To || reply.To != parent.From || reply.InReplyTo != parent.MessageID || reply.ThreadID != parent.ThreadID {
		return fail(CodeInvalidEvent, "", "the reply's participants, parent or thread do not match its parent")
	}
	return nil
}

// mustCanonical canonicalizes a value built from typed fields; a failure
// (an out-of-range integer) yields bytes that do not parse, which the
// caller reports.
func mustCanonical(v any) []byte {
	b, err := identity.Canonicalize(v)
	if err != nil {
		return []byte("!" + err.Error())
	}
	return b
}
