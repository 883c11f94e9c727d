package adp

// VerifyRecord runs every check a reader (a connector syncing, an archive
// verifier) applies to a record before Apply: the record's shape and hash and
// its link to the room's latest record; for a non-redacted record, the
// envelope hash and strict signature (Agent Identity 3.1, historical
// verification: no time window, no nonce) and Check evaluated at the record's
// accepted_at (opt.Now is overridden); for a redacted record, that its type
// is known to the room. Errors about the envelope point into the record
// ("/envelope/…").
//
// Records are judged by the union of the current rules and the 0f87fee
// drafts' (see dialect), so histories written under either verify. It does
// not change the room. A connector with a bounded record window sets
// opt.TrustUnknownAnchors; opt.JoinRequests stays nil for readers.
func (r *Room) VerifyRecord(rules *Rules, rec *Record, opt CheckOptions) error {
	if err := CheckLink(r.ID, r.Last.Link(), rec); err != nil {
		return err
	}
	return r.verifyContent(rules, rec, opt)
}

// verifyContent is VerifyRecord after the link check.
func (r *Room) verifyContent(rules *Rules, rec *Record, opt CheckOptions) error {
	if rec.Envelope != nil {
		if err := rec.Envelope.Verify(); err != nil {
			return withPointerPrefix(err, "/envelope")
		}
	}
	return r.CheckRecord(rules, rec, opt)
}

// CheckRecord is the part of VerifyRecord that depends on room state: that
// no earlier record carries the record's envelope (with opt.Envelopes,
// CheckReplayed); for a redacted record, that its type is known to the room;
// otherwise Check at
// the record's accepted_at (opt.Now is overridden) as a reader judges it,
// under the union of the current rules and the 0f87fee drafts'. It is for a
// caller that checked the record's link, hashes and signature itself (for
// example in parallel, ahead of the records before it); errors about the
// envelope point into the record ("/envelope/…").
func (r *Room) CheckRecord(rules *Rules, rec *Record, opt CheckOptions) error {
	if err := CheckReplayed(rec, opt.Envelopes); err != nil {
		return err
	}
	if rec.Envelope == nil {
		if _, err := ClassOf(rec.Type(), r.Types); err != nil {
			return withPointerPrefix(err, "")
		}
		return nil
	}
	opt.Now = rec.AcceptedAt
	opt.dialect = historical
	if err := r.Check(rules, rec.Envelope, opt); err != nil {
		return withPointerPrefix(err, "/envelope")
	}
	return nil
}

// VerifyGenesis verifies a room's first record as a reader does — record
// shape and hash, envelope hash and signature, CheckCreate under rules (set
// rules.HostOrigin to the origin the room was read from to check the host
// binding) — and materializes the room from it.
func VerifyGenesis(rules *Rules, rec *Record) (*Room, error) {
	if err := CheckLink(rec.RoomID, Link{}, rec); err != nil {
		return nil, err
	}
	if err := rec.Envelope.Verify(); err != nil {
		return nil, withPointerPrefix(err, "/envelope")
	}
	if err := checkCreate(rules, rec.Envelope, historical); err != nil {
		return nil, withPointerPrefix(err, "/envelope")
	}
	return NewRoom(rules, rec)
}
