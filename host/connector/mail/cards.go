package mail

import (
	"context"
	"errors"
	"maps"
	"slices"

	"apconnect/host/capability"
	"apconnect/host/engine"
	proto "apconnect/host/proto/mail"
	"apconnect/host/store"
)

// ownCards returns the retained cards of one of the agent's mailboxes (of
// every mailbox when mailboxID is ""), oldest nonce first, each checked
// again as it is read.
func (m *Module) ownCards(ctx context.Context, q store.Q, mailboxID string) ([]*proto.Card, error) {
	rows, err := q.OwnCards(ctx, mailboxID)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out := make([]*proto.Card, 0, len(rows))
	for _, r := range rows {
		c, err := proto.ParseCard(r.Envelope)
		if err != nil {
			return nil, engine.Wrap(err)
		}
		if c.Owner() != m.Self {
			return nil, engine.Errorf(engine.CodeInternal, "a stored own card of mailbox %s is not this agent's", r.MailboxID)
		}
		out = append(out, c)
	}
	return out, nil
}

// mailboxes groups the agent's retained cards by mailbox ID (each list
// oldest nonce first).
func (m *Module) mailboxes(ctx context.Context, q store.Q) (map[string][]*proto.Card, error) {
	cards, err := m.ownCards(ctx, q, "")
	if err != nil {
		return nil, err
	}
	out := map[string][]*proto.Card{}
	for _, c := range cards {
		out[c.MailboxID()] = append(out[c.MailboxID()], c)
	}
	return out, nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// retainOwnCard keeps a card of the agent's read back from a relay (the
// SDK's retain_own_card): the key is not recovered with it.
func (m *Module) retainOwnCard(ctx context.Context, c *proto.Card, now int64) error {
	err := m.Store.Write(ctx, func(tx *store.Tx) error {
		if err := m.pinIn(ctx, tx, c, m.Self, now, true); err != nil {
			return err
		}
		return tx.PutOwnCard(ctx, ownCardRow(c))
	})
	if errors.Is(err, store.ErrConflictingCard) {
		return engine.Invalid("the relay serves a card of mailbox %s whose nonce another card of yours has", c.MailboxID())
	}
	return engine.Wrap(err)
}

// pinIn pins card for owner inside tx (proto.DecidePin against the stored
// pin). historical keeps an older card from failing: it is not pinned, and
// the pin stays (the SDK's observe_historical of a lagging relay's card).
func (m *Module) pinIn(ctx context.Context, tx *store.Tx, card *proto.Card, owner string, now int64, historical bool) error {
	var pinned *proto.Pin
	row, err := tx.MailPin(ctx, owner, card.MailboxID())
	switch {
	case err == nil:
		pinned = &proto.Pin{Owner: owner, MailboxID: row.MailboxID, CardHash: row.CardHash, Nonce: row.Nonce, CreatedAt: row.CreatedAt}
		if historical && card.Nonce() <= row.Nonce {
			return nil
		}
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	action, err := proto.DecidePin(pinned, card, owner, now)
	if err != nil || action != proto.PinStore {
		return err
	}
	raw, err := card.MarshalJSON()
	if err != nil {
		return err
	}
	return tx.PutMailPin(ctx, &store.MailPin{Owner: owner, MailboxID: card.MailboxID(), CardHash: card.Hash(), Nonce: card.Nonce(),
		CreatedAt: card.CreatedAt(), Envelope: raw})
}

// pin pins a card read for owner in its own transaction.
func (m *Module) pin(ctx context.Context, card *proto.Card, owner string, now int64) error {
	return engine.Wrap(m.Store.Write(ctx, func(tx *store.Tx) error { return m.pinIn(ctx, tx, card, owner, now, false) }))
}

// pinned returns the card pinned for (owner, mailboxID), or nil.
func (m *Module) pinned(ctx context.Context, owner, mailboxID string) (*proto.Card, error) {
	row, err := m.Store.Read().MailPin(ctx, owner, mailboxID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, engine.Wrap(err)
	}
	c, err := proto.ParseCard(row.Envelope)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	return c, nil
}

// readCard reads a mailbox's card from one route (mail.read there) and pins
// it for owner.
func (m *Module) readCard(ctx context.Context, route, owner, mailboxID string, now int64) (*proto.Card, error) {
	gctx, r, err := m.granted(ctx, route, capability.MailRead)
	if err != nil {
		return nil, err
	}
	rec, err := r.Card(gctx, mailboxID, owner)
	if err != nil {
		return nil, err
	}
	if err := m.pin(ctx, rec.Card, owner, now); err != nil {
		return nil, err
	}
	return rec.Card, nil
}

// sendingCard finds the card to seal a letter to, as the SDK's mail_card
// does: read from the given routes (or the pinned card's), pinned, and
// usable; a newer card that is closed or expired refuses the letter. When
// no route answers, a usable pinned card serves.
func (m *Module) sendingCard(ctx context.Context, owner, mailboxID string, routes []string, now int64) (*proto.Card, error) {
	pin, err := m.pinned(ctx, owner, mailboxID)
	if err != nil {
		return nil, err
	}
	candidates := routes
	if len(candidates) == 0 && pin != nil {
		candidates = pin.Routes()
	}
	var last error
	for _, route := range candidates {
		card, err := m.readCard(ctx, route, owner, mailboxID, now)
		if err != nil {
			last = err
			continue
		}
		if err := proto.CheckCardUsable(card, owner, now); err != nil {
			return nil, err
		}
		return card, nil
	}
	if pin, err = m.pinned(ctx, owner, mailboxID); err != nil {
		return nil, err
	}
	if pin != nil && proto.CheckCardUsable(pin, owner, now) == nil {
		return pin, nil
	}
	if last == nil {
		last = engine.Invalid("no card is pinned for mailbox %s; use a contact address with routes (agent_protocols_mail_resolve)", mailboxID)
	}
	return nil, last
}
