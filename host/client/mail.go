package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"apconnect/host/identity"
	"apconnect/host/proto/mail"
)

// MaxMailResponseBytes bounds a relay's response: a page of packets, each up
// to 1 MiB (the SDK's MailClient bound, 128 × MaxPacketBytes).
const MaxMailResponseBytes = 128 * mail.MaxPacketBytes

// MailRelay is the client of one Agent Mail relay origin (a card route), as
// the reference SDK's MailClient talks to one: the paths are fixed
// (/v1/mailboxes, /v1/me/mailboxes; the discovery document is informational
// and never supplies them), no redirect is followed, and every success must
// come from the relay's origin with the exact status the call takes and an
// application/json body (an empty one for 204). Card publications and
// deliveries are signed objects sent once (never retried here: the caller
// keeps the bytes and resends them); owner calls (listing and deleting
// packets, listing the agent's mailboxes) carry a fresh request JWT of the
// signer for each attempt. Everything read is checked with the Mail rules
// (host/proto/mail) before it is returned: a relay's answer that breaks them
// is an *identity.Error (invalid_response, or the signed object's own code).
// It is safe for concurrent use.
type MailRelay struct {
	svc      *service
	signer   identity.Signer
	maxBytes int64 // bound of a response (MaxMailResponseBytes)
}

// NewMailRelay returns the client of the relay at origin (an https origin
// from the config). hc carries its CA; its redirect policy is replaced so
// that no redirect is followed. signer, the agent's identity, mints the owner
// JWTs (nil: owner calls fail with ErrNoSigner).
func NewMailRelay(origin string, hc *http.Client, signer identity.Signer, opts Options) (*MailRelay, error) {
	svc, err := newService(origin, hc, "agent-mail", mail.Protocol, opts)
	if err != nil {
		return nil, err
	}
	return &MailRelay{svc: svc, signer: signer, maxBytes: MaxMailResponseBytes}, nil
}

// Origin returns the relay's normalized origin.
func (m *MailRelay) Origin() string { return m.svc.origin }

// mailboxes is the fixed base path of a relay's mailboxes.
func (m *MailRelay) mailboxes() string { return m.svc.origin + "/v1/mailboxes" }

// send runs one Mail call with the SDK's response checks and strictly parses
// a JSON body (nil for a 204).
func (m *MailRelay) send(ctx context.Context, c call) (any, error) {
	c.strict = true
	if c.maxBytes == 0 {
		c.maxBytes = m.maxBytes
	}
	resp, err := m.svc.do(ctx, c)
	if err != nil {
		return nil, mailResponseError(err)
	}
	if c.status == http.StatusNoContent {
		if len(resp.body) != 0 {
			return nil, identity.NewError(mail.CodeInvalidResponse, "", "a 204 response must have no body")
		}
		return nil, nil
	}
	v, err := identity.ParseStrict(resp.body)
	if err != nil {
		return nil, &identity.Error{Code: mail.CodeInvalidResponse, Message: "the relay's response is not strict UTF-8 JSON: " + err.Error(), Err: err}
	}
	return v, nil
}

// mailResponseError gives a response the relay did send but that breaks the
// client's checks the SDK's code: payload_too_large for an oversized body,
// invalid_response otherwise. Service errors and network failures pass as
// they are.
func mailResponseError(err error) error {
	var re *ResponseError
	if !errors.As(err, &re) {
		return err
	}
	code := mail.CodeInvalidResponse
	if errors.Is(err, ErrResponseTooLarge) {
		code = mail.CodePayloadTooLarge
	}
	return &identity.Error{Code: code, Message: re.Error(), Err: err}
}

// Discovery reads the relay's /.well-known/agent-mail document and checks it
// (mail.ValidateDiscovery). It is informational: delivery paths are fixed.
func (m *MailRelay) Discovery(ctx context.Context) (map[string]any, error) {
	v, err := m.send(ctx, call{method: http.MethodGet, url: m.svc.origin + mail.DiscoveryPath, status: http.StatusOK,
		discovery: true, maxBytes: MaxDiscoveryBytes})
	if err != nil {
		return nil, err
	}
	if err := mail.ValidateDiscovery(v, m.svc.origin); err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// Publish sends a signed card (POST /v1/mailboxes, 200) and checks the
// record the relay answers: the card itself (same hash) with its
// accepted_at. It is not retried.
func (m *MailRelay) Publish(ctx context.Context, card *mail.Card) (*mail.CardRecord, error) {
	body, err := card.MarshalJSON()
	if err != nil {
		return nil, err
	}
	v, err := m.send(ctx, call{method: http.MethodPost, url: m.mailboxes(), body: body, write: true, status: http.StatusOK})
	if err != nil {
		return nil, err
	}
	return mail.CardRecordFromValue(v, card.Owner(), card.MailboxID(), card.Hash())
}

// Card reads a mailbox's current card (GET /v1/mailboxes/{id}/card, 200),
// even a closed or expired one, and checks that it is a valid card of owner
// for that mailbox. Pinning it is the caller's.
func (m *MailRelay) Card(ctx context.Context, mailboxID, owner string) (*mail.CardRecord, error) {
	if err := mail.CheckPathID(mailboxID, mail.IDBytes); err != nil {
		return nil, err
	}
	v, err := m.send(ctx, call{method: http.MethodGet, url: m.mailboxes() + "/" + mailboxID + "/card", status: http.StatusOK})
	if err != nil {
		return nil, err
	}
	return mail.CardRecordFromValue(v, owner, mailboxID, "")
}

// Deliver sends a sealed packet, or resends it byte for byte
// (POST /v1/mailboxes/{id}/packets, 202), and checks the relay's result
// against the packet. It is not retried: a *NetworkError, 429 or 5xx leaves
// the packet to be resent as it is.
func (m *MailRelay) Deliver(ctx context.Context, p *mail.Packet) (*mail.DeliveryResult, error) {
	u := m.mailboxes() + "/" + p.Header().MailboxID + "/packets"
	v, err := m.send(ctx, call{method: http.MethodPost, url: u, body: p.Canonical(), write: true, status: http.StatusAccepted})
	if err != nil {
		return nil, err
	}
	return mail.DeliveryResultFromValue(v, p)
}

// Packets lists one page of a mailbox's packets with an owner JWT
// (GET /v1/mailboxes/{id}/packets, 200), limit 1..1000, after cursor (the
// seq of the previous page's last record, "" for the first page). Every
// record is checked (mail.PacketListFromValue): valid packets of that
// mailbox, in ascending seq.
func (m *MailRelay) Packets(ctx context.Context, mailboxID string, limit int, cursor string) (*mail.PacketPage, error) {
	if err := mail.CheckPathID(mailboxID, mail.IDBytes); err != nil {
		return nil, err
	}
	if err := mail.CheckListLimit(limit); err != nil {
		return nil, err
	}
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	setStr(q, "cursor", cursor)
	v, err := m.send(ctx, m.owner(call{method: http.MethodGet, url: m.mailboxes() + "/" + mailboxID + "/packets", query: q, status: http.StatusOK}))
	if err != nil {
		return nil, err
	}
	return mail.PacketListFromValue(v, mailboxID, limit)
}

// Delete removes a packet from a mailbox with an owner JWT
// (DELETE /v1/mailboxes/{id}/packets/{packet_id}, 204 with no body). It is
// idempotent, so it is retried like a read.
func (m *MailRelay) Delete(ctx context.Context, mailboxID, packetID string) error {
	if err := mail.CheckPathID(mailboxID, mail.IDBytes); err != nil {
		return err
	}
	if err := mail.CheckPathID(packetID, 32); err != nil {
		return err
	}
	_, err := m.send(ctx, m.owner(call{method: http.MethodDelete, url: m.mailboxes() + "/" + mailboxID + "/packets/" + packetID, status: http.StatusNoContent}))
	return err
}

// Mailboxes lists one page of the signer's mailboxes at the relay with an
// owner JWT (GET /v1/me/mailboxes, 200): their current card records, by
// ascending mailbox ID, after cursor (the previous page's last mailbox ID).
func (m *MailRelay) Mailboxes(ctx context.Context, limit int, cursor string) (*mail.MailboxPage, error) {
	if m.signer == nil {
		return nil, ErrNoSigner
	}
	if err := mail.CheckListLimit(limit); err != nil {
		return nil, err
	}
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if cursor != "" {
		if err := mail.CheckMailboxCursor(cursor); err != nil {
			return nil, err
		}
		q.Set("cursor", cursor)
	}
	v, err := m.send(ctx, m.owner(call{method: http.MethodGet, url: m.svc.origin + "/v1/me/mailboxes", query: q, status: http.StatusOK}))
	if err != nil {
		return nil, err
	}
	return mail.MailboxListFromValue(v, m.signer.AgentID(), limit)
}

// owner makes c an owner call: a fresh request JWT of the signer, for the
// relay's origin, on every attempt.
func (m *MailRelay) owner(c call) call {
	c.auth, c.signer = authRequired, m.signer
	return c
}

// String names the relay.
func (m *MailRelay) String() string { return fmt.Sprintf("mail relay %s", m.svc.origin) }
