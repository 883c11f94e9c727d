// Package mail is the Agent Mail part of the connector (agent-mail/1.0):
// the agent's mailboxes (cards signed and published to relays, their keys
// sealed at rest), letters sealed to other agents' pinned cards and
// delivered with byte-identical retries, and the sync that opens what the
// relays hold into letters and inbox items. It speaks the rules of
// host/proto/mail, as the reference SDK 0.12.6 connector does
// (local_connector/mail_tools.rs), with six tools:
// agent_protocols_mail_mailboxes_list, …_mail_mailbox_publish,
// …_mail_send, …_mail_sync, …_mail_list and …_mail_resolve.
//
//   - module.go: the Module, its relay clients, its grants and discovery;
//   - keys.go: mailbox secrets sealed with a key derived from the agent's;
//   - publish.go: cards: signing, publication, pending routes;
//   - cards.go: other mailboxes' cards: reads and pins;
//   - send.go: letters out: sealing, delivery, the queue;
//   - sync.go: letters in, the queue retried, pending routes republished;
//   - list.go: the local views (mailboxes, letters) and mail_list;
//   - resolve.go: mail_resolve;
//   - views.go, io.go, tools.go: what the tools return and take.
//
// Letters are untrusted content: nothing acts on them, no plugin sees
// them, no reply is ever sent automatically.
package mail

import (
	"context"
	_ "embed"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	proto "apconnect/host/proto/mail"
)

// Protocol is the protocol this module speaks.
const Protocol = proto.Protocol

// Outbox kinds of the module's signed writes.
const (
	// OutboxMailCard is a signed card on its way to its routes.
	OutboxMailCard = "mail_card"
	// OutboxMailPacket is a sealed letter on its way to its recipient.
	OutboxMailPacket = "mail_packet"
)

// SessionID identifies the MCP session a call comes from.
type SessionID = engine.SessionID

// ProfileLookup returns the verified profile document of an Agent ID from a
// profile service (the connector gives the Profile module's); mail_resolve
// reads its agent-mail service endpoints.
type ProfileLookup func(ctx context.Context, service, agentID string) (map[string]any, error)

// Options configure the module.
type Options struct {
	// Profiles reads profiles for mail_resolve's profile_service (nil:
	// profile_service is refused).
	Profiles ProfileLookup
}

// Module is the Agent Mail part of the connector. Its mail operations
// (publication, delivery, sync) run one at a time in this process; the
// store's transactions keep other processes of the same Agent ID
// consistent with it.
type Module struct {
	*engine.Engine
	opts Options

	// mu serializes publications, deliveries and syncs.
	mu sync.Mutex

	relayMu sync.Mutex
	relays  map[string]*client.MailRelay // by origin

	sealOnce sync.Once
	sealer   *sealer
	sealErr  error
}

// New builds the module on e and registers the submitters of its outbox
// kinds. It does no network I/O.
func New(e *engine.Engine, opts Options) *Module {
	m := &Module{Engine: e, opts: opts, relays: map[string]*client.MailRelay{}}
	e.RegisterSubmitter(OutboxMailCard, capability.MailWrite, cardResubmitter{m})
	e.RegisterSubmitter(OutboxMailPacket, capability.MailWrite, packetResubmitter{m})
	return m
}

// Name is the module's name.
func (m *Module) Name() string { return "mail" }

// Protocol is agent-mail/1.0.
func (m *Module) Protocol() string { return Protocol }

// relay returns the client of a configured relay origin. Every request it
// makes needs a context that Need granted for that origin (discovery
// excepted).
func (m *Module) relay(origin string) (*client.MailRelay, error) {
	norm, err := m.Configured(origin)
	if err != nil {
		return nil, err
	}
	m.relayMu.Lock()
	defer m.relayMu.Unlock()
	if r, ok := m.relays[norm]; ok {
		return r, nil
	}
	hc, err := m.HTTPClient(norm)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	r, err := client.NewMailRelay(norm, hc, m.Signer(), m.ClientOptions())
	if err != nil {
		return nil, engine.Wrap(err)
	}
	m.relays[norm] = r
	return r, nil
}

// granted returns the relay of origin with a context carrying c there, or
// the gate's refusal (host_not_allowed, permission_denied).
func (m *Module) granted(ctx context.Context, origin string, c capability.Capability) (context.Context, *client.MailRelay, error) {
	gctx, err := m.Need(ctx, origin, c)
	if err != nil {
		return ctx, nil, err
	}
	r, err := m.relay(origin)
	if err != nil {
		return ctx, nil, err
	}
	return gctx, r, nil
}

// allows reports whether origin is configured and granted c.
func (m *Module) allows(origin string, c capability.Capability) bool {
	return m.Allow(origin, c) == nil
}

// anyAllows reports whether one of origins is granted c.
func (m *Module) anyAllows(origins []string, c capability.Capability) bool {
	return slices.ContainsFunc(origins, func(o string) bool { return m.allows(o, c) })
}

// firstRefusal is the refusal of the first of origins not granted c (nil
// when one is granted, or origins is empty).
func (m *Module) firstRefusal(origins []string, c capability.Capability) error {
	if len(origins) == 0 || m.anyAllows(origins, c) {
		return nil
	}
	return m.Allow(origins[0], c)
}

// readable refuses the local Mail reads when no configured origin grants
// mail.read: the letters and mailboxes came from relays the operator no
// longer lets the agent read (permission_denied naming the first
// configured origin).
func (m *Module) readable() error {
	origins := m.Origins()
	if len(origins) == 0 {
		return engine.Errorf(engine.CodeHostNotAllowed, "no origin is configured")
	}
	return m.firstRefusal(origins, capability.MailRead)
}

// Discover reads the relay discovery document of a configured origin (nil
// when it has none). Reading discovery needs no grant.
func (m *Module) Discover(ctx context.Context, origin string) (map[string]any, error) {
	r, err := m.relay(origin)
	if err != nil {
		return nil, err
	}
	d, err := r.Discovery(ctx)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
		return nil, nil
	}
	return d, err
}

//go:embed instructions.md
var instructions string

// Instructions is the module's part of the server instructions.
func (m *Module) Instructions() string { return strings.TrimSpace(instructions) }
