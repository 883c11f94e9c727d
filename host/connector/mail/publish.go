package mail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/mail"
	"apconnect/host/store"
)

// MailboxPublish is agent_protocols_mail_mailbox_publish: create a mailbox
// (no mailbox_id: a fresh ID and key), or sign a replacement card of one of
// the agent's mailboxes to change its routes, renew it, rotate its key or
// close it (routes []), and publish it to its new, old and pending routes,
// as the SDK connector does. The card, its key (sealed) and the pending
// publication are committed with the card's signature before anything is
// sent, so a crash never leaves a published card whose key is lost. A
// route that refuses the card with a nonce or time error makes it signed
// once more and republished everywhere; a route that fails otherwise is
// asked for its card, and is failed (and pending, for mail_sync to retry,
// while it is granted) unless it holds this one.
func (m *Module) MailboxPublish(ctx context.Context, sess SessionID, in MailboxPublishInput) (*MailboxPublishResult, error) {
	routes, err := checkRoutes(in.Routes)
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		if err := m.Allow(r, capability.MailWrite); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.NowMS()
	m.prune(ctx, now)
	plan, err := m.planCard(ctx, in, routes, now)
	if err != nil {
		return nil, err
	}
	if err := m.firstRefusal(plan.targets, capability.MailWrite); err != nil {
		return nil, err
	}
	if _, err := m.Take("mail:publish:"+plan.payload.MailboxID, m.Config.Limits.MailboxPublishes(), time.Minute); err != nil {
		return nil, err
	}
	card, outbox, err := m.signCard(ctx, plan.payload, plan.key, plan.targets)
	if err != nil {
		return nil, err
	}
	card, outbox, published, failed, err := m.publishCard(ctx, card, outbox, plan.targets)
	if err != nil {
		return nil, err
	}
	m.closePublication(ctx, outbox, published, failed)
	view, err := m.mailboxView(ctx, m.Store.Read(), card, m.NowMS())
	if err != nil {
		return nil, err
	}
	return &MailboxPublishResult{Mailbox: *view, Published: published, Failed: failed}, nil
}

// cardPlan is what a publication signs and where it sends it.
type cardPlan struct {
	payload proto.CardPayload
	key     *proto.Key // a new key to store with the card; nil to keep the card's
	targets []string
}

// planCard builds the payload of a new or replacement card with the SDK's
// defaults, and its targets: the new routes, then every route of the
// mailbox's retained cards and its pending publication.
func (m *Module) planCard(ctx context.Context, in MailboxPublishInput, routes []string, now int64) (*cardPlan, error) {
	plan := &cardPlan{payload: proto.CardPayload{MailboxID: in.MailboxID, Routes: routes, MaxPacketBytes: proto.DefaultCardPacketBytes}}
	var previous []*proto.Card
	if in.MailboxID == "" {
		if len(routes) == 0 {
			return nil, engine.Invalid("a new mailbox needs routes")
		}
		id, err := proto.NewID()
		if err != nil {
			return nil, engine.Wrap(err)
		}
		plan.payload.MailboxID = id
	} else {
		var err error
		if previous, err = m.ownCards(ctx, m.Store.Read(), in.MailboxID); err != nil {
			return nil, err
		}
		if len(previous) == 0 {
			return nil, engine.Invalid("unknown mailbox %s: not one of yours (agent_protocols_mail_mailboxes_list)", in.MailboxID)
		}
		current := previous[len(previous)-1].Payload()
		plan.payload.PublicKey, plan.payload.MaxPacketBytes = current.PublicKey, current.MaxPacketBytes
		if !in.RotateKey {
			if _, err := m.Store.Read().MailKey(ctx, current.PublicKey); err != nil {
				return nil, engine.Invalid("the mailbox key is not held here; publish with rotate_key to replace it")
			}
		}
	}
	if in.MailboxID == "" || in.RotateKey {
		k, err := proto.GenerateKey()
		if err != nil {
			return nil, engine.Wrap(err)
		}
		plan.key, plan.payload.PublicKey = k, k.PublicKey()
	}
	plan.payload.ExpiresAt = now + proto.DefaultCardTTL
	if in.ExpiresAt != nil {
		plan.payload.ExpiresAt = *in.ExpiresAt
	}
	plan.payload.ReceiveUntil = plan.payload.ExpiresAt + proto.DefaultReceiveWindow
	if in.ReceiveUntil != nil {
		plan.payload.ReceiveUntil = *in.ReceiveUntil
	}
	if in.MaxPacketBytes != nil {
		plan.payload.MaxPacketBytes = *in.MaxPacketBytes
	}
	plan.targets = slices.Clone(routes)
	for _, c := range previous {
		plan.targets = union(plan.targets, c.Routes())
	}
	pending, err := m.Store.Read().Pending(ctx)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if p := pending[plan.payload.MailboxID]; p != nil {
		plan.targets = union(plan.targets, p.Routes)
	}
	return plan, nil
}

// checkRoutes checks a card's routes as the SDK connector does: at most 8
// (invalid_input), each a serialized HTTPS origin (invalid_url), none twice
// (invalid_input).
func checkRoutes(routes []string) ([]string, error) {
	if len(routes) > proto.MaxRoutes {
		return nil, engine.Invalid("a card lists at most %d routes", proto.MaxRoutes)
	}
	out := []string{}
	for _, r := range routes {
		if !identity.ValidOrigin(r) {
			return nil, &engine.Error{Code: proto.CodeInvalidURL, Message: fmt.Sprintf("route %q is not a serialized https origin (scheme://host[:port], lower case, no path)", r)}
		}
		if slices.Contains(out, r) {
			return nil, engine.Invalid("route %s is listed twice", r)
		}
		out = append(out, r)
	}
	return out, nil
}

// union appends to a the elements of b it lacks, in order.
func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// signCard signs a card for p through the engine's pipeline and, in the
// transaction that allocates its nonce, stores it as an own card with key
// (sealed; nil when the card keeps a stored key) and its publication to
// targets as pending. It returns the card and its outbox entry.
func (m *Module) signCard(ctx context.Context, p proto.CardPayload, key *proto.Key, targets []string) (*proto.Card, int64, error) {
	var sealed []byte
	if key != nil {
		var err error
		if sealed, err = m.sealKey(p.MailboxID, key); err != nil {
			return nil, 0, err
		}
	}
	origin := targets[0]
	for _, t := range targets {
		if m.allows(t, capability.MailWrite) {
			origin = t
			break
		}
	}
	var card *proto.Card
	ev := identity.Event{Protocol: Protocol, Type: proto.TypeMailboxPublish, Actor: m.Self, CreatedAt: m.NowMS(), Payload: p.Value()}
	_, outbox, err := m.Sign(ctx, &engine.Write{Kind: OutboxMailCard, Origin: origin, Capability: capability.MailWrite, Event: ev,
		Ref: p.MailboxID, Also: func(tx *store.Tx, env *identity.Envelope, _ int64) error {
			c, err := proto.CardFromValue(env.Value(), "")
			if err != nil {
				return err
			}
			if sealed != nil {
				if err := tx.PutMailKey(ctx, &store.MailKey{PublicKey: p.PublicKey, MailboxID: p.MailboxID, Sealed: sealed, CreatedAt: c.CreatedAt()}); err != nil {
					return err
				}
			}
			if err := tx.PutOwnCard(ctx, ownCardRow(c)); err != nil {
				return err
			}
			card = c
			return tx.SetPending(ctx, &store.PendingPublication{MailboxID: p.MailboxID, CardHash: c.Hash(), Routes: targets})
		}})
	if err != nil {
		return nil, 0, err
	}
	return card, outbox, nil
}

// ownCardRow is the stored form of an own card.
func ownCardRow(c *proto.Card) *store.OwnCard {
	raw, _ := c.MarshalJSON()
	p := c.Payload()
	return &store.OwnCard{Hash: c.Hash(), MailboxID: p.MailboxID, Nonce: c.Nonce(), CreatedAt: c.CreatedAt(),
		ReceiveUntil: p.ReceiveUntil, PublicKey: p.PublicKey, Envelope: raw}
}

// publishCard sends card to each target, as the SDK's publish_mail_card
// does, and records the routes still pending. It returns the card finally
// published (a re-signed one after a nonce or time refusal) with its outbox
// entry (the caller closes it), the routes that hold it and those that
// failed.
func (m *Module) publishCard(ctx context.Context, card *proto.Card, outbox int64, targets []string) (*proto.Card, int64, []string, []RouteError, error) {
	resigned := false
	for {
		published, failed := []string{}, []RouteError{}
		retry := false
		for _, route := range targets {
			err := m.publishTo(ctx, route, card)
			if err == nil {
				published = append(published, route)
				continue
			}
			if !resigned && m.resignable(ctx, err, card) {
				retry = true
				break
			}
			if m.holdsCard(ctx, route, card) {
				published = append(published, route)
				continue
			}
			failed = append(failed, routeError(route, err, card.MailboxID(), ""))
		}
		if retry {
			resigned = true
			all, err := m.ownCards(ctx, m.Store.Read(), card.MailboxID())
			if err != nil {
				return nil, 0, nil, nil, err
			}
			for _, c := range all {
				targets = union(targets, c.Routes())
			}
			m.CloseOutbox(ctx, outbox, store.OutboxFailed, nil, "refused for its nonce or time: signed again")
			if card, outbox, err = m.signCard(ctx, card.Payload(), nil, targets); err != nil {
				return nil, 0, nil, nil, err
			}
			continue
		}
		var pending []string
		for _, f := range failed {
			if m.allows(f.Route, capability.MailWrite) {
				pending = append(pending, f.Route)
			}
		}
		err := m.Store.Write(ctx, func(tx *store.Tx) error {
			return tx.SetPending(ctx, &store.PendingPublication{MailboxID: card.MailboxID(), CardHash: card.Hash(), Routes: pending})
		})
		return card, outbox, published, failed, engine.Wrap(err)
	}
}

// publishTo sends card to one route (mail.write there).
func (m *Module) publishTo(ctx context.Context, route string, card *proto.Card) error {
	gctx, r, err := m.granted(ctx, route, capability.MailWrite)
	if err != nil {
		return err
	}
	_, err = r.Publish(gctx, card)
	return err
}

// resignable reports whether a refused publication is signed again: a
// nonce refusal with a Max-Seen-Nonce the sequence moved past, or a time
// refusal of a card that has not expired.
func (m *Module) resignable(ctx context.Context, err error, card *proto.Card) bool {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return false
	}
	switch ce.Code {
	case identity.CodeNonceNotGreater:
		return ce.MaxSeenNonce != "" && m.ApplyMaxSeenNonce(ctx, ce.MaxSeenNonce) == nil
	case identity.CodeTimestampOutOfWindow:
		return card.Payload().ExpiresAt > m.NowMS()
	}
	return false
}

// holdsCard reads a route's card of the mailbox back and reports whether it
// is card (a publication whose answer was lost, or refused as a
// resubmission, still counts).
func (m *Module) holdsCard(ctx context.Context, route string, card *proto.Card) bool {
	gctx, r, err := m.granted(ctx, route, capability.MailRead)
	if err != nil {
		return false
	}
	rec, err := r.Card(gctx, card.MailboxID(), m.Self)
	return err == nil && rec.Card.Hash() == card.Hash()
}

// closePublication closes a publication's outbox entry with what became of
// it (the routes still pending are the sync's).
func (m *Module) closePublication(ctx context.Context, outbox int64, published []string, failed []RouteError) {
	raw, _ := json.Marshal(map[string]any{"published": published, "failed": failed})
	m.Done(ctx, outbox, raw)
}

// republish publishes the pending publications again (of one mailbox when
// only is not ""), as mail_sync does first: the routes still failing are
// returned.
func (m *Module) republish(ctx context.Context, only string, now int64) ([]RouteError, error) {
	pending, err := m.Store.Read().Pending(ctx)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	var errs []RouteError
	for _, id := range sortedKeys(pending) {
		p := pending[id]
		if only != "" && id != only {
			continue
		}
		row, err := m.Store.Read().OwnCard(ctx, p.CardHash)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return errs, engine.Wrap(err)
		}
		card, err := proto.ParseCard(row.Envelope)
		if err != nil || !proto.KeyRetained(card, now) {
			continue
		}
		_, outbox, _, failed, err := m.publishCard(ctx, card, 0, p.Routes)
		if err != nil {
			return errs, err
		}
		if outbox != 0 {
			m.closePublication(ctx, outbox, nil, failed)
		}
		errs = append(errs, failed...)
	}
	return errs, nil
}

// cardResubmitter publishes, in the background, a card whose publication
// a crash or a lost connection interrupted: to the routes still pending
// for it (engine.Submitter).
type cardResubmitter struct{ m *Module }

func (r cardResubmitter) Resubmit(ctx context.Context, e *store.OutboxEntry, env *identity.Envelope) (engine.Outcome, []byte, error) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	card, err := proto.CardFromValue(env.Value(), "")
	if err != nil {
		return engine.Refused, nil, err
	}
	pending, err := m.Store.Read().Pending(ctx)
	if err != nil {
		return engine.Unknown, nil, err
	}
	p := pending[card.MailboxID()]
	if p == nil || p.CardHash != card.Hash() {
		return engine.Accepted, []byte(`{"published":[],"failed":[]}`), nil
	}
	_, outbox, published, failed, err := m.publishCard(ctx, card, e.ID, p.Routes)
	if err != nil {
		return engine.Unknown, nil, err
	}
	raw, _ := json.Marshal(map[string]any{"published": published, "failed": failed})
	if outbox != e.ID {
		m.Done(ctx, outbox, raw)
		return engine.Refused, nil, errors.New("signed again after a nonce or time refusal")
	}
	return engine.Accepted, raw, nil
}
