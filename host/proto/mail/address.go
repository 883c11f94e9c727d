package mail

import (
	"slices"

	"apconnect/host/identity"
)

// Address is a mailbox address: an Agent URL with protocol "mail" and a
// 16-byte mailbox ID as its resource,
//
//	did:agent:<key>/mail/<mailbox_id>[?route=<origin>…]
//
// Without routes it is the stable address; with them, a contact address
// that also says where the card can be read. Routes in an address only find
// the card: delivery uses the card's own routes.
type Address struct {
	Owner     string
	MailboxID string
	Routes    []string
}

// ParseAddress parses a mailbox address as the SDK's parse_mail_address
// does: a valid Agent URL (identity.ParseAgentURL) whose protocol is
// "mail" and whose resource is a canonical 16-byte ID. Every refusal is
// invalid_url.
func ParseAddress(s string) (*Address, error) {
	u, err := identity.ParseAgentURL(s)
	if err != nil {
		return nil, err
	}
	if u.Protocol != "mail" {
		return nil, fail(CodeInvalidURL, "", "not a mailbox address: the Agent URL's protocol must be mail")
	}
	if !ValidID(u.Resource, IDBytes) {
		return nil, fail(CodeInvalidURL, "", "the mailbox ID must be 16 bytes of canonical base64url")
	}
	return &Address{Owner: u.AgentID, MailboxID: u.Resource, Routes: u.Routes}, nil
}

// Format returns the address text (the stable form when a.Routes is
// empty), checked as the SDK's format_mail_address checks it (invalid_url).
func (a Address) Format() (string, error) {
	if !ValidID(a.MailboxID, IDBytes) {
		return "", fail(CodeInvalidURL, "", "the mailbox ID must be 16 bytes of canonical base64url")
	}
	u := identity.AgentURL{AgentID: a.Owner, Protocol: "mail", Resource: a.MailboxID, Routes: a.Routes}
	return u.Format()
}

// CardAddress is the address of a card's mailbox: the stable form, or with
// the card's routes when withRoutes is set.
func CardAddress(c *Card, withRoutes bool) string {
	u := identity.AgentURL{AgentID: c.Owner(), Protocol: "mail", Resource: c.MailboxID()}
	if withRoutes {
		u.Routes = slices.Clone(c.payload.Routes)
	}
	return u.String()
}
