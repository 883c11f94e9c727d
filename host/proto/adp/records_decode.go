package adp

import (
	"apconnect/host/identity"
)

// DecodeRecordList reads an Agent Identity list of server records — a
// history page, {"result": [records], "next_cursor": "…"} — straight into
// records, in the form hosts write it: no other list members, every record
// with exactly its six members (no extra ones, not redacted), integers as
// plain digits. ok is true only when the text is such a list and every
// record in it is valid; recs and next are then exactly what strictly
// parsing the text (identity.ParseStrict), reading the list and reading
// each record (RecordsFromValues) give. For anything else — another form,
// or anything wrong — ok is false and the caller reads the text the
// general way, which accepts the other forms and reports what is wrong.
//
// Reading a page into maps first made three maps per record (the record,
// its envelope and its event) and a number for each integer, all read once
// and dropped: a large share of a catch-up's allocations.
func DecodeRecordList(data []byte) (recs []*Record, next string, ok bool) {
	d := identity.NewDecoder(data)
	hasResult, hasNext := false, false
	ok = d.Object(func(name string) bool {
		switch name {
		case "result":
			hasResult = true
			return d.Array(func(int) bool {
				rec, ok := decodeRecord(d)
				recs = append(recs, rec)
				return ok
			})
		case "next_cursor":
			hasNext = true
			next, ok = d.String()
			return ok && next != ""
		}
		return false
	})
	if !ok || !hasResult || !d.End() {
		return nil, "", false
	}
	if !hasNext {
		next = ""
	}
	// What RecordFromValue checks beyond the shape, on every core.
	valid := make([]bool, len(recs))
	parallel(len(recs), func(i int) { valid[i] = recs[i].checkDecoded() })
	for _, v := range valid {
		if !v {
			return nil, "", false
		}
	}
	if recs == nil {
		recs = []*Record{}
	}
	return recs, next, true
}

// Members of a record, an envelope and an event that decodeRecord reads,
// as bits.
const (
	recRoomID = 1 << iota
	recSeq
	recPreHash
	recHash
	recAcceptedAt
	recEnvelope
	recAll = 1<<iota - 1
)

// decodeRecord reads one record in the form DecodeRecordList takes.
func decodeRecord(d *identity.Decoder) (*Record, bool) {
	r := new(Record)
	seen := 0
	ok := d.Object(func(name string) bool {
		var ok bool
		switch name {
		case "room_id":
			seen |= recRoomID
			r.RoomID, ok = d.String()
			return ok && r.RoomID != ""
		case "seq":
			seen |= recSeq
			r.Seq, ok = d.Int()
			return ok
		case "pre_hash":
			seen |= recPreHash
			if d.Null() {
				return true
			}
			r.PreHash, ok = d.String()
			return ok && r.PreHash != ""
		case "hash":
			seen |= recHash
			r.Hash, ok = d.String()
			return ok && r.Hash != ""
		case "accepted_at":
			seen |= recAcceptedAt
			r.AcceptedAt, ok = d.Int()
			return ok
		case "envelope":
			seen |= recEnvelope
			r.Envelope, ok = decodeEnvelope(d)
			return ok
		}
		return false
	})
	return r, ok && seen == recAll
}

// decodeEnvelope reads a signed (not redacted) envelope.
func decodeEnvelope(d *identity.Decoder) (*identity.Envelope, bool) {
	env := new(identity.Envelope)
	hasEvent, hasHash, hasSig := false, false, false
	ok := d.Object(func(name string) bool {
		var ok bool
		switch name {
		case "event":
			hasEvent = true
			return decodeEvent(d, &env.Event)
		case "hash":
			hasHash = true
			env.Hash, ok = d.String()
			return ok
		case "signature":
			hasSig = true
			env.Signature, ok = d.String()
			return ok
		}
		return false
	})
	return env, ok && hasEvent && hasHash && hasSig
}

// decodeEvent reads an event: the six identity members and any others as
// its Fields.
func decodeEvent(d *identity.Decoder, e *identity.Event) bool {
	const identityMembers = 6
	var names [8]string
	var values [8]any
	n, seen := 0, 0
	ok := d.Object(func(name string) bool {
		var ok bool
		switch name {
		case "protocol":
			e.Protocol, ok = d.String()
			ok = ok && e.Protocol != ""
		case "type":
			e.Type, ok = d.String()
			ok = ok && e.Type != ""
		case "actor":
			e.Actor, ok = d.String()
			ok = ok && e.Actor != ""
		case "created_at":
			e.CreatedAt, ok = d.Int()
		case "nonce":
			e.Nonce, ok = d.Int()
			ok = ok && e.Nonce >= 1
		case "payload":
			e.Payload, ok = d.Value()
		default:
			if n == len(names) {
				return false
			}
			names[n] = name
			values[n], ok = d.Value()
			n++
			return ok
		}
		seen++
		return ok
	})
	if !ok || seen != identityMembers {
		return false
	}
	if n > 0 {
		e.Fields = make(map[string]any, n)
		for i := range n {
			e.Fields[names[i]] = values[i]
		}
	}
	return true
}

// checkDecoded runs on a record decodeRecord read the checks
// RecordFromValue makes beyond the shape — the actor's Agent ID, the ADP
// event fields, Validate — and remembers that it passed Validate.
func (r *Record) checkDecoded() bool {
	ev := &r.Envelope.Event
	if !identity.ValidAgentID(ev.Actor) {
		return false
	}
	if ev.Protocol == Protocol && CheckEventFields(ev, "") != nil {
		return false
	}
	if r.Validate() != nil {
		return false
	}
	r.remember()
	return true
}
