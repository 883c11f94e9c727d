package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Agent Mail's state: the agent's own mailbox cards and their keys' sealed
// secrets, pending publications, the card pins of other mailboxes, and the
// letters sent and received. The store never sees a mailbox secret in
// clear: host/connector/mail seals it (with a key derived from the agent's
// own) before it is stored, and the store keeps the sealed bytes.

var mailMigrations = []Migration{
	{Version: 1, Name: "agent mail", SQL: mailV1},
}

const mailV1 = `
-- The X25519 secret of each own card's public key, sealed by
-- host/connector/mail: never in clear. Stored in the transaction that signs
-- the first card advertising it, before anything is sent.
CREATE TABLE mail_keys (
	public_key TEXT    PRIMARY KEY,
	mailbox_id TEXT    NOT NULL,
	sealed     BLOB    NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;

-- The agent's own signed mailbox cards, kept until their receive_until
-- (the latest one of a mailbox while any of its cards is).
CREATE TABLE mail_cards (
	card_hash     TEXT    PRIMARY KEY,
	mailbox_id    TEXT    NOT NULL,
	nonce         INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	receive_until INTEGER NOT NULL,
	public_key    TEXT    NOT NULL,
	envelope      BLOB    NOT NULL
) STRICT;
CREATE UNIQUE INDEX mail_cards_nonce ON mail_cards (mailbox_id, nonce);

-- A publication not yet confirmed at every route: the card and the routes
-- left, published again by the next sync.
CREATE TABLE mail_pending (
	mailbox_id TEXT PRIMARY KEY,
	card_hash  TEXT NOT NULL,
	routes     TEXT NOT NULL -- JSON array of origins
) STRICT;

-- The greatest-nonce card seen of another mailbox (closed and expired ones
-- included), so an older card is refused (stale_card).
CREATE TABLE mail_pins (
	owner      TEXT    NOT NULL,
	mailbox_id TEXT    NOT NULL,
	card_hash  TEXT    NOT NULL,
	nonce      INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	envelope   BLOB    NOT NULL,
	PRIMARY KEY (owner, mailbox_id)
) STRICT, WITHOUT ROWID;

-- Letters, kept until they expire. A received letter is stored with its
-- inbox item before its relay copy is deleted; a sent one with its sealed
-- packet (resent byte for byte) in the transaction that signs it.
CREATE TABLE mail_letters (
	id          INTEGER PRIMARY KEY,
	direction   TEXT    NOT NULL, -- received | sent
	sender      TEXT    NOT NULL,
	message_id  TEXT    NOT NULL,
	recipient   TEXT    NOT NULL,
	mailbox_id  TEXT    NOT NULL, -- received: ours; sent: the recipient's
	thread_id   TEXT    NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	received_at INTEGER NOT NULL DEFAULT 0,
	read        INTEGER NOT NULL DEFAULT 0,
	message     BLOB    NOT NULL, -- JCS(message)
	digest      TEXT    NOT NULL, -- base64url(SHA3-256(JCS(message)))
	packet      BLOB,             -- sent: the sealed packet
	card_hash   TEXT    NOT NULL DEFAULT '', -- sent: the card it is sealed to
	outbox      INTEGER NOT NULL DEFAULT 0,  -- sent: the outbox entry of the packet
	delivery    TEXT    NOT NULL DEFAULT '', -- sent: delivered | queued
	route       TEXT    NOT NULL DEFAULT '',
	packet_id   TEXT    NOT NULL DEFAULT '',
	accepted_at INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT    NOT NULL DEFAULT '', -- sent: JSON {route, code, message}
	reported    INTEGER NOT NULL DEFAULT 1,  -- sent: 0 once delivered from the queue until a sync reports it
	UNIQUE (direction, sender, message_id)
) STRICT;
CREATE INDEX mail_letters_queued ON mail_letters (delivery) WHERE delivery = 'queued';
CREATE INDEX mail_letters_expiry ON mail_letters (expires_at);
CREATE INDEX mail_letters_unread ON mail_letters (mailbox_id) WHERE direction = 'received' AND read = 0;
`

// ErrConflictingCard: an own card with the nonce of another card of its
// mailbox.
var ErrConflictingCard = errors.New("store: another card of this mailbox has this nonce")

// MailKey is a mailbox key as stored: its public key and its sealed
// secret.
type MailKey struct {
	PublicKey string
	MailboxID string
	Sealed    []byte
	CreatedAt int64
}

// PutMailKey stores a sealed key; a key already stored is left as it is.
func (t *Tx) PutMailKey(ctx context.Context, k *MailKey) error {
	_, err := t.exec(ctx, `INSERT INTO mail_keys (public_key, mailbox_id, sealed, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (public_key) DO NOTHING`, k.PublicKey, k.MailboxID, k.Sealed, k.CreatedAt)
	return err
}

// MailKey returns the sealed key of a public key, or ErrNotFound.
func (q Q) MailKey(ctx context.Context, publicKey string) (*MailKey, error) {
	k := MailKey{PublicKey: publicKey}
	err := q.queryRow(ctx, `SELECT mailbox_id, sealed, created_at FROM mail_keys WHERE public_key = ?`, publicKey).
		Scan(&k.MailboxID, &k.Sealed, &k.CreatedAt)
	if err != nil {
		return nil, notFound(err)
	}
	return &k, nil
}

// MailKeyPublics lists the public keys whose secret is stored.
func (q Q) MailKeyPublics(ctx context.Context) (map[string]bool, error) {
	rows, err := q.query(ctx, `SELECT public_key FROM mail_keys`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out[k] = true
	}
	return out, rows.Err()
}

// OwnCard is one of the agent's signed mailbox cards.
type OwnCard struct {
	Hash         string
	MailboxID    string
	Nonce        int64
	CreatedAt    int64
	ReceiveUntil int64
	PublicKey    string
	Envelope     []byte
}

// PutOwnCard stores an own card (again: nothing changes); another card of
// its mailbox with its nonce is ErrConflictingCard.
func (t *Tx) PutOwnCard(ctx context.Context, c *OwnCard) error {
	var hash string
	err := t.queryRow(ctx, `SELECT card_hash FROM mail_cards WHERE mailbox_id = ? AND nonce = ?`, c.MailboxID, c.Nonce).Scan(&hash)
	switch {
	case err == nil && hash == c.Hash:
		return nil
	case err == nil:
		return ErrConflictingCard
	case notFound(err) != ErrNotFound:
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO mail_cards (card_hash, mailbox_id, nonce, created_at, receive_until, public_key, envelope)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (card_hash) DO NOTHING`,
		c.Hash, c.MailboxID, c.Nonce, c.CreatedAt, c.ReceiveUntil, c.PublicKey, c.Envelope)
	return err
}

const ownCardColumns = `card_hash, mailbox_id, nonce, created_at, receive_until, public_key, envelope`

func scanOwnCards(rows rowsScanner) ([]*OwnCard, error) {
	defer rows.Close()
	var out []*OwnCard
	for rows.Next() {
		var c OwnCard
		if err := rows.Scan(&c.Hash, &c.MailboxID, &c.Nonce, &c.CreatedAt, &c.ReceiveUntil, &c.PublicKey, &c.Envelope); err != nil {
			return nil, err
		}
		out = append(out, &c)
	}
	return out, rows.Err()
}

// rowsScanner is what *sql.Rows offers the scanners.
type rowsScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// OwnCards returns the retained own cards, by mailbox ID and then nonce;
// of one mailbox only when mailboxID is not "".
func (q Q) OwnCards(ctx context.Context, mailboxID string) ([]*OwnCard, error) {
	rows, err := q.query(ctx, `SELECT `+ownCardColumns+` FROM mail_cards WHERE ? = '' OR mailbox_id = ? ORDER BY mailbox_id, nonce`,
		mailboxID, mailboxID)
	if err != nil {
		return nil, err
	}
	return scanOwnCards(rows)
}

// OwnCard returns an own card by hash, or ErrNotFound.
func (q Q) OwnCard(ctx context.Context, hash string) (*OwnCard, error) {
	rows, err := q.query(ctx, `SELECT `+ownCardColumns+` FROM mail_cards WHERE card_hash = ?`, hash)
	if err != nil {
		return nil, err
	}
	cards, err := scanOwnCards(rows)
	if err != nil {
		return nil, err
	}
	if len(cards) == 0 {
		return nil, ErrNotFound
	}
	return cards[0], nil
}

// PendingPublication is a publication not yet confirmed at every route.
type PendingPublication struct {
	MailboxID string
	CardHash  string
	Routes    []string
}

// SetPending records the routes a mailbox's card is still to be published
// to; no routes clears it.
func (t *Tx) SetPending(ctx context.Context, p *PendingPublication) error {
	if len(p.Routes) == 0 {
		_, err := t.exec(ctx, `DELETE FROM mail_pending WHERE mailbox_id = ?`, p.MailboxID)
		return err
	}
	routes, err := json.Marshal(p.Routes)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO mail_pending (mailbox_id, card_hash, routes) VALUES (?, ?, ?)
		ON CONFLICT (mailbox_id) DO UPDATE SET card_hash = excluded.card_hash, routes = excluded.routes`,
		p.MailboxID, p.CardHash, string(routes))
	return err
}

// Pending returns the pending publications by mailbox ID.
func (q Q) Pending(ctx context.Context) (map[string]*PendingPublication, error) {
	rows, err := q.query(ctx, `SELECT mailbox_id, card_hash, routes FROM mail_pending ORDER BY mailbox_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*PendingPublication{}
	for rows.Next() {
		var p PendingPublication
		var routes string
		if err := rows.Scan(&p.MailboxID, &p.CardHash, &routes); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(routes), &p.Routes); err != nil {
			return nil, err
		}
		out[p.MailboxID] = &p
	}
	return out, rows.Err()
}

// MailPin is the card pinned for another mailbox: the greatest nonce seen.
type MailPin struct {
	Owner     string
	MailboxID string
	CardHash  string
	Nonce     int64
	CreatedAt int64
	Envelope  []byte
}

// MailPin returns the pin of (owner, mailboxID), or ErrNotFound.
func (q Q) MailPin(ctx context.Context, owner, mailboxID string) (*MailPin, error) {
	p := MailPin{Owner: owner, MailboxID: mailboxID}
	err := q.queryRow(ctx, `SELECT card_hash, nonce, created_at, envelope FROM mail_pins WHERE owner = ? AND mailbox_id = ?`, owner, mailboxID).
		Scan(&p.CardHash, &p.Nonce, &p.CreatedAt, &p.Envelope)
	if err != nil {
		return nil, notFound(err)
	}
	return &p, nil
}

// PutMailPin replaces the pin of its (owner, mailbox). The caller decided
// it (host/proto/mail DecidePin) inside the same transaction.
func (t *Tx) PutMailPin(ctx context.Context, p *MailPin) error {
	_, err := t.exec(ctx, `INSERT INTO mail_pins (owner, mailbox_id, card_hash, nonce, created_at, envelope) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner, mailbox_id) DO UPDATE SET card_hash = excluded.card_hash, nonce = excluded.nonce,
			created_at = excluded.created_at, envelope = excluded.envelope`,
		p.Owner, p.MailboxID, p.CardHash, p.Nonce, p.CreatedAt, p.Envelope)
	return err
}

// Letter directions.
const (
	LetterReceived = "received"
	LetterSent     = "sent"
)

// Delivery states of a sent letter.
const (
	DeliveryDelivered = "delivered"
	DeliveryQueued    = "queued"
)

// Letter is a stored letter, received or sent.
type Letter struct {
	ID         int64
	Direction  string
	Sender     string
	MessageID  string
	Recipient  string
	MailboxID  string
	ThreadID   string
	CreatedAt  int64
	ExpiresAt  int64
	ReceivedAt int64
	Read       bool
	Message    []byte
	Digest     string
	// Sent letters only.
	Packet     []byte
	CardHash   string
	Outbox     int64
	Delivery   string
	Route      string
	PacketID   string
	AcceptedAt int64
	LastError  []byte
	Reported   bool
}

const letterColumns = `id, direction, sender, message_id, recipient, mailbox_id, thread_id, created_at, expires_at, received_at, read,
	message, digest, packet, card_hash, outbox, delivery, route, packet_id, accepted_at, last_error, reported`

func scanLetters(rows rowsScanner) ([]*Letter, error) {
	defer rows.Close()
	var out []*Letter
	for rows.Next() {
		var l Letter
		var read, reported int64
		var lastErr string
		if err := rows.Scan(&l.ID, &l.Direction, &l.Sender, &l.MessageID, &l.Recipient, &l.MailboxID, &l.ThreadID, &l.CreatedAt,
			&l.ExpiresAt, &l.ReceivedAt, &read, &l.Message, &l.Digest, &l.Packet, &l.CardHash, &l.Outbox, &l.Delivery, &l.Route,
			&l.PacketID, &l.AcceptedAt, &lastErr, &reported); err != nil {
			return nil, err
		}
		l.Read, l.Reported = read != 0, reported != 0
		if lastErr != "" {
			l.LastError = []byte(lastErr)
		}
		out = append(out, &l)
	}
	return out, rows.Err()
}

// InsertLetter stores a letter and returns its id. A letter already stored
// for (direction, sender, message_id) is ErrLetterExists.
func (t *Tx) InsertLetter(ctx context.Context, l *Letter) (int64, error) {
	var id int64
	err := t.queryRow(ctx, `INSERT INTO mail_letters (direction, sender, message_id, recipient, mailbox_id, thread_id, created_at, expires_at,
		received_at, read, message, digest, packet, card_hash, outbox, delivery, route, packet_id, accepted_at, last_error, reported)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (direction, sender, message_id) DO NOTHING RETURNING id`,
		l.Direction, l.Sender, l.MessageID, l.Recipient, l.MailboxID, l.ThreadID, l.CreatedAt, l.ExpiresAt, l.ReceivedAt,
		boolInt(l.Read), l.Message, l.Digest, l.Packet, l.CardHash, l.Outbox, l.Delivery, l.Route, l.PacketID, l.AcceptedAt,
		string(l.LastError), boolInt(l.Reported)).Scan(&id)
	if notFound(err) == ErrNotFound {
		return 0, ErrLetterExists
	}
	return id, err
}

// ErrLetterExists: a letter with this (direction, sender, message_id) is
// stored already.
var ErrLetterExists = errors.New("store: this letter is stored already")

// FindLetter returns the letter of (direction, sender, messageID), or
// ErrNotFound.
func (q Q) FindLetter(ctx context.Context, direction, sender, messageID string) (*Letter, error) {
	rows, err := q.query(ctx, `SELECT `+letterColumns+` FROM mail_letters WHERE direction = ? AND sender = ? AND message_id = ?`,
		direction, sender, messageID)
	if err != nil {
		return nil, err
	}
	ls, err := scanLetters(rows)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, ErrNotFound
	}
	return ls[0], nil
}

// LetterByID returns a letter by its id, or ErrNotFound.
func (q Q) LetterByID(ctx context.Context, id int64) (*Letter, error) {
	rows, err := q.query(ctx, `SELECT `+letterColumns+` FROM mail_letters WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	ls, err := scanLetters(rows)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, ErrNotFound
	}
	return ls[0], nil
}

// LetterQuery selects letters; empty fields select everything.
type LetterQuery struct {
	Direction  string
	MailboxID  *string
	Sender     *string
	ThreadID   *string
	MessageID  *string
	UnreadOnly bool
	// Offset and Limit page the selection (Limit 0: every letter).
	Offset, Limit int
}

// Letters returns the selected letters in the order they were stored, and
// how many the selection holds in all.
func (q Q) Letters(ctx context.Context, lq LetterQuery) ([]*Letter, int, error) {
	where, args := []string{"1 = 1"}, []any{}
	add := func(cond string, v any) { where, args = append(where, cond), append(args, v) }
	if lq.Direction != "" {
		add("direction = ?", lq.Direction)
	}
	for col, v := range map[string]*string{"mailbox_id": lq.MailboxID, "sender": lq.Sender, "thread_id": lq.ThreadID, "message_id": lq.MessageID} {
		if v != nil {
			add(col+" = ?", *v)
		}
	}
	if lq.UnreadOnly {
		where = append(where, "direction = 'received' AND read = 0")
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := q.queryRow(ctx, `SELECT count(*) FROM mail_letters WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	limit := lq.Limit
	if limit <= 0 {
		limit = -1
	}
	rows, err := q.query(ctx, `SELECT `+letterColumns+` FROM mail_letters WHERE `+cond+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, limit, lq.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	ls, err := scanLetters(rows)
	return ls, total, err
}

// QueuedLetters returns the sent letters waiting to be delivered, oldest
// first.
func (q Q) QueuedLetters(ctx context.Context) ([]*Letter, error) {
	rows, err := q.query(ctx, `SELECT `+letterColumns+` FROM mail_letters WHERE delivery = 'queued' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return scanLetters(rows)
}

// UnreportedDeliveries returns the message IDs of sent letters delivered
// from the queue since the last sync reported them, and marks them
// reported.
func (t *Tx) UnreportedDeliveries(ctx context.Context) ([]string, error) {
	rows, err := t.query(ctx, `UPDATE mail_letters SET reported = 1 WHERE direction = 'sent' AND reported = 0 RETURNING id, message_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type row struct {
		id  int64
		mid string
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.mid); err != nil {
			return nil, err
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// RETURNING gives no order: report in the order the letters were sent.
	for i := 1; i < len(got); i++ {
		for j := i; j > 0 && got[j].id < got[j-1].id; j-- {
			got[j], got[j-1] = got[j-1], got[j]
		}
	}
	out := make([]string, len(got))
	for i, r := range got {
		out[i] = r.mid
	}
	return out, nil
}

// Delivery is what became of a sent letter's delivery attempt.
type Delivery struct {
	State      string // DeliveryDelivered or DeliveryQueued
	Route      string
	PacketID   string
	AcceptedAt int64
	LastError  []byte
	// Reported is false for a queued letter delivered outside a sync: the
	// next sync lists it as delivered.
	Reported bool
}

// SetDelivery records a sent letter's delivery state.
func (t *Tx) SetDelivery(ctx context.Context, id int64, d *Delivery) error {
	_, err := t.exec(ctx, `UPDATE mail_letters SET delivery = ?, route = ?, packet_id = ?, accepted_at = ?, last_error = ?, reported = ?
		WHERE id = ?`, d.State, d.Route, d.PacketID, d.AcceptedAt, string(d.LastError), boolInt(d.Reported), id)
	return err
}

// ResealLetter replaces a sent letter's packet (sealed again to a newer
// card, with a new nonce and outbox entry).
func (t *Tx) ResealLetter(ctx context.Context, id int64, packet []byte, cardHash string, outbox int64) error {
	_, err := t.exec(ctx, `UPDATE mail_letters SET packet = ?, card_hash = ?, outbox = ? WHERE id = ?`, packet, cardHash, outbox, id)
	return err
}

// MarkLettersRead marks received letters read.
func (t *Tx) MarkLettersRead(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		if _, err := t.exec(ctx, `UPDATE mail_letters SET read = 1 WHERE id = ? AND direction = 'received'`, id); err != nil {
			return err
		}
	}
	return nil
}

// UnreadLetters counts the unread received letters, of one mailbox when
// mailboxID is not "", and of every mailbox by ID.
func (q Q) UnreadLetters(ctx context.Context) (map[string]int, int, error) {
	rows, err := q.query(ctx, `SELECT mailbox_id, count(*) FROM mail_letters WHERE direction = 'received' AND read = 0 GROUP BY mailbox_id`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, total := map[string]int{}, 0
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, 0, err
		}
		out[id] = n
		total += n
	}
	return out, total, rows.Err()
}

// PruneMail drops what Agent Mail no longer keeps at now, as the SDK
// connector prunes: own cards past their receive_until (the latest card of
// a mailbox stays while any of its cards is live), the pending
// publications of mailboxes without cards, the keys no retained card
// advertises, pins older than pinLifetime, and letters past their
// expires_at. It returns how many keys it deleted.
func (t *Tx) PruneMail(ctx context.Context, now, pinLifetime int64) (int64, error) {
	if _, err := t.exec(ctx, `DELETE FROM mail_cards AS c WHERE c.receive_until <= ?
		AND NOT (EXISTS (SELECT 1 FROM mail_cards l WHERE l.mailbox_id = c.mailbox_id AND l.receive_until > ?)
			AND c.nonce = (SELECT max(m.nonce) FROM mail_cards m WHERE m.mailbox_id = c.mailbox_id))`, now, now); err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, `DELETE FROM mail_pending WHERE mailbox_id NOT IN (SELECT mailbox_id FROM mail_cards)`); err != nil {
		return 0, err
	}
	keys, err := t.execN(ctx, `DELETE FROM mail_keys WHERE public_key NOT IN (SELECT public_key FROM mail_cards)`)
	if err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, `DELETE FROM mail_pins WHERE created_at + ? <= ?`, pinLifetime, now); err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, `DELETE FROM mail_letters WHERE expires_at <= ?`, now); err != nil {
		return 0, err
	}
	return keys, nil
}

// DeleteLetter deletes a stored letter.
func (t *Tx) DeleteLetter(ctx context.Context, id int64) error {
	_, err := t.exec(ctx, `DELETE FROM mail_letters WHERE id = ?`, id)
	return err
}

// LetterByOutbox returns the sent letter whose current packet is the
// outbox entry id, or ErrNotFound.
func (q Q) LetterByOutbox(ctx context.Context, outbox int64) (*Letter, error) {
	rows, err := q.query(ctx, `SELECT `+letterColumns+` FROM mail_letters WHERE direction = 'sent' AND outbox = ?`, outbox)
	if err != nil {
		return nil, err
	}
	ls, err := scanLetters(rows)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, ErrNotFound
	}
	return ls[0], nil
}

// MailPinsOf returns the pins of an owner's mailboxes, by mailbox ID.
func (q Q) MailPinsOf(ctx context.Context, owner string) ([]*MailPin, error) {
	rows, err := q.query(ctx, `SELECT mailbox_id, card_hash, nonce, created_at, envelope FROM mail_pins WHERE owner = ? ORDER BY mailbox_id`, owner)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*MailPin
	for rows.Next() {
		p := MailPin{Owner: owner}
		if err := rows.Scan(&p.MailboxID, &p.CardHash, &p.Nonce, &p.CreatedAt, &p.Envelope); err != nil {
			return nil, err
		}
		out = append(out, &p)
	}
	return out, rows.Err()
}
