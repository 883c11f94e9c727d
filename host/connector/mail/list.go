package mail

import (
	"context"
	"strconv"

	"apconnect/host/capability"
	"apconnect/host/engine"
	proto "apconnect/host/proto/mail"
	"apconnect/host/store"
)

// Local views are shown only for the relays the operator lets the agent
// read: a mailbox when one of its retained cards' routes is granted
// mail.read, a received letter when its mailbox is, a sent letter when the
// route that took it, or one of its recipient's pinned card's, is.

// MailboxesList is agent_protocols_mail_mailboxes_list. Without host it
// lists the agent's mailboxes from local state (their latest cards). With
// host it authenticates to that relay and reads one page of the agent's
// cards there (limit 1..1000, default 100; cursor), keeping each as one of
// the agent's cards (a relay's older card is kept as history and moves no
// pin back); keys are never recovered that way (key_available tells).
func (m *Module) MailboxesList(ctx context.Context, sess SessionID, in MailboxesListInput) (*MailboxesListResult, error) {
	if in.Host == "" {
		if in.Limit != 0 || in.Cursor != "" {
			return nil, engine.Invalid("limit and cursor page a relay's list: they need host")
		}
		return m.localMailboxes(ctx)
	}
	gctx, r, err := m.granted(ctx, in.Host, capability.MailRead)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit == 0 {
		limit = proto.DefaultListLimit
	}
	page, err := r.Mailboxes(gctx, limit, in.Cursor)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.NowMS()
	out := &MailboxesListResult{Mailboxes: []MailboxView{}, NextCursor: page.NextCursor}
	for _, rec := range page.Result {
		if err := m.retainOwnCard(ctx, rec.Card, now); err != nil {
			return nil, err
		}
	}
	for _, rec := range page.Result {
		cards, err := m.ownCards(ctx, m.Store.Read(), rec.Card.MailboxID())
		if err != nil {
			return nil, err
		}
		v, err := m.mailboxView(ctx, m.Store.Read(), cards[len(cards)-1], now)
		if err != nil {
			return nil, err
		}
		out.Mailboxes = append(out.Mailboxes, *v)
	}
	return out, nil
}

// localMailboxes lists the agent's visible mailboxes by ID.
func (m *Module) localMailboxes(ctx context.Context) (*MailboxesListResult, error) {
	if err := m.readable(); err != nil {
		return nil, err
	}
	views, err := m.MailboxViews(ctx)
	if err != nil {
		return nil, err
	}
	return &MailboxesListResult{Mailboxes: views}, nil
}

// MailboxViews returns the views of the agent's mailboxes the operator
// lets it read, by mailbox ID. Local state only (the mailboxes resource).
func (m *Module) MailboxViews(ctx context.Context) ([]MailboxView, error) {
	out := []MailboxView{}
	err := m.Store.View(ctx, func(q store.Q) error {
		boxes, err := m.mailboxes(ctx, q)
		if err != nil {
			return err
		}
		now := m.NowMS()
		for _, id := range sortedKeys(boxes) {
			cards := boxes[id]
			if !m.anyAllows(cardRoutes(cards), capability.MailRead) {
				continue
			}
			v, err := m.mailboxView(ctx, q, cards[len(cards)-1], now)
			if err != nil {
				return err
			}
			out = append(out, *v)
		}
		return nil
	})
	return out, engine.Wrap(err)
}

// cardRoutes is the union of the routes of cards.
func cardRoutes(cards []*proto.Card) []string {
	var out []string
	for _, c := range cards {
		out = union(out, c.Routes())
	}
	return out
}

// visibility decides which letters the operator lets the agent read.
type visibility struct {
	m     *Module
	boxes map[string][]*proto.Card
	pins  map[[2]string][]string
}

func (m *Module) visibility(ctx context.Context) (*visibility, error) {
	boxes, err := m.mailboxes(ctx, m.Store.Read())
	if err != nil {
		return nil, err
	}
	return &visibility{m: m, boxes: boxes, pins: map[[2]string][]string{}}, nil
}

// shows reports whether a letter may be shown.
func (v *visibility) shows(ctx context.Context, l *store.Letter) bool {
	var origins []string
	switch {
	case l.Direction == store.LetterReceived:
		origins = cardRoutes(v.boxes[l.MailboxID])
	case l.Route != "":
		origins = []string{l.Route}
	default:
		key := [2]string{l.Recipient, l.MailboxID}
		routes, ok := v.pins[key]
		if !ok {
			if pin, err := v.m.pinned(ctx, l.Recipient, l.MailboxID); err == nil && pin != nil {
				routes = pin.Routes()
			}
			v.pins[key] = routes
		}
		origins = routes
	}
	if len(origins) == 0 {
		return v.m.readable() == nil
	}
	return v.m.anyAllows(origins, capability.MailRead)
}

// List is agent_protocols_mail_list: stored letters, oldest first,
// filtered by direction, mailbox, sender, thread, message ID and unread
// state, 20 a page by default (an offset cursor, as the SDK's). mark_read
// marks the received letters of the page read (and with unread_only the
// next page starts at the same offset, since the page left the
// selection). It reads and marks local state only; a letter is untrusted
// content and authorizes nothing.
func (m *Module) List(ctx context.Context, sess SessionID, in ListInput) (*ListResult, error) {
	if err := m.readable(); err != nil {
		return nil, err
	}
	vis, err := m.visibility(ctx)
	if err != nil {
		return nil, err
	}
	all, _, err := m.Store.Read().Letters(ctx, store.LetterQuery{Direction: in.Direction, MailboxID: in.MailboxID, Sender: in.From,
		ThreadID: in.ThreadID, MessageID: in.MessageID, UnreadOnly: in.UnreadOnly})
	if err != nil {
		return nil, engine.Wrap(err)
	}
	var selected []*store.Letter
	for _, l := range all {
		if vis.shows(ctx, l) {
			selected = append(selected, l)
		}
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 1000)
	offset, err := strconv.Atoi(in.Cursor)
	if err != nil || offset < 0 {
		offset = 0
	}
	page := selected[min(offset, len(selected)):min(offset+limit, len(selected))]
	out := &ListResult{Messages: []MessageView{}}
	if offset+limit < len(selected) {
		out.NextCursor = strconv.Itoa(offset + limit)
		if in.UnreadOnly && in.MarkRead {
			out.NextCursor = strconv.Itoa(offset)
		}
	}
	if in.MarkRead {
		var ids []int64
		for _, l := range page {
			if l.Direction == store.LetterReceived && !l.Read {
				ids = append(ids, l.ID)
				l.Read = true
			}
		}
		if err := m.Store.Write(ctx, func(tx *store.Tx) error { return tx.MarkLettersRead(ctx, ids) }); err != nil {
			return nil, engine.Wrap(err)
		}
		if len(ids) > 0 {
			m.Notify()
		}
	}
	for _, l := range page {
		out.Messages = append(out.Messages, messageView(l, in.IncludeData))
	}
	if out.UnreadCount, err = m.unreadCount(ctx, vis); err != nil {
		return nil, err
	}
	return out, nil
}

// unreadCount counts the unread received letters shown.
func (m *Module) unreadCount(ctx context.Context, vis *visibility) (int, error) {
	unread, _, err := m.Store.Read().Letters(ctx, store.LetterQuery{UnreadOnly: true})
	if err != nil {
		return 0, engine.Wrap(err)
	}
	n := 0
	for _, l := range unread {
		if vis.shows(ctx, l) {
			n++
		}
	}
	return n, nil
}

// LetterMeta is what the letters resource shows of a letter: metadata
// only, never its content.
type LetterMeta struct {
	Direction  string        `json:"direction"`
	MessageID  string        `json:"message_id"`
	ThreadID   string        `json:"thread_id"`
	From       string        `json:"from"`
	To         string        `json:"to"`
	MailboxID  string        `json:"mailbox_id"`
	InReplyTo  string        `json:"in_reply_to,omitempty"`
	CreatedAt  int64         `json:"created_at"`
	ExpiresAt  int64         `json:"expires_at"`
	ReceivedAt int64         `json:"received_at,omitempty"`
	Read       *bool         `json:"read,omitempty"`
	Delivery   *DeliveryView `json:"delivery,omitempty"`
	Size       int           `json:"size"`
	Parts      int           `json:"parts"`
}

// LetterMetas returns the metadata of the stored letters the operator lets
// the agent read, oldest first, at most limit (0: all) and whether more
// were left out. Local state only (the letters resource).
func (m *Module) LetterMetas(ctx context.Context, limit int) ([]LetterMeta, bool, error) {
	vis, err := m.visibility(ctx)
	if err != nil {
		return nil, false, err
	}
	all, _, err := m.Store.Read().Letters(ctx, store.LetterQuery{})
	if err != nil {
		return nil, false, engine.Wrap(err)
	}
	out := []LetterMeta{}
	for _, l := range all {
		if !vis.shows(ctx, l) {
			continue
		}
		if limit > 0 && len(out) == limit {
			return out, true, nil
		}
		v := messageView(l, false)
		out = append(out, LetterMeta{Direction: v.Direction, MessageID: v.MessageID, ThreadID: v.ThreadID, From: v.From, To: v.To,
			MailboxID: v.MailboxID, InReplyTo: v.InReplyTo, CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt, ReceivedAt: v.ReceivedAt,
			Read: v.Read, Delivery: v.Delivery, Size: len(l.Message), Parts: len(v.Parts)})
	}
	return out, false, nil
}

// Readable refuses the Mail resources as the local Mail tools are
// refused: when no configured origin grants mail.read.
func (m *Module) Readable() error { return m.readable() }
