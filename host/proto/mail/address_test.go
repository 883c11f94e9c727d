package mail

import (
	"reflect"
	"testing"

	"apconnect/host/identity"
)

func TestAddresses(t *testing.T) {
	a := alice.AgentID()
	for _, tc := range []struct {
		name, value string
		want        *Address
	}{
		{"stable", a + "/mail/" + mb, &Address{Owner: a, MailboxID: mb, Routes: []string{}}},
		{"contact", a + "/mail/" + mb + "?route=" + relay + "&route=" + mirror, &Address{Owner: a, MailboxID: mb, Routes: []string{relay, mirror}}},
		{"knowledge URL", a + "/knowledge/" + mb, nil},
		{"bare Agent ID", a, nil},
		{"bare Agent ID with a route", a + "?route=" + relay, nil},
		{"15-byte mailbox", a + "/mail/" + identity.EncodeBase64URL(make([]byte, 15)), nil},
		{"17-byte mailbox", a + "/mail/" + identity.EncodeBase64URL(make([]byte, 17)), nil},
		{"non-canonical mailbox", a + "/mail/AAECAwQFBgcICQoLDA0ODx", nil},
		{"email-like", mb + "@relay.example", nil},
		{"bad route", a + "/mail/" + mb + "?route=http://relay.example", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAddress(tc.value)
			if tc.want == nil {
				wantCode(t, err, CodeInvalidURL)
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%+v, %v", got, err)
			}
			s, err := got.Format()
			if err != nil || s != tc.value {
				t.Fatalf("Format = %q, %v", s, err)
			}
		})
	}
	if _, err := (Address{Owner: a, MailboxID: "short"}).Format(); ErrorCode(err) != CodeInvalidURL {
		t.Fatalf("bad mailbox formats: %v", err)
	}
	c := cardOf(t, 100)
	if got := CardAddress(c, false); got != bob.AgentID()+"/mail/"+mb {
		t.Fatalf("stable card address %s", got)
	}
	if got := CardAddress(c, true); got != bob.AgentID()+"/mail/"+mb+"?route="+relay+"&route="+mirror {
		t.Fatalf("contact card address %s", got)
	}
	closed := cardOf(t, 101, func(p *CardPayload) { p.Routes = nil })
	if got := CardAddress(closed, true); got != bob.AgentID()+"/mail/"+mb {
		t.Fatalf("closed card address %s", got)
	}
}
