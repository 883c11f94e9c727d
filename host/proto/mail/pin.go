package mail

// Pin is what a sender remembers of the card it pinned for one (owner,
// mailbox): the greatest-nonce card seen, closed and expired cards
// included. A connector keeps it in a table keyed by (Owner, MailboxID),
// with the card's JSON beside it when it needs the card itself.
type Pin struct {
	Owner     string
	MailboxID string
	CardHash  string
	Nonce     int64
	CreatedAt int64
}

// PinOf is the pin of a card.
func PinOf(c *Card) Pin {
	return Pin{Owner: c.Owner(), MailboxID: c.MailboxID(), CardHash: c.Hash(), Nonce: c.Nonce(), CreatedAt: c.CreatedAt()}
}

// PinAction is the outcome of observing a card against its pin.
type PinAction int

const (
	// PinStore: there was no pin, or the card is newer; store PinOf(card)
	// (and the card) in place of the old pin.
	PinStore PinAction = iota + 1
	// PinKeep: the card is the pinned card; nothing changes.
	PinKeep
)

func (a PinAction) String() string {
	switch a {
	case PinStore:
		return "store"
	case PinKeep:
		return "keep"
	}
	return "invalid"
}

// DecidePin decides a verified card read for owner against pinned, the
// stored pin of (owner, card's mailbox) or nil, as the SDK's MailCardCache
// does: now within 0..2^53-1 (invalid_request); the card's owner is owner
// (invalid_actor); created_at <= now + FutureSkew
// (timestamp_out_of_window); then the same hash keeps the pin, a greater
// nonce replaces it, and anything else — an older card, or another card with
// the same nonce — is stale_card. It applies to every card read, closed or
// expired ones included; CheckCardUsable says afterwards whether the pinned
// card takes letters. The caller persists a PinStore before it uses the
// card, even when CheckCardUsable then refuses it.
func DecidePin(pinned *Pin, card *Card, owner string, now int64) (PinAction, error) {
	if err := checkClock(now); err != nil {
		return 0, err
	}
	if card.Owner() != owner {
		return 0, fail(CodeInvalidActor, "/event/actor", "the card's owner %s is not %s", card.Owner(), owner)
	}
	if card.CreatedAt() > now+FutureSkew {
		return 0, fail(CodeTimestampOutOfWindow, "/event/created_at", "the card is future-dated")
	}
	if pinned == nil {
		return PinStore, nil
	}
	if pinned.Owner != owner || pinned.MailboxID != card.MailboxID() {
		return 0, fail(CodeInvalidRequest, "", "the pin is for another mailbox")
	}
	switch {
	case pinned.CardHash == card.Hash():
		return PinKeep, nil
	case card.Nonce() > pinned.Nonce:
		return PinStore, nil
	default:
		return 0, fail(CodeStaleCard, "/event/nonce", "the card (nonce %d) is older than or conflicts with the pinned card (nonce %d)", card.Nonce(), pinned.Nonce)
	}
}

// PinExpired reports whether a pin may be dropped at now: PinLifetime after
// the pinned card's created_at every earlier card of the mailbox has
// expired, so nothing older can be replayed against it.
func PinExpired(p Pin, now int64) bool { return now >= p.CreatedAt+PinLifetime }

// CardCache is an in-memory set of pins with their cards, the SDK's
// MailCardCache: a reference model and a helper for callers that do not
// persist pins. It is not safe for concurrent use.
type CardCache struct {
	pins map[[2]string]*Card
}

// NewCardCache returns an empty cache.
func NewCardCache() *CardCache { return &CardCache{pins: map[[2]string]*Card{}} }

// Observe pins card for owner (DecidePin) and returns the pinned card;
// with requireUsable it then checks CheckCardUsable, after pinning, as the
// SDK does.
func (c *CardCache) Observe(card *Card, owner string, now int64, requireUsable bool) (*Card, error) {
	key := [2]string{owner, card.MailboxID()}
	var pinned *Pin
	if old, ok := c.pins[key]; ok {
		p := PinOf(old)
		pinned = &p
	}
	action, err := DecidePin(pinned, card, owner, now)
	if err != nil {
		return nil, err
	}
	if action == PinStore {
		c.pins[key] = card
	}
	if requireUsable {
		if err := CheckCardUsable(card, owner, now); err != nil {
			return nil, err
		}
	}
	return card, nil
}

// Get returns the card pinned for (owner, mailboxID), or nil.
func (c *CardCache) Get(owner, mailboxID string) *Card { return c.pins[[2]string{owner, mailboxID}] }

// Len is the number of pins.
func (c *CardCache) Len() int { return len(c.pins) }

// Prune drops the pins PinExpired at now.
func (c *CardCache) Prune(now int64) {
	for k, card := range c.pins {
		if PinExpired(PinOf(card), now) {
			delete(c.pins, k)
		}
	}
}
