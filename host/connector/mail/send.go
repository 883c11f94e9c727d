package mail

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/mail"
	"apconnect/host/store"
)

// Send is agent_protocols_mail_send: a letter to a mailbox address, or a
// reply to a received letter (to its reply card unless to is given),
// sealed to the recipient's pinned card and delivered to the card's first
// route that takes it, as the SDK connector does. The letter and its sealed
// packet are stored in the transaction that signs the packet; a network
// error, a 429 or a 5xx leaves it queued, resent byte for byte by mail_sync
// (and by the background resubmission in a resident process); a stale_card
// refusal makes the card read once more and the letter sealed again to the
// newer card. The budgets mail_sends and mail_sends_per_recipient apply
// before anything is signed.
func (m *Module) Send(ctx context.Context, sess SessionID, in SendInput) (*SendResult, error) {
	now := m.NowMS()
	parent, err := m.replyParent(ctx, in)
	if err != nil {
		return nil, err
	}
	owner, mailboxID, routes, err := m.recipient(ctx, in, parent, now)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	card, err := m.sendingCard(ctx, owner, mailboxID, routes, now)
	if err != nil {
		return nil, err
	}
	if err := m.firstRefusal(card.Routes(), capability.MailWrite); err != nil {
		return nil, err
	}
	msg, err := m.compose(ctx, in, parent, card, owner, now)
	if err != nil {
		return nil, err
	}
	units, err := m.takeSendBudgets(owner)
	if err != nil {
		return nil, err
	}
	letter, err := m.sealLetter(ctx, msg, card, 0)
	if err != nil {
		for _, u := range units {
			u.Return()
		}
		return nil, err
	}
	status, err := m.deliver(ctx, letter, card, false)
	if err != nil {
		// A refusal that retrying cannot change: nothing is kept, as the SDK
		// keeps nothing of a refused send (the nonce stays used).
		if l, rerr := m.Store.Read().LetterByID(ctx, letter.ID); rerr == nil {
			m.CloseOutbox(ctx, l.Outbox, store.OutboxFailed, nil, err.Error())
		}
		_ = m.Store.Write(ctx, func(tx *store.Tx) error { return tx.DeleteLetter(ctx, letter.ID) })
		return nil, err
	}
	if letter, err = m.Store.Read().LetterByID(ctx, letter.ID); err != nil {
		return nil, engine.Wrap(err)
	}
	return &SendResult{Status: status, Message: messageView(letter, false)}, nil
}

// takeSendBudgets takes one unit of the overall and the per-recipient send
// budgets.
func (m *Module) takeSendBudgets(owner string) ([]*engine.Unit, error) {
	all, err := m.Take("mail:send", m.Config.Limits.MailSends(), time.Minute)
	if err != nil {
		return nil, err
	}
	one, err := m.Take("mail:send:"+owner, m.Config.Limits.MailSendsPerRecipient(), time.Minute)
	if err != nil {
		all.Return()
		return nil, err
	}
	return []*engine.Unit{all, one}, nil
}

// replyParent returns the received letter in_reply_to names (nil without
// in_reply_to): the one received with that message ID, from to's owner when
// to is given.
func (m *Module) replyParent(ctx context.Context, in SendInput) (*proto.Message, error) {
	if in.InReplyTo == "" {
		return nil, nil
	}
	lq := store.LetterQuery{Direction: store.LetterReceived, MessageID: &in.InReplyTo}
	if in.To != "" {
		a, err := proto.ParseAddress(in.To)
		if err != nil {
			return nil, err
		}
		lq.Sender = &a.Owner
	}
	found, _, err := m.Store.Read().Letters(ctx, lq)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	switch len(found) {
	case 0:
		return nil, engine.Invalid("no received letter has message_id %s", in.InReplyTo)
	case 1:
		return proto.ParseMessage(found[0].Message)
	}
	return nil, engine.Invalid("several received letters have message_id %s; pass to", in.InReplyTo)
}

// recipient is the mailbox a letter goes to: to's, or the parent's reply
// card's; and the routes to read its card from. It refuses, before any
// request, a recipient none of whose candidate routes the agent may write
// to.
func (m *Module) recipient(ctx context.Context, in SendInput, parent *proto.Message, now int64) (owner, mailboxID string, routes []string, err error) {
	switch {
	case in.To != "":
		a, err := proto.ParseAddress(in.To)
		if err != nil {
			return "", "", nil, err
		}
		owner, mailboxID, routes = a.Owner, a.MailboxID, a.Routes
	case parent != nil && parent.ReplyCard != nil:
		c := parent.ReplyCard
		owner, mailboxID, routes = c.Owner(), c.MailboxID(), c.Routes()
	case parent != nil:
		return "", "", nil, engine.Invalid("the letter you reply to carries no reply card; pass to")
	default:
		return "", "", nil, engine.Invalid("to or in_reply_to is required")
	}
	if parent != nil && parent.From != owner {
		return "", "", nil, engine.Invalid("a reply goes to the sender of the letter it answers")
	}
	candidates := routes
	if len(candidates) == 0 {
		pin, err := m.pinned(ctx, owner, mailboxID)
		if err != nil {
			return "", "", nil, err
		}
		if pin != nil {
			candidates = pin.Routes()
		}
	}
	if err := m.firstRefusal(candidates, capability.MailWrite); err != nil {
		return "", "", nil, err
	}
	return owner, mailboxID, routes, nil
}

// compose writes the letter: the text as a leading text/plain part, then
// the parts; the parent's thread or a new one; the expiry asked for or the
// SDK's default; the reply card of an open mailbox of the agent's.
func (m *Module) compose(ctx context.Context, in SendInput, parent *proto.Message, card *proto.Card, owner string, now int64) (*proto.Message, error) {
	c := proto.MessageContent{To: owner, Subject: in.Subject, ExpiresAt: proto.DefaultMessageExpiry(now, card)}
	if in.ExpiresAt != nil {
		c.ExpiresAt = *in.ExpiresAt
	}
	if in.Text != nil {
		c.Parts = append(c.Parts, proto.TextPart(*in.Text))
	}
	for _, p := range in.Parts {
		c.Parts = append(c.Parts, proto.Part{MediaType: p.MediaType, Data: p.Data, Name: p.Name})
	}
	if len(c.Parts) == 0 {
		return nil, engine.Invalid("a letter needs text or parts")
	}
	if in.ReplyMailboxID != "" {
		cards, err := m.ownCards(ctx, m.Store.Read(), in.ReplyMailboxID)
		if err != nil {
			return nil, err
		}
		if len(cards) == 0 {
			return nil, engine.Invalid("unknown reply mailbox %s", in.ReplyMailboxID)
		}
		latest := cards[len(cards)-1]
		if proto.CheckCardUsable(latest, m.Self, now) != nil {
			return nil, engine.Invalid("the reply mailbox %s is not open", in.ReplyMailboxID)
		}
		c.ReplyCard = latest
	}
	if parent != nil {
		c.ThreadID, c.InReplyTo = parent.ThreadID, parent.MessageID
	} else {
		id, err := proto.NewID()
		if err != nil {
			return nil, engine.Wrap(err)
		}
		c.ThreadID = id
	}
	msg, err := proto.NewMessage(m.Self, now, c)
	if err != nil {
		return nil, err
	}
	if parent != nil {
		if err := proto.CheckReply(msg, parent); err != nil {
			return nil, err
		}
	}
	return msg, nil
}

// sealLetter seals msg to card through the engine's pipeline (the nonce is
// allocated, the letter sealed to an AAD that names it, the packet signed)
// and stores, in that transaction, the sent letter with its packet — or,
// with id set, replaces the packet of that stored letter. It returns the
// stored letter.
func (m *Module) sealLetter(ctx context.Context, msg *proto.Message, card *proto.Card, id int64) (*store.Letter, error) {
	canon, err := msg.Canonical()
	if err != nil {
		return nil, engine.Wrap(err)
	}
	digest, err := msg.Digest()
	if err != nil {
		return nil, engine.Wrap(err)
	}
	origin := card.Routes()[0]
	for _, r := range card.Routes() {
		if m.allows(r, capability.MailWrite) {
			origin = r
			break
		}
	}
	letter := &store.Letter{ID: id, Direction: store.LetterSent, Sender: m.Self, MessageID: msg.MessageID, Recipient: msg.To,
		MailboxID: card.MailboxID(), ThreadID: msg.ThreadID, CreatedAt: msg.CreatedAt, ExpiresAt: msg.ExpiresAt, Read: true,
		Message: canon, Digest: digest, CardHash: card.Hash(), Delivery: store.DeliveryQueued, Reported: true}
	now := m.NowMS()
	ev := identity.Event{Protocol: Protocol, Type: proto.TypeMailSubmit, Actor: m.Self, CreatedAt: now}
	_, _, err = m.Sign(ctx, &engine.Write{Kind: OutboxMailPacket, Origin: origin, Capability: capability.MailWrite, Event: ev,
		Ref:  msg.MessageID,
		Fill: func(ev *identity.Event) error { return proto.SealEvent(ev, msg, card, now) },
		Also: func(tx *store.Tx, env *identity.Envelope, outbox int64) error {
			p, err := proto.SignedPacket(env, card)
			if err != nil {
				return err
			}
			letter.Packet, letter.Outbox = p.Canonical(), outbox
			if id != 0 {
				return tx.ResealLetter(ctx, id, letter.Packet, card.Hash(), outbox)
			}
			letter.ID, err = tx.InsertLetter(ctx, letter)
			return err
		}})
	if err != nil {
		return nil, err
	}
	return letter, nil
}

// deliver sends a stored letter's packet to its card's routes in order, as
// the SDK's deliver does: delivered at the first route that accepts it;
// after stale_card the card is read once more and, when it changed, the
// letter sealed again to it; a network error, 429 or 5xx leaves the letter
// queued ("queued", with the error); any other refusal leaves it queued
// too and is returned. fromQueue marks a retry: its delivery is reported
// by the next sync unless the sync itself made it.
func (m *Module) deliver(ctx context.Context, letter *store.Letter, card *proto.Card, fromQueue bool) (string, error) {
	refreshed := false
	for {
		if letter.CardHash != card.Hash() {
			msg, err := proto.ParseMessage(letter.Message)
			if err != nil {
				return "", engine.Wrap(err)
			}
			old := letter.Outbox
			if letter, err = m.sealLetter(ctx, msg, card, letter.ID); err != nil {
				return "", err
			}
			m.CloseOutbox(ctx, old, store.OutboxFailed, nil, "sealed again to a newer card")
		}
		packet, err := proto.ParsePacket(letter.Packet)
		if err != nil {
			return "", engine.Wrap(err)
		}
		var transient, permanent *RouteError
		var permErr error
		stale := false
		for _, route := range card.Routes() {
			gctx, r, err := m.granted(ctx, route, capability.MailWrite)
			if err != nil {
				continue
			}
			res, err := r.Deliver(gctx, packet)
			if err == nil {
				return store.DeliveryDelivered, m.delivered(ctx, letter, route, res, fromQueue)
			}
			re := routeError(route, err, "", "")
			stale = stale || re.Code == proto.CodeStaleCard
			if isTransient(err) {
				transient = &re
			} else if permanent == nil {
				permanent, permErr = &re, err
			}
		}
		if stale && !refreshed {
			refreshed = true
			fresh, err := m.sendingCard(ctx, letter.Recipient, letter.MailboxID, card.Routes(), m.NowMS())
			if err == nil && fresh.Hash() != card.Hash() {
				card = fresh
				continue
			}
		}
		last := transient
		if last == nil {
			last = permanent
		}
		if err := m.queued(ctx, letter, last); err != nil {
			return "", err
		}
		switch {
		case transient != nil:
			m.ReleaseOutbox(ctx, letter.Outbox, errors.New(transient.Message))
			return store.DeliveryQueued, nil
		case permErr != nil:
			return "", permErr
		}
		return "", engine.Errorf(engine.CodePermissionDenied, "no route of the recipient's card is granted mail.write")
	}
}

// delivered records a delivery and closes the packet's outbox entry.
func (m *Module) delivered(ctx context.Context, letter *store.Letter, route string, res *proto.DeliveryResult, fromQueue bool) error {
	err := m.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.SetDelivery(ctx, letter.ID, &store.Delivery{State: store.DeliveryDelivered, Route: route, PacketID: res.PacketID,
			AcceptedAt: res.AcceptedAt, Reported: !fromQueue})
	})
	raw, _ := json.Marshal(res.Value())
	m.Done(ctx, letter.Outbox, raw)
	return engine.Wrap(err)
}

// queued records a letter left queued with the last route error.
func (m *Module) queued(ctx context.Context, letter *store.Letter, last *RouteError) error {
	var raw []byte
	if last != nil {
		raw, _ = json.Marshal(last)
	}
	return engine.Wrap(m.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.SetDelivery(ctx, letter.ID, &store.Delivery{State: store.DeliveryQueued, LastError: raw, Reported: true})
	}))
}

// isTransient reports whether a delivery failure is worth retrying with the
// same packet: a network failure, rate_limited (429) or a 5xx.
func isTransient(err error) bool {
	if engine.UnknownOutcome(err) {
		return true
	}
	var ce *client.Error
	return errors.As(err, &ce) && (ce.Status == 429 || ce.Code == identity.CodeRateLimited)
}

// routeError describes one route's failure.
func routeError(route string, err error, mailboxID, packetID string) RouteError {
	e := engine.AsError(err)
	return RouteError{Route: route, Code: e.Code, Message: e.Message, MailboxID: mailboxID, PacketID: packetID, err: err}
}

// retryLetter delivers one queued letter again with its stored packet and
// the card pinned for its mailbox (as the SDK's retry_queued does). It
// reports whether it was delivered; a letter whose recipient has no pin is
// left alone.
func (m *Module) retryLetter(ctx context.Context, letter *store.Letter, fromQueue bool) (bool, error) {
	card, err := m.pinned(ctx, letter.Recipient, letter.MailboxID)
	if err != nil || card == nil {
		return false, err
	}
	status, err := m.deliver(ctx, letter, card, fromQueue)
	return status == store.DeliveryDelivered, err
}

// packetResubmitter delivers, in the background, a queued letter whose
// packet's outbox entry is left (engine.Submitter).
type packetResubmitter struct{ m *Module }

func (r packetResubmitter) Resubmit(ctx context.Context, e *store.OutboxEntry, env *identity.Envelope) (engine.Outcome, []byte, error) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	letter, err := m.Store.Read().LetterByOutbox(ctx, e.ID)
	if errors.Is(err, store.ErrNotFound) {
		return engine.Refused, nil, errors.New("no stored letter has this packet (sealed again, or expired)")
	}
	if err != nil {
		return engine.Unknown, nil, err
	}
	if letter.Delivery == store.DeliveryDelivered {
		return engine.Accepted, nil, nil
	}
	if m.NowMS() >= letter.ExpiresAt {
		return engine.Refused, nil, errors.New("the letter expired undelivered")
	}
	ok, err := m.retryLetter(ctx, letter, true)
	switch {
	case ok:
		return engine.Accepted, nil, nil
	case err != nil:
		return engine.Refused, nil, err
	}
	return engine.Unknown, nil, errors.New("still queued")
}
