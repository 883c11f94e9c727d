package discourse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Redaction reports what Redact did.
type Redaction struct {
	RoomID  string `json:"room_id"`  // the room
	Seq     int64  `json:"seq"`      // the redacted record
	Type    string `json:"type"`     // the redacted event's type
	EventID string `json:"event_id"` // the redacted envelope's event ID, still valid for references
	// AlreadyRedacted is true when the record had been redacted before
	// (Redact is idempotent).
	AlreadyRedacted bool `json:"already_redacted"`
}

// Redact replaces the envelope of a stored record with its redacted
// envelope {hash, redacted: true, type} (ADP 14.1), in the record every read,
// archive and exact resubmission serves and in the hub's accepted-envelope
// history, then compacts the database (hubdb.DB.Compact) so the content does
// not linger in the database files. Only message.create and
// custom-type records may be redacted; every other built-in determines room
// state. The record hash commits to the event ID, not the content, so the
// chain still verifies. It works on a stopped hub's data directory or
// beside a running hub (SQLite serializes the writers); a running hub keeps
// serving the redacted form, since it reads records from the database.
func Redact(ctx context.Context, db *hubdb.DB, roomID string, seq int64) (*Redaction, error) {
	var out *Redaction
	err := db.Write(ctx, func(tx *sql.Tx) error {
		var raw []byte
		err := tx.QueryRowContext(ctx, `SELECT record FROM adp_records WHERE room_id = ? AND seq = ?`, roomID, seq).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("room %s has no record at seq %d", roomID, seq)
		}
		if err != nil {
			return err
		}
		rec, err := adp.ParseRecord(raw)
		if err != nil {
			return fmt.Errorf("stored record %s/%d: %w", roomID, seq, err)
		}
		out = &Redaction{RoomID: roomID, Seq: seq, Type: rec.Type(), EventID: rec.EnvelopeHash(), AlreadyRedacted: rec.IsRedacted()}
		if rec.IsRedacted() {
			return nil
		}
		if !adp.Redactable(rec.Type()) {
			return fmt.Errorf("%s records determine room state and cannot be redacted (ADP 14.1); only message.create and custom types can", rec.Type())
		}
		red, err := rec.Redact()
		if err != nil {
			return err
		}
		b, err := red.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE adp_records SET record = ?, redacted = 1 WHERE room_id = ? AND seq = ?`, b, roomID, seq); err != nil {
			return err
		}
		eb, err := identity.Canonicalize(red.Value()["envelope"])
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE accepted_envelopes SET envelope = ? WHERE hash = ?`, eb, rec.EnvelopeHash())
		return err
	})
	if err != nil {
		return nil, err
	}
	if !out.AlreadyRedacted {
		if err := db.Compact(ctx); err != nil {
			return out, fmt.Errorf("redacted, but the database could not be compacted (old copies may remain on disk until it is): %w", err)
		}
	}
	return out, nil
}
