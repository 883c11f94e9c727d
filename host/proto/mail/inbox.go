package mail

import (
	"strings"

	"apconnect/host/text"
)

// The recipient's rules after Open, as the SDK's MailInbox and the
// connector's sync apply them. The connector keeps the state (letters by
// (from, message_id) with their digests, blocked senders, the keyring) in
// SQLite; these functions decide.

// Acceptance is the outcome of a newly opened letter.
type Acceptance int

const (
	// Accepted: a new letter; store it (with its digest and inbox item)
	// before deleting its relay copy or acting on it.
	Accepted Acceptance = iota + 1
	// Duplicate: the same letter again, by another route or a resend;
	// its relay copy may be deleted.
	Duplicate
)

func (a Acceptance) String() string {
	switch a {
	case Accepted:
		return "accepted"
	case Duplicate:
		return "duplicate"
	}
	return "invalid"
}

// CheckReceived decides an opened letter as MailInbox.accept does after
// decrypting: held is the digest (Message.Digest) of the letter already
// held for (m.From, m.MessageID), "" when there is none. The same digest is
// a Duplicate; another digest is a reused message ID (invalid_event: keep
// the relay copy and report it); a new letter past its expires_at is
// packet_expired; otherwise Accepted. Deduplication runs before the expiry
// check, so a held letter's late copies are still recognized.
func CheckReceived(m *Message, held string, now int64) (Acceptance, error) {
	if err := checkClock(now); err != nil {
		return 0, err
	}
	digest, err := m.Digest()
	if err != nil {
		return 0, fail(CodeInvalidEvent, "", "cannot canonicalize the letter: %v", err)
	}
	if held != "" {
		if held != digest {
			return 0, fail(CodeInvalidEvent, "/message_id", "message ID %s of %s reused for different content", m.MessageID, m.From)
		}
		return Duplicate, nil
	}
	if now >= m.ExpiresAt {
		return 0, fail(CodePacketExpired, "/expires_at", "an expired letter cannot be newly accepted")
	}
	return Accepted, nil
}

// CheckSender applies the recipient's sender policy before decrypting:
// a blocked sender is permission_denied, and its packet is deleted
// unopened.
func CheckSender(blocked bool) error {
	if blocked {
		return fail(CodePermissionDenied, "/event/actor", "the sender is blocked")
	}
	return nil
}

// KeyRetained reports whether the recipient keeps a card and its key at
// now: until the card's receive_until (packets sealed to it may arrive
// until then).
func KeyRetained(c *Card, now int64) bool { return now < c.payload.ReceiveUntil }

// InboxItemID is the id of the inbox item a received letter makes, as the
// SDK connector names it: "mail.received:{sender}:{message_id}".
func InboxItemID(sender, messageID string) string {
	return "mail.received:" + sender + ":" + messageID
}

// Summary is the one-line summary of a received letter, as the SDK
// connector makes it: the subject when the letter has one, else the text
// of its first text/* part; blank (only white space) gives "mail";
// otherwise truncated to SummaryMaxChars code points ending in "…". A blank
// subject does not fall back to the text.
func Summary(m *Message) string {
	var s string
	switch {
	case m.Subject != nil:
		s = *m.Subject
	default:
		for _, p := range m.Parts {
			if p.IsText() {
				b, err := p.Bytes()
				if err == nil {
					s = strings.ToValidUTF8(string(b), "\uFFFD")
				}
				break
			}
		}
	}
	if strings.TrimSpace(s) == "" {
		return "mail"
	}
	return text.Truncate(s, SummaryMaxChars)
}
