package mail

import (
	"encoding/json"
	"errors"
	"fmt"
)

// RouteError is one route's failure in a result: the relay, the code and
// message of what it (or the check of its answer) said, and the mailbox or
// packet concerned.
type RouteError struct {
	Route     string `json:"route"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	MailboxID string `json:"mailbox_id,omitempty"`
	PacketID  string `json:"packet_id,omitempty"`
	// err is the failure itself (a *client.Error from the relay, say),
	// kept for SyncResult.Err.
	err error
}

// MailboxView is one of the agent's mailboxes as the tools show it: its
// latest card, its state and what is pending.
type MailboxView struct {
	MailboxID      string   `json:"mailbox_id"`
	Address        string   `json:"address"`
	Routes         []string `json:"routes"`
	CardHash       string   `json:"card_hash"`
	CreatedAt      int64    `json:"created_at"`
	ExpiresAt      int64    `json:"expires_at"`
	ReceiveUntil   int64    `json:"receive_until"`
	MaxPacketBytes int64    `json:"max_packet_bytes"`
	Status         string   `json:"status"`
	UnreadCount    int      `json:"unread_count"`
	KeyAvailable   bool     `json:"key_available"`
	PendingRoutes  []string `json:"pending_routes"`
}

// PartView is one part of a letter: its media type, name and size, its
// text (text/*), and with include_data the base64url data of other parts.
type PartView struct {
	MediaType string  `json:"media_type"`
	Name      string  `json:"name,omitempty"`
	Size      int     `json:"size"`
	Text      *string `json:"text,omitempty"`
	Data      string  `json:"data,omitempty"`
}

// DeliveryView is a sent letter's delivery state.
type DeliveryView struct {
	Status     string      `json:"status"`
	Route      string      `json:"route,omitempty"`
	PacketID   string      `json:"packet_id,omitempty"`
	AcceptedAt int64       `json:"accepted_at,omitempty"`
	LastError  *RouteError `json:"last_error,omitempty"`
}

// MessageView is a stored letter as the tools show it. Everything in it but
// the direction and the times was written by its sender: untrusted.
type MessageView struct {
	Direction    string        `json:"direction"`
	MessageID    string        `json:"message_id"`
	ThreadID     string        `json:"thread_id"`
	From         string        `json:"from"`
	To           string        `json:"to"`
	MailboxID    string        `json:"mailbox_id"`
	Subject      *string       `json:"subject,omitempty"`
	CreatedAt    int64         `json:"created_at"`
	ExpiresAt    int64         `json:"expires_at"`
	ReceivedAt   int64         `json:"received_at,omitempty"`
	InReplyTo    string        `json:"in_reply_to,omitempty"`
	ReplyAddress string        `json:"reply_address,omitempty"`
	Parts        []PartView    `json:"parts"`
	Read         *bool         `json:"read,omitempty"`
	Delivery     *DeliveryView `json:"delivery,omitempty"`
}

// MailboxesListInput is the input of agent_protocols_mail_mailboxes_list.
type MailboxesListInput struct {
	Host   string `json:"host,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// MailboxesListResult is its result.
type MailboxesListResult struct {
	Mailboxes  []MailboxView `json:"mailboxes"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// MailboxPublishInput is the input of agent_protocols_mail_mailbox_publish.
type MailboxPublishInput struct {
	MailboxID      string   `json:"mailbox_id,omitempty"`
	Routes         []string `json:"routes"`
	ExpiresAt      *int64   `json:"expires_at,omitempty"`
	ReceiveUntil   *int64   `json:"receive_until,omitempty"`
	MaxPacketBytes *int64   `json:"max_packet_bytes,omitempty"`
	RotateKey      bool     `json:"rotate_key,omitempty"`
}

// MailboxPublishResult is its result: the mailbox's view, the routes that
// accepted (or already held) the card and those that did not.
type MailboxPublishResult struct {
	Mailbox   MailboxView  `json:"mailbox"`
	Published []string     `json:"published"`
	Failed    []RouteError `json:"failed"`
}

// PartInput is one part of a letter to send.
type PartInput struct {
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	Name      string `json:"name,omitempty"`
}

// SendInput is the input of agent_protocols_mail_send.
type SendInput struct {
	To             string      `json:"to,omitempty"`
	InReplyTo      string      `json:"in_reply_to,omitempty"`
	Subject        *string     `json:"subject,omitempty"`
	Text           *string     `json:"text,omitempty"`
	Parts          []PartInput `json:"parts,omitempty"`
	ExpiresAt      *int64      `json:"expires_at,omitempty"`
	ReplyMailboxID string      `json:"reply_mailbox_id,omitempty"`
}

// SendResult is its result: delivered, or queued for byte-identical
// retries, and the letter.
type SendResult struct {
	Status  string      `json:"status"`
	Message MessageView `json:"message"`
}

// SyncInput is the input of agent_protocols_mail_sync.
type SyncInput struct {
	MailboxID *string `json:"mailbox_id,omitempty"`
}

// SyncResult is its result.
type SyncResult struct {
	Received          []MessageView `json:"received"`
	Delivered         []string      `json:"delivered"`
	Expired           []string      `json:"expired"`
	Queued            int           `json:"queued"`
	Errors            []RouteError  `json:"errors"`
	PendingInboxCount int64         `json:"pending_inbox_count"`
	SyncedAt          int64         `json:"synced_at"`
}

// Err returns the sync's route failures as one error, nil when there were
// none; each unwraps to its cause, so a background sync (host/wake) backs
// off when a relay answered 429 or 5xx.
func (r *SyncResult) Err() error {
	var errs []error
	for _, e := range r.Errors {
		if e.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Route, e.err))
		}
	}
	return errors.Join(errs...)
}

// ListInput is the input of agent_protocols_mail_list.
type ListInput struct {
	Direction   string  `json:"direction,omitempty"`
	MailboxID   *string `json:"mailbox_id,omitempty"`
	From        *string `json:"from,omitempty"`
	ThreadID    *string `json:"thread_id,omitempty"`
	MessageID   *string `json:"message_id,omitempty"`
	UnreadOnly  bool    `json:"unread_only,omitempty"`
	MarkRead    bool    `json:"mark_read,omitempty"`
	IncludeData bool    `json:"include_data,omitempty"`
	Limit       int     `json:"limit,omitempty"`
	Cursor      string  `json:"cursor,omitempty"`
}

// ListResult is its result.
type ListResult struct {
	Messages    []MessageView `json:"messages"`
	UnreadCount int           `json:"unread_count"`
	NextCursor  string        `json:"next_cursor,omitempty"`
}

// ResolveInput is the input of agent_protocols_mail_resolve.
type ResolveInput struct {
	AgentID        string `json:"agent_id"`
	Address        string `json:"address,omitempty"`
	CardURL        string `json:"card_url,omitempty"`
	ProfileService string `json:"profile_service,omitempty"`
}

// ResolvedMailbox is one pinned card mail_resolve found.
type ResolvedMailbox struct {
	Address string          `json:"address"`
	Card    json.RawMessage `json:"card"`
	Usable  bool            `json:"usable"`
}

// ResolveResult is its result.
type ResolveResult struct {
	AgentID   string            `json:"agent_id"`
	Mailboxes []ResolvedMailbox `json:"mailboxes"`
	Errors    []map[string]any  `json:"errors"`
}
