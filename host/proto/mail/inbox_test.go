package mail

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckReceived(t *testing.T) {
	m := letter()
	digest, _ := m.Digest()
	other, _ := letter(func(m *Message) { m.Parts = []Part{TextPart("changed")} }).Digest()
	for _, tc := range []struct {
		name string
		held string
		now  int64
		want Acceptance
		code string
	}{
		{"new letter", "", t0, Accepted, "ok"},
		{"a millisecond before expiry", "", t0 + day - 1, Accepted, "ok"},
		{"expired", "", t0 + day, 0, CodePacketExpired},
		{"the same letter again", digest, t0, Duplicate, "ok"},
		{"the same letter after it expired", digest, t0 + 2*day, Duplicate, "ok"},
		{"reused message ID", other, t0, 0, CodeInvalidEvent},
		{"reused message ID after expiry", other, t0 + 2*day, 0, CodeInvalidEvent},
		{"negative clock", "", -1, 0, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckReceived(m, tc.held, tc.now)
			wantCode(t, err, tc.code)
			if got != tc.want {
				t.Fatalf("%v, want %v", got, tc.want)
			}
		})
	}
	wantCode(t, CheckSender(true), CodePermissionDenied)
	wantCode(t, CheckSender(false), "ok")
	for a, s := range map[Acceptance]string{Accepted: "accepted", Duplicate: "duplicate", 0: "invalid"} {
		if a.String() != s {
			t.Errorf("%d: %s", a, a)
		}
	}
}

func TestInboxItemID(t *testing.T) {
	if got := InboxItemID(alice.AgentID(), msgID); got != "mail.received:"+alice.AgentID()+":"+msgID {
		t.Fatal(got)
	}
}

// The summary as the SDK connector's mail_inbox_item makes it.
func TestSummary(t *testing.T) {
	ptr := func(s string) *string { return &s }
	long := strings.Repeat("é", 200)
	for _, tc := range []struct {
		name string
		mod  func(*Message)
		want string
	}{
		{"subject", func(*Message) {}, "A private question / 私信"},
		{"blank subject does not fall back to the text", func(m *Message) { m.Subject = ptr(" \t\n") }, "mail"},
		{"empty subject", func(m *Message) { m.Subject = ptr("") }, "mail"},
		{"no subject: the first text part", func(m *Message) { m.Subject = nil }, "Can we compare our evidence?\n我们可以核对证据吗？"},
		{"no subject: text after a binary part", func(m *Message) {
			m.Subject = nil
			m.Parts = []Part{BytesPart("image/png", []byte{1}, ""), {MediaType: "text/markdown", Data: TextPart("# hi").Data}, TextPart("later")}
		}, "# hi"},
		{"no subject: a blank first text part", func(m *Message) {
			m.Subject = nil
			m.Parts = []Part{TextPart("   "), TextPart("later")}
		}, "mail"},
		{"no subject, no text", func(m *Message) { m.Subject = nil; m.Parts = []Part{BytesPart("image/png", []byte{1}, "")} }, "mail"},
		{"160 code points kept", func(m *Message) { m.Subject = ptr(long[:2*160]) }, long[:2*160]},
		{"161 code points cut to 159 and an ellipsis", func(m *Message) { m.Subject = ptr(long[:2*161]) }, long[:2*159] + "…"},
		{"long text", func(m *Message) { m.Subject = nil; m.Parts = []Part{TextPart(long)} }, long[:2*159] + "…"},
		{"white space kept inside", func(m *Message) { m.Subject = ptr("  padded  ") }, "  padded  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Summary(letter(tc.mod))
			if got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
			if utf8.RuneCountInString(got) > SummaryMaxChars {
				t.Fatalf("%d code points", utf8.RuneCountInString(got))
			}
		})
	}
}
