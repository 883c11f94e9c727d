package mail

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"apconnect/host/engine"
	proto "apconnect/host/proto/mail"
	"apconnect/host/store"
)

// jsonMarshal encodes without HTML escaping.
func jsonMarshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// mailboxView is the view of a mailbox whose latest card is card.
func (m *Module) mailboxView(ctx context.Context, q store.Q, card *proto.Card, now int64) (*MailboxView, error) {
	p := card.Payload()
	v := &MailboxView{MailboxID: p.MailboxID, Address: proto.CardAddress(card, true), Routes: p.Routes, CardHash: card.Hash(),
		CreatedAt: card.CreatedAt(), ExpiresAt: p.ExpiresAt, ReceiveUntil: p.ReceiveUntil, MaxPacketBytes: p.MaxPacketBytes,
		Status: card.Status(now), PendingRoutes: []string{}}
	if _, err := q.MailKey(ctx, p.PublicKey); err == nil {
		v.KeyAvailable = true
	} else if err != store.ErrNotFound {
		return nil, engine.Wrap(err)
	}
	pending, err := q.Pending(ctx)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if pp := pending[p.MailboxID]; pp != nil {
		v.PendingRoutes = pp.Routes
	}
	unread, _, err := q.UnreadLetters(ctx)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	v.UnreadCount = unread[p.MailboxID]
	return v, nil
}

// messageView is the view of a stored letter; includeData adds the
// base64url data of its non-text parts.
func messageView(l *store.Letter, includeData bool) MessageView {
	v := MessageView{Direction: l.Direction, MessageID: l.MessageID, ThreadID: l.ThreadID, From: l.Sender, To: l.Recipient,
		MailboxID: l.MailboxID, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt, ReceivedAt: l.ReceivedAt, Parts: []PartView{}}
	if msg, err := proto.ParseMessage(l.Message); err == nil {
		v.Subject, v.InReplyTo = msg.Subject, msg.InReplyTo
		if msg.ReplyCard != nil {
			v.ReplyAddress = proto.CardAddress(msg.ReplyCard, true)
		}
		for _, p := range msg.Parts {
			b, _ := p.Bytes()
			pv := PartView{MediaType: p.MediaType, Name: p.Name, Size: len(b)}
			if p.IsText() {
				t := strings.ToValidUTF8(string(b), string(utf8.RuneError))
				pv.Text = &t
			} else if includeData {
				pv.Data = p.Data
			}
			v.Parts = append(v.Parts, pv)
		}
	}
	if l.Direction == store.LetterReceived {
		read := l.Read
		v.Read = &read
	} else if l.Delivery != "" {
		d := &DeliveryView{Status: l.Delivery, Route: l.Route, PacketID: l.PacketID, AcceptedAt: l.AcceptedAt}
		if re, ok := decodeRouteError(l.LastError); ok && l.Delivery == store.DeliveryQueued {
			d.LastError = &re
		}
		v.Delivery = d
	}
	return v
}

// decodeRouteError reads a stored route error.
func decodeRouteError(raw []byte) (RouteError, bool) {
	var re RouteError
	if len(raw) == 0 || json.Unmarshal(raw, &re) != nil || re.Route == "" {
		return re, false
	}
	return re, true
}
