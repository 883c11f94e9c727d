package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"apconnect/host/capability"
	"apconnect/host/connector/mail"
	"apconnect/host/engine"
)

// The Agent Mail resources (issue 21): the agent's mailboxes and its
// letters' metadata, from local state only (never a letter's content: read
// letters with agent_protocols_mail_list). They need what the Mail tools
// need: mail.read, on the relays they came from; a reader without it on any
// configured origin is refused with permission_denied. Their updated
// notifications come from the watcher (notify.go) like every resource's.

const (
	uriMailboxes = uriPrefix + "mail/mailboxes"
	uriLetters   = uriPrefix + "mail/letters"
	// lettersCap bounds the letters resource (the newest are read with
	// agent_protocols_mail_list).
	lettersCap = 1000
)

const (
	resMailboxes resourceKind = "mail-mailboxes"
	resLetters   resourceKind = "mail-letters"
)

func init() {
	resourceDefs = append(resourceDefs,
		resourceDef{uri: uriMailboxes, name: "mail-mailboxes", title: "Mailboxes",
			description: "Your Agent Mail mailboxes: addresses, routes, card times, status, unread letters, whether the key is held and pending routes."},
		resourceDef{uri: uriLetters, name: "mail-letters", title: "Letters",
			description: "Metadata of your stored letters, sent and received (ids, sender, recipient, thread, times, read and delivery state, sizes); never their content (agent_protocols_mail_list reads it)."},
	)
}

// mailURI reports whether uri is a Mail resource, and which.
func mailURI(uri string) (resourceKind, bool) {
	switch uri {
	case uriMailboxes:
		return resMailboxes, true
	case uriLetters:
		return resLetters, true
	}
	return "", false
}

// mailResource builds a Mail resource.
func (s *server) mailResource(ctx context.Context, uri string, kind resourceKind) (any, error) {
	m := s.conn.Mail()
	if err := m.Readable(); err != nil {
		e := engine.AsError(err)
		data, _ := json.Marshal(map[string]any{"uri": uri, "code": e.Code, "capability": capability.MailRead.String(), "origin": e.Data["origin"]})
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Code + ": " + e.Message, Data: data}
	}
	if kind == resMailboxes {
		views, err := m.MailboxViews(ctx)
		if err != nil {
			return nil, err
		}
		return struct {
			Mailboxes []mail.MailboxView `json:"mailboxes"`
		}{views}, nil
	}
	letters, truncated, err := m.LetterMetas(ctx, lettersCap)
	if err != nil {
		return nil, err
	}
	return struct {
		Letters   []mail.LetterMeta `json:"letters"`
		Truncated bool              `json:"truncated,omitempty"`
	}{letters, truncated}, nil
}
