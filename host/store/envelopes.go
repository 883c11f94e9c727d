package store

import (
	"context"
	"strings"
)

// The envelope index: every event hash (envelope hash) a room's verified
// records carry, with the seq of the record, kept for the room's whole
// verified history while the record window is pruned. A reader refuses a
// record whose envelope an earlier record carried (a host replaying a signed
// envelope, adp.CheckReplayed), however long ago that record left the
// window. It costs one short row per record (room, 43-character hash, seq)
// on disk and nothing in memory: a batch's hashes are looked up with
// EnvelopeSeqs before it is verified.

// envelopeChunk is how many hashes one EnvelopeSeqs query asks for; a
// shorter chunk is padded by repeating its last hash, so there is one
// prepared statement.
const envelopeChunk = 64

var envelopeSeqsSQL = `SELECT hash, seq FROM room_envelopes WHERE room = ? AND hash IN (` + placeholders(envelopeChunk) + `)`

// EnvelopeSeqs returns, for those of ids that a verified record of the room
// carries, the seq of that record.
func (q Q) EnvelopeSeqs(ctx context.Context, key int64, ids []string) (map[string]int64, error) {
	out := map[string]int64{}
	args := make([]any, 1+envelopeChunk)
	args[0] = key
	for start := 0; start < len(ids); start += envelopeChunk {
		chunk := ids[start:min(start+envelopeChunk, len(ids))]
		for i := range envelopeChunk {
			args[1+i] = chunk[min(i, len(chunk)-1)]
		}
		if err := q.envelopeRows(ctx, args, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (q Q) envelopeRows(ctx context.Context, args []any, out map[string]int64) error {
	rows, err := q.query(ctx, envelopeSeqsSQL, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		var seq int64
		if err := rows.Scan(&h, &seq); err != nil {
			return err
		}
		out[h] = seq
	}
	return rows.Err()
}

// indexEnvelopes adds the event hashes of verified records to the envelope
// index (all of them: records a catch-up leaves out of the window too). A
// hash already indexed keeps its first seq. The rows go envelopeChunk to a
// statement, a shorter chunk padded by repeating its last row (a no-op).
func (t *Tx) indexEnvelopes(ctx context.Context, key int64, events []Event) error {
	rows := make([]Event, 0, len(events))
	for _, e := range events {
		if strings.TrimSpace(e.EventID) != "" {
			rows = append(rows, e)
		}
	}
	args := make([]any, 0, 3*envelopeChunk)
	for start := 0; start < len(rows); start += envelopeChunk {
		chunk := rows[start:min(start+envelopeChunk, len(rows))]
		args = args[:0]
		for i := range envelopeChunk {
			e := chunk[min(i, len(chunk)-1)]
			args = append(args, key, e.EventID, e.Seq)
		}
		if _, err := t.exec(ctx, indexEnvelopesSQL, args...); err != nil {
			return err
		}
	}
	return nil
}

var indexEnvelopesSQL = `INSERT INTO room_envelopes (room, hash, seq) VALUES ` +
	strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", envelopeChunk), ", ") + ` ON CONFLICT (room, hash) DO NOTHING`
