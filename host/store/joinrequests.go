package store

import (
	"context"
	"strconv"
)

// JoinRequest is a stored join request resource: the agent's own (Own) or
// one it reviews.
type JoinRequest struct {
	RoomKey   int64
	ID        string // the request's event ID
	Own       bool
	Applicant string
	Role      string
	Status    string // pending, approved, rejected, expired
	ExpiresAt int64
	// Consumed marks an own approved request whose membership the agent
	// already took (a later join starts afresh).
	Consumed  bool
	Resource  []byte // the join request resource JSON
	CreatedAt int64
	UpdatedAt int64
}

const joinColumns = `room, id, own, applicant, role, status, expires_at, consumed, resource, created_at, updated_at`

func scanJoin(s scanner) (*JoinRequest, error) {
	var j JoinRequest
	var own, consumed int64
	if err := s.Scan(&j.RoomKey, &j.ID, &own, &j.Applicant, &j.Role, &j.Status, &j.ExpiresAt, &consumed, &j.Resource, &j.CreatedAt, &j.UpdatedAt); err != nil {
		return nil, notFound(err)
	}
	j.Own, j.Consumed = own != 0, consumed != 0
	return &j, nil
}

// PutJoinRequest inserts or updates a join request (created_at is kept from
// the first insert).
func (t *Tx) PutJoinRequest(ctx context.Context, j *JoinRequest) error {
	_, err := t.exec(ctx, `INSERT INTO join_requests (`+joinColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (room, id) DO UPDATE SET status = excluded.status, expires_at = excluded.expires_at,
		consumed = MAX(consumed, excluded.consumed), resource = excluded.resource, updated_at = excluded.updated_at,
		own = MAX(own, excluded.own)`,
		j.RoomKey, j.ID, boolInt(j.Own), j.Applicant, j.Role, j.Status, j.ExpiresAt, boolInt(j.Consumed), j.Resource, j.CreatedAt, j.UpdatedAt)
	return err
}

// OwnJoinRequest returns the agent's latest own join request in a room that
// is not consumed, or ErrNotFound.
func (q Q) OwnJoinRequest(ctx context.Context, key int64) (*JoinRequest, error) {
	return scanJoin(q.queryRow(ctx, `SELECT `+joinColumns+` FROM join_requests WHERE room = ? AND own = 1 AND consumed = 0
		ORDER BY created_at DESC LIMIT 1`, key))
}

// PendingJoin is an own join request still waiting for review, with its room.
type PendingJoin struct {
	Room      RoomRef
	RequestID string
}

// PendingOwnJoinRequests lists the agent's own join requests that are still
// pending, in every room: the background sync polls them so an approval
// turns into membership (and a room.join.approved item) without the agent
// asking again.
func (q Q) PendingOwnJoinRequests(ctx context.Context) ([]PendingJoin, error) {
	rows, err := q.query(ctx, `SELECT r.id, r.host, r.room_id, j.id FROM join_requests j JOIN rooms r ON r.id = j.room
		WHERE j.own = 1 AND j.consumed = 0 AND j.status = 'pending' ORDER BY j.created_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PendingJoin
	for rows.Next() {
		var p PendingJoin
		if err := rows.Scan(&p.Room.Key, &p.Room.Host, &p.Room.RoomID, &p.RequestID); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// JoinRequest returns a stored join request by room and id.
func (q Q) JoinRequest(ctx context.Context, key int64, id string) (*JoinRequest, error) {
	return scanJoin(q.queryRow(ctx, `SELECT `+joinColumns+` FROM join_requests WHERE room = ? AND id = ?`, key, id))
}

// JoinRequests lists the stored requests of a room that the agent reviews,
// newest first.
func (q Q) JoinRequests(ctx context.Context, key int64, status string, limit int) ([]*JoinRequest, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	query := `SELECT ` + joinColumns + ` FROM join_requests WHERE room = ? AND own = 0`
	args := []any{key}
	if status != "" {
		query += ` AND status = ?`
		args = append(args, status)
	}
	rows, err := q.query(ctx, query+` ORDER BY created_at DESC LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*JoinRequest
	for rows.Next() {
		j, err := scanJoin(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}
