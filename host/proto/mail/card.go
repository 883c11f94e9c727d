package mail

import (
	"crypto/rand"
	"errors"
	"slices"

	"apconnect/host/identity"
)

// CardPayload is the payload of a mailbox.publish event: the mailbox ID, the
// card's expiry, how long the owner keeps the key (receive_until), the
// X25519 public key, zero to eight relay routes (none closes the mailbox)
// and the largest packet the mailbox takes.
type CardPayload struct {
	MailboxID      string   `json:"mailbox_id"`
	ExpiresAt      int64    `json:"expires_at"`
	ReceiveUntil   int64    `json:"receive_until"`
	PublicKey      string   `json:"public_key"`
	Routes         []string `json:"routes"`
	MaxPacketBytes int64    `json:"max_packet_bytes"`
}

// Value returns the payload as a JSON object value.
func (p CardPayload) Value() map[string]any {
	routes := make([]any, len(p.Routes))
	for i, r := range p.Routes {
		routes[i] = r
	}
	return map[string]any{
		"mailbox_id":       p.MailboxID,
		"expires_at":       p.ExpiresAt,
		"receive_until":    p.ReceiveUntil,
		"public_key":       p.PublicKey,
		"routes":           routes,
		"max_packet_bytes": p.MaxPacketBytes,
	}
}

// DefaultCardPayload is the payload of a new card as the SDK connector
// fills it: expires_at = now + DefaultCardTTL, receive_until = expires_at +
// DefaultReceiveWindow, max_packet_bytes = DefaultCardPacketBytes.
func DefaultCardPayload(mailboxID, publicKey string, routes []string, now int64) CardPayload {
	return CardPayload{
		MailboxID:      mailboxID,
		ExpiresAt:      now + DefaultCardTTL,
		ReceiveUntil:   now + DefaultCardTTL + DefaultReceiveWindow,
		PublicKey:      publicKey,
		Routes:         slices.Clone(routes),
		MaxPacketBytes: DefaultCardPacketBytes,
	}
}

// Card is a verified mailbox card: a mailbox.publish envelope whose shape,
// hash, signature and rules have been checked. Only this package makes one
// (ParseCard, CardFromValue, SignCard), so holding a *Card means holding a
// valid card; whether it is usable now is CheckCardUsable's question.
type Card struct {
	env     *identity.Envelope
	payload CardPayload
}

// Envelope returns the signed envelope. Callers must not modify it.
func (c *Card) Envelope() *identity.Envelope { return c.env }

// Payload returns a copy of the card's payload.
func (c *Card) Payload() CardPayload {
	p := c.payload
	p.Routes = slices.Clone(p.Routes)
	return p
}

// Hash is the card hash: the envelope's event hash, which packets name.
func (c *Card) Hash() string { return c.env.Hash }

// Owner is the card's actor, the mailbox owner.
func (c *Card) Owner() string { return c.env.Event.Actor }

// MailboxID is the payload's mailbox_id.
func (c *Card) MailboxID() string { return c.payload.MailboxID }

// CreatedAt is the event's created_at.
func (c *Card) CreatedAt() int64 { return c.env.Event.CreatedAt }

// Nonce is the event's nonce; a newer card of the mailbox has a greater one.
func (c *Card) Nonce() int64 { return c.env.Event.Nonce }

// Routes returns a copy of the card's routes.
func (c *Card) Routes() []string { return slices.Clone(c.payload.Routes) }

// HasRoute reports whether origin is one of the card's routes.
func (c *Card) HasRoute(origin string) bool { return slices.Contains(c.payload.Routes, origin) }

// Value returns the envelope as a JSON object value.
func (c *Card) Value() map[string]any { return c.env.Value() }

// MarshalJSON writes the envelope in canonical form.
func (c *Card) MarshalJSON() ([]byte, error) { return c.env.MarshalJSON() }

// Card statuses, as the SDK connector's mailbox view names them.
const (
	StatusOpen    = "open"
	StatusClosed  = "closed"
	StatusExpired = "expired"
)

// Status is "open" while the card has routes and has not expired,
// "closed" when its routes are empty, and "expired" otherwise.
func (c *Card) Status(now int64) string {
	switch {
	case len(c.payload.Routes) == 0:
		return StatusClosed
	case now >= c.payload.ExpiresAt:
		return StatusExpired
	default:
		return StatusOpen
	}
}

// ParseCard strictly parses a card body (at most MaxPacketBodyBytes, else
// payload_too_large) and checks it with CardFromValue.
func ParseCard(data []byte) (*Card, error) {
	v, err := parseBody(data)
	if err != nil {
		return nil, err
	}
	return CardFromValue(v, "")
}

// CardFromValue checks a strictly parsed card envelope as the SDK's
// validate_card does, in its order: the schema (invalid_event), the event
// hash and signature (invalid_event_hash, invalid_signature), then the
// rules: created_at < expires_at <= created_at + MaxTTL and expires_at <=
// receive_until <= expires_at + MaxTTL (invalid_event); every route a
// serialized HTTPS origin (invalid_url, the code the Python SDK's
// validate_origin raises; the schema's approximate origin pattern has
// refused most bad routes as invalid_event before); the public key usable
// (CheckPublicKey, invalid_event). It is a
// historical check: a closed or expired card is valid. pointer locates the
// card in its document (a message's "/reply_card").
func CardFromValue(v any, pointer string) (*Card, error) {
	if err := ValidateSchema(v, DefCardEnvelope, CodeInvalidEvent, pointer); err != nil {
		return nil, err
	}
	env, err := verifiedEnvelope(v, pointer)
	if err != nil {
		return nil, err
	}
	at := pointer + "/event/payload"
	p, err := cardPayload(env.Event.Payload.(map[string]any), at)
	if err != nil {
		return nil, err
	}
	created := env.Event.CreatedAt
	if p.ExpiresAt <= created || p.ExpiresAt > created+MaxTTL {
		return nil, fail(CodeInvalidEvent, at+"/expires_at", "invalid card lifetime: expires_at must be after created_at and at most 30 days later")
	}
	if p.ReceiveUntil < p.ExpiresAt || p.ReceiveUntil > p.ExpiresAt+MaxTTL {
		return nil, fail(CodeInvalidEvent, at+"/receive_until", "invalid receive_until: from expires_at to 30 days after it")
	}
	for i, r := range p.Routes {
		if !identity.ValidOrigin(r) {
			return nil, fail(CodeInvalidURL, at+"/routes/"+itoa(int64(i)), "route %q is not a serialized HTTPS origin", r)
		}
	}
	if err := CheckPublicKey(p.PublicKey); err != nil {
		return nil, repoint(err, at+"/public_key")
	}
	return &Card{env: env, payload: p}, nil
}

// cardPayload reads a schema-checked payload.
func cardPayload(m map[string]any, at string) (CardPayload, error) {
	p := CardPayload{
		MailboxID: m["mailbox_id"].(string),
		PublicKey: m["public_key"].(string),
		Routes:    []string{},
	}
	var err error
	if p.ExpiresAt, err = intMember(m, "expires_at", at, CodeInvalidEvent); err != nil {
		return p, err
	}
	if p.ReceiveUntil, err = intMember(m, "receive_until", at, CodeInvalidEvent); err != nil {
		return p, err
	}
	if p.MaxPacketBytes, err = intMember(m, "max_packet_bytes", at, CodeInvalidEvent); err != nil {
		return p, err
	}
	for _, r := range m["routes"].([]any) {
		p.Routes = append(p.Routes, r.(string))
	}
	return p, nil
}

// SignCard signs a card for p with the signer's identity and checks the
// result as CardFromValue does, so it never returns a card a peer refuses.
func SignCard(s identity.Signer, p CardPayload, createdAt, nonce int64) (*Card, error) {
	ev := identity.Event{Protocol: Protocol, Type: TypeMailboxPublish, Actor: s.AgentID(),
		CreatedAt: createdAt, Nonce: nonce, Payload: p.Value()}
	env, err := identity.SignEvent(s, ev)
	if err != nil {
		return nil, err
	}
	return CardFromValue(env.Value(), "")
}

// CheckCardUsable checks that a verified card can take new letters for
// owner at now, as the SDK does before encrypting: the actor is owner
// (invalid_actor), created_at <= now + FutureSkew
// (timestamp_out_of_window), routes are not empty (mailbox_unavailable),
// and now < expires_at (stale_card).
func CheckCardUsable(c *Card, owner string, now int64) error {
	if err := checkClock(now); err != nil {
		return err
	}
	if c.Owner() != owner {
		return fail(CodeInvalidActor, "/event/actor", "the card's owner %s is not %s", c.Owner(), owner)
	}
	if c.CreatedAt() > now+FutureSkew {
		return fail(CodeTimestampOutOfWindow, "/event/created_at", "the card is future-dated")
	}
	if len(c.payload.Routes) == 0 {
		return fail(CodeMailboxUnavailable, "/event/payload/routes", "the mailbox is closed")
	}
	if now >= c.payload.ExpiresAt {
		return fail(CodeStaleCard, "/event/payload/expires_at", "the card has expired")
	}
	return nil
}

// NewID returns a fresh random 16-byte ID in base64url: a mailbox, thread
// or message ID.
func NewID() (string, error) {
	var b [IDBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return identity.EncodeBase64URL(b[:]), nil
}

// ValidID reports whether s is a canonical base64url ID of n bytes (16 for
// mailbox, thread and message IDs, 32 for packet IDs and hashes).
func ValidID(s string, n int) bool {
	_, err := identity.DecodeBase64URLLen(s, n)
	return err == nil
}

// verifiedEnvelope reads a schema-checked envelope and verifies its hash and
// signature; error pointers are put under pointer.
func verifiedEnvelope(v any, pointer string) (*identity.Envelope, error) {
	env, err := identity.EnvelopeFromValue(v, pointer)
	if err != nil {
		return nil, err
	}
	// Agent Mail defines no top-level event field beyond the six.
	if err := env.Event.CheckFields(pointer + "/event"); err != nil {
		return nil, err
	}
	if err := env.Verify(); err != nil {
		return nil, repoint(err, pointer)
	}
	return env, nil
}

// repoint returns err with its pointer put under prefix: Verify's pointers
// are relative to the envelope, CheckPublicKey's are empty.
func repoint(err error, prefix string) error {
	var e *identity.Error
	if prefix == "" || !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Pointer = prefix + c.Pointer
	return &c
}

// parseBody strictly parses a request or response body of at most
// MaxPacketBodyBytes.
func parseBody(data []byte) (any, error) {
	if len(data) > MaxPacketBodyBytes {
		return nil, fail(CodePayloadTooLarge, "", "the body is %d bytes, more than %d", len(data), MaxPacketBodyBytes)
	}
	v, err := identity.ParseStrict(data)
	if err != nil {
		var je *identity.JSONError
		if errors.As(err, &je) {
			return nil, &identity.Error{Code: CodeInvalidEvent, Pointer: je.Pointer, Message: je.Reason, Err: err}
		}
		return nil, wrap(err, CodeInvalidEvent, "", "invalid JSON")
	}
	return v, nil
}

func itoa(n int64) string {
	b, _ := identity.AppendCanonicalInt(nil, n)
	return string(b)
}
