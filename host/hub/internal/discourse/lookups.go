package discourse

import (
	"context"
	"database/sql"
	"errors"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/proto/adp"
)

// lookups answer adp.Check's questions about a room from the write
// transaction: record hashes for anchors, event IDs for references, and the
// hub's join request states. A database failure is kept in err (the lookup
// itself answers "not found") and reported instead of the rule's verdict.
type lookups struct {
	ctx  context.Context
	db   *hubdb.DB
	tx   *sql.Tx
	room string
	err  error
}

func (l *lookups) fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

func (l *lookups) options(now int64, roomURL string) adp.CheckOptions {
	return adp.CheckOptions{
		Now:          now,
		Records:      adp.RecordHashFunc(l.recordHash),
		Events:       adp.EventFunc(l.hasEvent),
		JoinRequests: adp.JoinRequestFunc(l.joinRequest),
		RoomURL:      roomURL,
	}
}

func (l *lookups) recordHash(seq int64) (string, bool) {
	var h string
	err := l.db.QueryRow(l.ctx, l.tx, recordHashSQL, l.room, seq).Scan(&h)
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			l.fail(err)
		}
		return "", false
	}
	return h, true
}

func (l *lookups) hasEvent(id string) bool {
	var one int
	err := l.db.QueryRow(l.ctx, l.tx, hasEventSQL, id, l.room).Scan(&one)
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			l.fail(err)
		}
		return false
	}
	return true
}

func (l *lookups) joinRequest(id string) (adp.JoinRequestState, bool) {
	var st adp.JoinRequestState
	var status string
	err := l.db.QueryRow(l.ctx, l.tx, joinRequestSQL, id, l.room).
		Scan(&status, &st.ExpiresAt)
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			l.fail(err)
		}
		return st, false
	}
	st.Status = adp.JoinRequestStatus(status)
	return st, true
}
