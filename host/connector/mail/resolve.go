package mail

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/mail"
)

// contact is a mailbox to read a card of, and where.
type contact struct {
	mailboxID string
	routes    []string
}

// Resolve is agent_protocols_mail_resolve: read, verify and pin the
// mailbox cards of an expected Agent ID, found from one of an address (its
// routes, or the pinned card's), a card URL ({relay}/v1/mailboxes/{id}/card)
// or a profile service (the agent-mail service endpoints of the agent's
// verified profile), as the SDK's mail_resolve does. It returns the pinned
// card of every mailbox found, closed and expired ones included, and
// whether each can take a letter now; a route's failure, and a malformed
// profile endpoint, is reported in errors. It never sends a letter. With
// none of the three (the SDK requires one) it lists the cards already
// pinned for the Agent ID, from local state.
func (m *Module) Resolve(ctx context.Context, sess SessionID, in ResolveInput) (*ResolveResult, error) {
	if !identity.ValidAgentID(in.AgentID) {
		return nil, engine.Invalid("agent_id %q is not a valid Agent ID", in.AgentID)
	}
	given := 0
	for _, s := range []string{in.Address, in.CardURL, in.ProfileService} {
		if s != "" {
			given++
		}
	}
	if given > 1 {
		return nil, engine.Invalid("give one of address, card_url or profile_service")
	}
	out := &ResolveResult{AgentID: in.AgentID, Mailboxes: []ResolvedMailbox{}, Errors: []map[string]any{}}
	if given == 0 {
		return m.pinnedOf(ctx, out)
	}
	contacts, err := m.contacts(ctx, in, out)
	if err != nil {
		return nil, err
	}
	var routes []string
	for _, c := range contacts {
		routes = union(routes, c.routes)
	}
	if in.ProfileService == "" {
		if err := m.firstRefusal(routes, capability.MailRead); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for _, c := range contacts {
		ids = union(ids, []string{c.mailboxID})
		for _, route := range c.routes {
			if _, err := m.readCard(ctx, route, in.AgentID, c.mailboxID, m.NowMS()); err != nil {
				e := engine.AsError(err)
				out.Errors = append(out.Errors, map[string]any{"route": route, "mailbox_id": c.mailboxID, "code": e.Code, "message": e.Message})
			}
		}
	}
	for _, id := range ids {
		card, err := m.pinned(ctx, in.AgentID, id)
		if err != nil {
			return nil, err
		}
		if card != nil {
			out.Mailboxes = append(out.Mailboxes, m.resolved(card))
		}
	}
	return out, nil
}

// resolved is a pinned card as mail_resolve lists it.
func (m *Module) resolved(card *proto.Card) ResolvedMailbox {
	raw, _ := card.MarshalJSON()
	usable := proto.CheckCardUsable(card, card.Owner(), m.NowMS()) == nil && m.anyAllows(card.Routes(), capability.MailWrite)
	return ResolvedMailbox{Address: proto.CardAddress(card, true), Card: json.RawMessage(raw), Usable: usable}
}

// pinnedOf lists the cards already pinned for out.AgentID (mail_resolve
// with none of address, card_url and profile_service: local state only,
// those whose routes are granted mail.read).
func (m *Module) pinnedOf(ctx context.Context, out *ResolveResult) (*ResolveResult, error) {
	if err := m.readable(); err != nil {
		return nil, err
	}
	pins, err := m.Store.Read().MailPinsOf(ctx, out.AgentID)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	for _, p := range pins {
		card, err := proto.ParseCard(p.Envelope)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		if len(card.Routes()) == 0 || m.anyAllows(card.Routes(), capability.MailRead) {
			out.Mailboxes = append(out.Mailboxes, m.resolved(card))
		}
	}
	return out, nil
}

// contacts are the mailboxes the input names, with the routes to read
// their cards from.
func (m *Module) contacts(ctx context.Context, in ResolveInput, out *ResolveResult) ([]contact, error) {
	switch {
	case in.Address != "":
		a, err := proto.ParseAddress(in.Address)
		if err != nil {
			return nil, err
		}
		if a.Owner != in.AgentID {
			return nil, engine.Invalid("the address is a mailbox of %s, not of agent_id", a.Owner)
		}
		routes := a.Routes
		if len(routes) == 0 {
			pin, err := m.pinned(ctx, in.AgentID, a.MailboxID)
			if err != nil {
				return nil, err
			}
			if pin != nil {
				routes = pin.Routes()
			}
		}
		return []contact{{mailboxID: a.MailboxID, routes: routes}}, nil
	case in.CardURL != "":
		c, err := parseCardURL(in.CardURL)
		if err != nil {
			return nil, err
		}
		return []contact{c}, nil
	}
	return m.profileContacts(ctx, in, out)
}

// profileContacts reads the agent-mail endpoints of the agent's verified
// profile; a malformed one is reported in out.Errors.
func (m *Module) profileContacts(ctx context.Context, in ResolveInput, out *ResolveResult) ([]contact, error) {
	if m.opts.Profiles == nil {
		return nil, engine.Invalid("profile_service is not available in this connector")
	}
	doc, err := m.opts.Profiles(ctx, in.ProfileService, in.AgentID)
	if err != nil {
		return nil, err
	}
	var contacts []contact
	endpoints, _ := doc["service_endpoints"].([]any)
	for _, e := range endpoints {
		ep, _ := e.(map[string]any)
		if ep["type"] != "agent-mail" {
			continue
		}
		u, _ := ep["url"].(string)
		c, err := parseCardURL(u)
		if err != nil {
			e := engine.AsError(err)
			out.Errors = append(out.Errors, map[string]any{"url": u, "code": proto.CodeInvalidURL, "message": e.Message})
			continue
		}
		contacts = append(contacts, c)
	}
	return contacts, nil
}

// parseCardURL reads a mailbox card URL, https://relay/v1/mailboxes/{id}/card
// (no query or fragment; invalid_url otherwise).
func parseCardURL(raw string) (contact, error) {
	bad := func(why string) (contact, error) {
		return contact{}, &engine.Error{Code: proto.CodeInvalidURL, Message: "invalid mailbox card URL: " + why}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return bad("not an absolute https URL")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return bad("a card URL has no query or fragment")
	}
	seg := strings.Split(u.EscapedPath(), "/")
	if len(seg) != 5 || seg[1] != "v1" || seg[2] != "mailboxes" || seg[4] != "card" {
		return bad("the path must be /v1/mailboxes/{mailbox_id}/card")
	}
	origin, err := identity.NormalizeOrigin(u.Scheme + "://" + u.Host)
	if err != nil || !identity.ValidOrigin(origin) {
		return bad("not an https origin")
	}
	if !proto.ValidID(seg[3], proto.IDBytes) {
		return bad("the mailbox ID must be 16 bytes of canonical base64url")
	}
	return contact{mailboxID: seg[3], routes: []string{origin}}, nil
}
