package adp

import (
	"strconv"

	"apconnect/host/text"
)

// Link is a chain position: the seq and record hash of one record. The zero
// Link is the position before a room's first record.
type Link struct {
	Seq  int64  `json:"seq"`  // record seq
	Hash string `json:"hash"` // record hash
}

// IsZero reports whether l is the position before the first record.
func (l Link) IsZero() bool { return l.Seq == 0 && l.Hash == "" }

// CheckLink verifies that rec is a valid record of the room (Validate: shape
// and record hash) and directly follows prev: seq is prev.Seq+1 and pre_hash
// is prev.Hash (null when prev is zero). roomID "" accepts any room id.
func CheckLink(roomID string, prev Link, rec *Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	if roomID != "" && rec.RoomID != roomID {
		return newError(CodeChainBroken, "/room_id", "record belongs to room %q, not %q", text.Truncate(rec.RoomID, 64), roomID)
	}
	if rec.Seq != prev.Seq+1 {
		return newError(CodeChainBroken, "/seq", "record seq %d does not follow seq %d", rec.Seq, prev.Seq)
	}
	if rec.PreHash != prev.Hash {
		return newError(CodeChainBroken, "/pre_hash", "pre_hash does not equal the hash of the record at seq %d", prev.Seq)
	}
	return nil
}

// ChainResult summarizes a verified run of records.
type ChainResult struct {
	// Last is the position of the last record (from when records is empty).
	Last Link
	// Redacted lists the seqs of redacted records, ascending.
	Redacted []int64
}

// VerifyChain verifies records as a gapless continuation of from (zero: the
// room's genesis) in the given order: every record valid with a correct hash,
// seq increasing by exactly one, and each pre_hash equal to the previous
// record's hash. It stops at the first broken record; the error's message
// names its seq. Signatures are not verified. Compare the result's Last.Hash
// with an archive's last_hash to finish ADP 18 step 2.
func VerifyChain(roomID string, from Link, records []*Record) (*ChainResult, error) {
	res := &ChainResult{Last: from}
	for i, rec := range records {
		if rec == nil {
			return res, newError(CodeInvalidRecord, "", "record %d is nil", i)
		}
		if roomID == "" {
			roomID = rec.RoomID
		}
		if err := CheckLink(roomID, res.Last, rec); err != nil {
			e := AsError(err)
			c := *e
			c.Message = "record at seq " + strconv.FormatInt(rec.Seq, 10) + ": " + e.Message
			return res, &c
		}
		if rec.IsRedacted() {
			res.Redacted = append(res.Redacted, rec.Seq)
		}
		res.Last = rec.Link()
	}
	return res, nil
}
