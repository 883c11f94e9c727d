package mail

import (
	"context"
	"errors"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/inbox"
	proto "apconnect/host/proto/mail"
	"apconnect/host/store"
)

// Sync is agent_protocols_mail_sync (SyncOnce for the tool).
func (m *Module) Sync(ctx context.Context, sess SessionID, in SyncInput) (*SyncResult, error) {
	only := ""
	if in.MailboxID != nil {
		only = *in.MailboxID
		cards, err := m.ownCards(ctx, m.Store.Read(), only)
		if err != nil {
			return nil, err
		}
		if len(cards) == 0 {
			return nil, engine.Invalid("unknown mailbox %q: not one of yours", only)
		}
	}
	return m.SyncOnce(ctx, only)
}

// SyncOnce runs one Mail sync without an MCP session (mail_sync calls it;
// a resident process may call it on a timer), as the SDK connector's
// mail_sync does, in its order:
//
//  1. the pending publications are published again;
//  2. the queued letters are resent with their stored packets (those past
//     their expires_at are reported as expired instead);
//  3. what Agent Mail no longer keeps is pruned (cards and keys past
//     receive_until, old pins, expired letters);
//  4. every route of every retained card of the agent's mailboxes (of
//     only, when not "") is read, up to 10 pages of 100 packets from the
//     start: a blocked sender's packet ([mail] blocked_senders) or an
//     expired one is deleted unopened; a packet that cannot be opened or
//     verified is kept and reported in errors; the same letter again is
//     deleted; a reused message ID with other content is kept and
//     reported; a new letter is stored with its inbox item (and its reply
//     card pinned) in one transaction, and its relay copy deleted after
//     that commit.
//
// It needs mail.read on some origin; each route is read only with
// mail.read there, and letters are resent only with mail.write.
func (m *Module) SyncOnce(ctx context.Context, only string) (*SyncResult, error) {
	if err := m.readable(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &SyncResult{Received: []MessageView{}, Delivered: []string{}, Expired: []string{}, Errors: []RouteError{}}
	now := m.NowMS()
	failed, err := m.republish(ctx, only, now)
	if err != nil {
		return nil, err
	}
	out.Errors = append(out.Errors, failed...)
	if err := m.retryQueued(ctx, now, out); err != nil {
		return nil, err
	}
	m.prune(ctx, now)
	if err := m.poll(ctx, only, out); err != nil {
		return nil, err
	}
	queued, err := m.Store.Read().QueuedLetters(ctx)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	out.Queued = len(queued)
	if _, out.PendingInboxCount, err = m.PendingInbox(ctx, 1); err != nil {
		return nil, err
	}
	out.SyncedAt = m.NowMS()
	return out, nil
}

// retryQueued resends the queued letters and lists, in out, those
// delivered (now, or by the background resubmission since the last sync)
// and those that expired undelivered.
func (m *Module) retryQueued(ctx context.Context, now int64, out *SyncResult) error {
	var earlier []string
	err := m.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		earlier, err = tx.UnreportedDeliveries(ctx)
		return err
	})
	if err != nil {
		return engine.Wrap(err)
	}
	out.Delivered = append(out.Delivered, earlier...)
	queued, err := m.Store.Read().QueuedLetters(ctx)
	if err != nil {
		return engine.Wrap(err)
	}
	for _, l := range queued {
		if now >= l.ExpiresAt {
			out.Expired = append(out.Expired, l.MessageID)
			continue
		}
		ok, err := m.retryLetter(ctx, l, false)
		switch {
		case ok:
			out.Delivered = append(out.Delivered, l.MessageID)
		case err != nil:
			if cur, rerr := m.Store.Read().LetterByID(ctx, l.ID); rerr == nil && len(cur.LastError) > 0 {
				if re, ok := decodeRouteError(cur.LastError); ok {
					out.Errors = append(out.Errors, re)
				}
			}
		}
	}
	return nil
}

// prune drops what Agent Mail no longer keeps (store.PruneMail); a failure
// is logged, never fatal.
func (m *Module) prune(ctx context.Context, now int64) {
	err := m.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.PruneMail(ctx, now, proto.PinLifetime)
		return err
	})
	if err != nil {
		m.Log.Warn("pruning mail state", "err", err)
	}
}

// pollTarget is one of the agent's mailboxes to read: its routes (newest
// card's first) and the cards whose keys open its packets.
type pollTarget struct {
	mailboxID string
	routes    []string
	cards     map[string]*proto.Card // by card hash
}

// poll reads the agent's mailboxes at their relays into out.
func (m *Module) poll(ctx context.Context, only string, out *SyncResult) error {
	boxes, err := m.mailboxes(ctx, m.Store.Read())
	if err != nil {
		return err
	}
	for _, id := range sortedKeys(boxes) {
		if only != "" && id != only {
			continue
		}
		t := pollTarget{mailboxID: id, cards: map[string]*proto.Card{}}
		cards := boxes[id]
		for i := len(cards) - 1; i >= 0; i-- {
			t.routes = union(t.routes, cards[i].Routes())
			t.cards[cards[i].Hash()] = cards[i]
		}
		for _, route := range t.routes {
			if err := m.pollRoute(ctx, &t, route, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// pollRoute reads one route of one mailbox (up to SyncMaxPages pages of
// SyncPageLimit packets) and deletes what it may.
func (m *Module) pollRoute(ctx context.Context, t *pollTarget, route string, out *SyncResult) error {
	gctx, r, err := m.granted(ctx, route, capability.MailRead)
	if err != nil {
		return nil // not readable here: the SDK skips a route it may not reach
	}
	var deletions []string
	cursor := ""
	for range proto.SyncMaxPages {
		page, err := r.Packets(gctx, t.mailboxID, proto.SyncPageLimit, cursor)
		if err != nil {
			out.Errors = append(out.Errors, routeError(route, err, t.mailboxID, ""))
			break
		}
		for _, rec := range page.Result {
			view, del, err := m.accept(ctx, t, rec.Packet)
			switch {
			case err != nil && engine.AsError(err).Code == engine.CodeInternal:
				return err
			case err != nil:
				out.Errors = append(out.Errors, routeError(route, err, t.mailboxID, rec.PacketID))
			case view != nil:
				out.Received = append(out.Received, *view)
				deletions = append(deletions, rec.PacketID)
			case del:
				deletions = append(deletions, rec.PacketID)
			}
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	for _, pid := range deletions {
		if err := r.Delete(gctx, t.mailboxID, pid); err != nil {
			out.Errors = append(out.Errors, routeError(route, err, t.mailboxID, pid))
		}
	}
	return nil
}

// accept decides one listed packet (its shape, hash and signature checked
// by the list): a new letter is stored with its inbox item and returned;
// del is true for a packet to delete (a blocked sender's, an expired one,
// the same letter again); an error is a packet kept and reported.
func (m *Module) accept(ctx context.Context, t *pollTarget, p *proto.Packet) (view *MessageView, del bool, err error) {
	now := m.NowMS()
	if m.Config.Mail.Blocked(p.Sender()) || !proto.PacketLive(p.Header(), now) {
		return nil, true, nil
	}
	card := t.cards[p.Header().CardHash]
	if card == nil {
		return nil, false, engine.Errorf(proto.CodeInvalidEvent, "the packet is sealed to no retained card of this mailbox")
	}
	sealed, err := m.Store.Read().MailKey(ctx, card.Payload().PublicKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, engine.Errorf(proto.CodeInvalidEvent, "the key of the card this packet is sealed to is not held here")
	}
	if err != nil {
		return nil, false, engine.Wrap(err)
	}
	key, err := m.openKey(card.MailboxID(), card.Payload().PublicKey, sealed.Sealed)
	if err != nil {
		return nil, false, err
	}
	msg, err := proto.Open(p, card, key, m.Self, now)
	if err != nil {
		return nil, false, err
	}
	return m.store(ctx, t.mailboxID, msg, now)
}

// store keeps an opened letter: a duplicate is to delete, a reused
// message ID an error; a new letter is stored with its inbox item, and its
// reply card pinned, in one transaction.
func (m *Module) store(ctx context.Context, mailboxID string, msg *proto.Message, now int64) (*MessageView, bool, error) {
	var letter *store.Letter
	err := m.Store.Write(ctx, func(tx *store.Tx) error {
		held := ""
		if l, err := tx.FindLetter(ctx, store.LetterReceived, msg.From, msg.MessageID); err == nil {
			held = l.Digest
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		acc, err := proto.CheckReceived(msg, held, now)
		if err != nil || acc == proto.Duplicate {
			return err
		}
		if letter, err = receivedLetter(msg, mailboxID, now); err != nil {
			return err
		}
		if letter.ID, err = tx.InsertLetter(ctx, letter); err != nil {
			return err
		}
		if msg.ReplyCard != nil {
			// Verified with the letter; a card older than the pin is not used.
			if err := m.pinIn(ctx, tx, msg.ReplyCard, msg.From, now, true); err != nil && engine.AsError(err).Code == engine.CodeInternal {
				return err
			}
		}
		entry, err := inboxEntry(msg, now)
		if err != nil {
			return err
		}
		_, err = tx.InsertSourceInbox(ctx, "mail:"+mailboxID, []store.InboxEntry{entry})
		return err
	})
	if err != nil {
		return nil, false, engine.Wrap(err)
	}
	if letter == nil {
		return nil, true, nil
	}
	m.Notify()
	v := messageView(letter, false)
	return &v, false, nil
}

// receivedLetter is the stored form of a new letter.
func receivedLetter(msg *proto.Message, mailboxID string, now int64) (*store.Letter, error) {
	canon, err := msg.Canonical()
	if err != nil {
		return nil, err
	}
	digest, err := msg.Digest()
	if err != nil {
		return nil, err
	}
	return &store.Letter{Direction: store.LetterReceived, Sender: msg.From, MessageID: msg.MessageID, Recipient: msg.To,
		MailboxID: mailboxID, ThreadID: msg.ThreadID, CreatedAt: msg.CreatedAt, ExpiresAt: msg.ExpiresAt, ReceivedAt: now,
		Message: canon, Digest: digest, Reported: true}, nil
}

// ToolMailList is the tool a letter's inbox item suggests.
const ToolMailList = "agent_protocols_mail_list"

// InboxKind is the kind of a letter's inbox item.
const InboxKind = "mail.received"

// inboxEntry is the inbox item a received letter makes, as the SDK
// connector makes it: mail.received:{sender}:{message_id}, its summary
// from the subject or the text (untrusted), mail_list suggested.
func inboxEntry(msg *proto.Message, now int64) (store.InboxEntry, error) {
	actor := msg.From
	it := inbox.Item{ID: proto.InboxItemID(msg.From, msg.MessageID), Kind: InboxKind, Priority: inbox.PriorityNormal,
		Actor: &actor, CreatedAt: now, Reason: "received", SuggestedTools: []string{ToolMailList},
		Message: map[string]any{"summary": proto.Summary(msg), "message_id": msg.MessageID, "thread_id": msg.ThreadID}}
	raw, err := jsonMarshal(it)
	if err != nil {
		return store.InboxEntry{}, err
	}
	return store.InboxEntry{ID: it.ID, Kind: it.Kind, Priority: inbox.PriorityRank(it.Priority), CreatedAt: now, Item: raw}, nil
}
