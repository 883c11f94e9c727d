package store

import (
	"context"
	"strconv"
)

// Draft is a held draft: an unsigned write input waiting for the agent's
// decision. It never holds a signed envelope.
type Draft struct {
	ID        string
	RoomKey   int64
	Host      string
	RoomID    string
	Kind      string // message or event
	CreatedAt int64
	BaseSeq   int64
	BaseHash  string
	Reason    string
	Input     []byte // the original write input (JSON)
	order     int64
}

const draftColumns = `d.rid, d.id, d.room, r.host, r.room_id, d.kind, d.created_at, d.base_seq, d.base_hash, d.reason, d.input`

func scanDraft(s scanner) (*Draft, error) {
	var d Draft
	if err := s.Scan(&d.order, &d.ID, &d.RoomKey, &d.Host, &d.RoomID, &d.Kind, &d.CreatedAt, &d.BaseSeq, &d.BaseHash, &d.Reason, &d.Input); err != nil {
		return nil, notFound(err)
	}
	return &d, nil
}

// Order returns the draft's position in listing order (a cursor value).
func (d *Draft) Order() int64 { return d.order }

// InsertDraft stores a held draft and returns it with its id, which is
// "draft_<room_id>_<n>" with n unique in the database.
func (t *Tx) InsertDraft(ctx context.Context, d *Draft) (*Draft, error) {
	n, err := t.addCounter(ctx, "draft_counter", 1)
	if err != nil {
		return nil, err
	}
	var room string
	if err := t.queryRow(ctx, `SELECT room_id FROM rooms WHERE id = ?`, d.RoomKey).Scan(&room); err != nil {
		return nil, notFound(err)
	}
	id := "draft_" + room + "_" + strconv.FormatInt(n, 10)
	if _, err := t.exec(ctx, `INSERT INTO drafts (id, room, kind, created_at, base_seq, base_hash, reason, input) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		id, d.RoomKey, d.Kind, d.CreatedAt, d.BaseSeq, d.BaseHash, d.Reason, d.Input); err != nil {
		return nil, err
	}
	return t.Draft(ctx, id)
}

// Draft returns a held draft by id, or ErrNotFound.
func (q Q) Draft(ctx context.Context, id string) (*Draft, error) {
	return scanDraft(q.queryRow(ctx, `SELECT `+draftColumns+` FROM drafts d JOIN rooms r ON r.id = d.room WHERE d.id = ?`, id))
}

// Drafts lists held drafts in creation order, of one room when roomKey >
// 0, after the cursor position afterOrder.
func (q Q) Drafts(ctx context.Context, roomKey, afterOrder int64, limit int) ([]*Draft, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	query := `SELECT ` + draftColumns + ` FROM drafts d JOIN rooms r ON r.id = d.room WHERE d.rid > ?`
	args := []any{afterOrder}
	if roomKey > 0 {
		query += ` AND d.room = ?`
		args = append(args, roomKey)
	}
	query += ` ORDER BY d.rid LIMIT ` + strconv.Itoa(limit)
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Draft
	for rows.Next() {
		d, err := scanDraft(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DeleteDraft removes a held draft; it reports whether it existed.
func (t *Tx) DeleteDraft(ctx context.Context, id string) (bool, error) {
	n, err := t.execN(ctx, `DELETE FROM drafts WHERE id = ?`, id)
	return n > 0, err
}

// DraftCount returns the number of held drafts.
func (q Q) DraftCount(ctx context.Context) (int64, error) {
	var n int64
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM drafts`).Scan(&n)
	return n, err
}
