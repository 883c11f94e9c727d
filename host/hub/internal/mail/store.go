package mail

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"apconnect/host/hub/internal/hubhttp"
	rules "apconnect/host/proto/mail"
)

// mailbox is a mailbox row: its current card and what it assigned last.
type mailbox struct {
	card       *rules.Card
	raw        []byte // the card's canonical JSON as stored
	acceptedAt int64
	lastSeq    int64
}

// record is the mailbox's current card record, {envelope, accepted_at}.
func (m *mailbox) record() rules.CardRecord {
	return rules.CardRecord{Card: m.card, AcceptedAt: m.acceptedAt}
}

// loadMailbox returns a mailbox, or nil when the relay does not know it.
// The stored card is checked again as it is read: hub.db is not trusted to
// hold only valid cards.
func loadMailbox(ctx context.Context, q hubhttp.Querier, id string) (*mailbox, error) {
	m := &mailbox{}
	err := q.QueryRowContext(ctx, `SELECT card, accepted_at, last_seq FROM mail_mailboxes WHERE mailbox_id = ?`, id).
		Scan(&m.raw, &m.acceptedAt, &m.lastSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if m.card, err = rules.ParseCard(m.raw); err != nil {
		return nil, fmt.Errorf("mail: stored card of mailbox %s: %w", id, err)
	}
	return m, nil
}

// current returns the mailbox's card, or nil.
func (m *mailbox) current() *rules.Card {
	if m == nil {
		return nil
	}
	return m.card
}

// putCard stores card as its mailbox's current card (a new mailbox, or a
// replacement that keeps the mailbox's seq).
func putCard(ctx context.Context, tx *sql.Tx, card *rules.Card, acceptedAt int64) error {
	raw, err := card.MarshalJSON()
	if err != nil {
		return err
	}
	p := card.Payload()
	_, err = tx.ExecContext(ctx, `INSERT INTO mail_mailboxes (mailbox_id, owner, card_hash, nonce, receive_until, accepted_at, card)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (mailbox_id) DO UPDATE SET card_hash = excluded.card_hash, nonce = excluded.nonce,
			receive_until = excluded.receive_until, accepted_at = excluded.accepted_at, card = excluded.card`,
		p.MailboxID, card.Owner(), card.Hash(), card.Nonce(), p.ReceiveUntil, acceptedAt, raw)
	return err
}

// liveUsage drops the mailbox's expired packets and returns what it holds.
func liveUsage(ctx context.Context, tx *sql.Tx, id string, lastSeq, now int64) (rules.Usage, error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM mail_packets WHERE mailbox_id = ? AND expires_at <= ?`, id, now); err != nil {
		return rules.Usage{}, err
	}
	u := rules.Usage{LastSeq: lastSeq}
	err := tx.QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(size), 0) FROM mail_packets WHERE mailbox_id = ?`, id).Scan(&u.Packets, &u.Bytes)
	return u, err
}

// tombstone returns the first result of a packet the mailbox accepted and
// whose tombstone lives at now, or nil.
func tombstone(ctx context.Context, tx *sql.Tx, id, packetID string, now int64) (*rules.DeliveryResult, error) {
	var acceptedAt int64
	err := tx.QueryRowContext(ctx, `SELECT accepted_at FROM mail_tombstones WHERE mailbox_id = ? AND packet_id = ? AND expires_at > ?`,
		id, packetID, now).Scan(&acceptedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &rules.DeliveryResult{PacketID: packetID, AcceptedAt: acceptedAt}, nil
}

// storePacket stores an accepted packet with seq, its tombstone, and the
// mailbox's new last seq.
func storePacket(ctx context.Context, tx *sql.Tx, id string, p *rules.Packet, seq, acceptedAt int64) error {
	h := p.Header()
	if _, err := tx.ExecContext(ctx, `INSERT INTO mail_packets (mailbox_id, seq, packet_id, accepted_at, expires_at, size, packet)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, id, seq, p.ID(), acceptedAt, h.ExpiresAt, p.Size(), p.Canonical()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mail_tombstones (mailbox_id, packet_id, accepted_at, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (mailbox_id, packet_id) DO UPDATE SET accepted_at = excluded.accepted_at, expires_at = excluded.expires_at`,
		id, p.ID(), acceptedAt, h.ExpiresAt); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE mail_mailboxes SET last_seq = ? WHERE mailbox_id = ?`, seq, id)
	return err
}

// packetPage returns up to limit live packet records of a mailbox with seq
// after after, in seq order, and the cursor of the next page ("" when no
// more follow).
func packetPage(ctx context.Context, q hubhttp.Querier, id string, after int64, limit int, now int64) ([]json.RawMessage, string, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, packet_id, accepted_at, packet FROM mail_packets
		WHERE mailbox_id = ? AND seq > ? AND expires_at > ? ORDER BY seq LIMIT ?`, id, after, now, limit+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []json.RawMessage
	var seqs []int64
	for rows.Next() {
		var seq, acceptedAt int64
		var pid string
		var packet []byte
		if err := rows.Scan(&seq, &pid, &acceptedAt, &packet); err != nil {
			return nil, "", err
		}
		rec, err := json.Marshal(map[string]any{"packet_id": pid, "packet": json.RawMessage(packet), "accepted_at": acceptedAt, "seq": seq})
		if err != nil {
			return nil, "", err
		}
		out = append(out, rec)
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(out) > limit {
		return out[:limit], fmt.Sprint(seqs[limit-1]), nil
	}
	return out, "", nil
}

// mailboxPage returns up to limit current card records of owner's
// mailboxes with an ID after after (byte order), and the next cursor.
func mailboxPage(ctx context.Context, q hubhttp.Querier, owner, after string, limit int) ([]json.RawMessage, string, error) {
	rows, err := q.QueryContext(ctx, `SELECT mailbox_id, card, accepted_at FROM mail_mailboxes
		WHERE owner = ? AND mailbox_id > ? ORDER BY mailbox_id LIMIT ?`, owner, after, limit+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []json.RawMessage
	var ids []string
	for rows.Next() {
		var id string
		var card []byte
		var acceptedAt int64
		if err := rows.Scan(&id, &card, &acceptedAt); err != nil {
			return nil, "", err
		}
		rec, err := json.Marshal(map[string]any{"envelope": json.RawMessage(card), "accepted_at": acceptedAt})
		if err != nil {
			return nil, "", err
		}
		out = append(out, rec)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(out) > limit {
		return out[:limit], ids[limit-1], nil
	}
	return out, "", nil
}

// prune drops expired packets and tombstones, then the mailboxes past their
// card's receive_until that hold neither (rules.MailboxRetained). It
// returns how many rows it removed.
func prune(ctx context.Context, tx *sql.Tx, now int64) (int64, error) {
	var n int64
	for _, q := range []string{
		`DELETE FROM mail_packets WHERE expires_at <= ?`,
		`DELETE FROM mail_tombstones WHERE expires_at <= ?`,
		`DELETE FROM mail_mailboxes WHERE receive_until <= ?
			AND NOT EXISTS (SELECT 1 FROM mail_packets p WHERE p.mailbox_id = mail_mailboxes.mailbox_id)
			AND NOT EXISTS (SELECT 1 FROM mail_tombstones t WHERE t.mailbox_id = mail_mailboxes.mailbox_id)`,
	} {
		res, err := tx.ExecContext(ctx, q, now)
		if err != nil {
			return n, err
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, nil
}
