package adp

import (
	"fmt"
	"strconv"
	"strings"

	"apconnect/host/text"
)

// Class is a record's freshness class (5.1): how its base is checked and
// whether it moves the room head.
//
// The room head is the latest genesis, contract or control record. Messages
// and signals only anchor: they name an accepted record and never move the
// head, so messages never conflict with each other (the rule of the
// reference SDK 0.12.6; the 0f87fee draft also moved the head on messages).
type Class string

// The five freshness classes.
const (
	// ClassGenesis is room.create: no base, starts the head.
	ClassGenesis Class = "genesis"
	// ClassMessage is message.create and custom message kinds: the base
	// must name an accepted record at or after the head; the head does not
	// move.
	ClassMessage Class = "message"
	// ClassControl is custom control kinds: the base must name an accepted
	// record at or after the head; the record becomes the head.
	ClassControl Class = "control"
	// ClassContract is room.update, room.close, room.cancel and type.define:
	// the base must name an accepted record; the record becomes the head.
	ClassContract Class = "contract"
	// ClassSignal is custom signal kinds and the membership events: the base
	// must name an accepted record; the head does not move.
	ClassSignal Class = "signal"
)

// AdvancesHead reports whether an accepted record of the class becomes the
// room head: genesis, contract and control.
func (c Class) AdvancesHead() bool {
	return c == ClassGenesis || c == ClassContract || c == ClassControl
}

// HeadChecked reports whether the class's base must be at or after the
// current head (message and control), rather than merely name an accepted
// record.
func (c Class) HeadChecked() bool { return c == ClassMessage || c == ClassControl }

// KindClass returns the freshness class of a custom type of kind k.
func KindClass(k Kind) Class {
	switch k {
	case KindSignal:
		return ClassSignal
	case KindControl:
		return ClassControl
	}
	return ClassMessage
}

// ClassOf returns the freshness class of an event type in a room with the
// given registry. Built-ins have fixed classes; a custom type takes its
// class from its kind. It fails with type_not_defined for a custom type the
// registry lacks, and with invalid_event for room.join.request, which never
// becomes a record. A disabled type still has a class: redacted and historic
// records of it keep theirs.
func ClassOf(typ string, reg Registry) (Class, error) {
	if b, ok := builtinTypes[typ]; ok {
		if b.class == "" {
			return "", newError(CodeInvalidEvent, "/event/type", "room.join.request is never a record and has no freshness class")
		}
		return b.class, nil
	}
	if def, ok := reg.Lookup(typ); ok {
		return KindClass(def.Kind), nil
	}
	return "", newError(CodeTypeNotDefined, "/event/type", "event type %q is not in the room's type registry", text.Truncate(typ, 80))
}

// CheckBase applies the freshness rule of class to a base (5.1), in the
// order the reference SDK checks it: first the anchor — base_seq must name
// an accepted record (1 … lastSeq) whose hash is base.Hash, else
// base_record_mismatch — then, for head-checked classes, base_seq must not be
// behind the head, else room_head_mismatch with the 5.1 data (the current
// head as current_seq/current_hash).
//
// anchor returns the record hash at a seq; ok false means the caller does
// not hold it. The head's hash is known from head and never needs anchor.
// When anchor is nil or does not know the seq, the check fails with
// base_record_mismatch unless trustUnknown (a reader whose record window is
// bounded; never a host, which holds every record).
func CheckBase(class Class, head Link, lastSeq int64, base Link, anchor func(seq int64) (string, bool), trustUnknown bool) error {
	seq, hash := base.Seq, base.Hash
	mismatch := func(why string) error {
		e := newError(CodeBaseRecordMismatch, "/event/base_hash", "base_seq %d / base_hash %s %s", seq, text.Truncate(hash, 43), why)
		e.Data = map[string]any{"base_seq": seq, "base_hash": hash}
		return e
	}
	if seq < 1 || seq > lastSeq {
		return mismatch(fmt.Sprintf("does not name an accepted record (latest seq is %d)", lastSeq))
	}
	var want string
	known := false
	if seq == head.Seq {
		want, known = head.Hash, true
	} else if anchor != nil {
		want, known = anchor(seq)
	}
	switch {
	case !known && !trustUnknown:
		return mismatch("names a record that cannot be looked up")
	case known && want != hash:
		return mismatch("does not match the hash of the accepted record at that seq")
	}
	if class.HeadChecked() && seq < head.Seq {
		return headMismatch(base, head)
	}
	return nil
}

// headMismatch is the room_head_mismatch error of 5.1.
func headMismatch(base, head Link) *Error {
	e := newError(CodeRoomHeadMismatch, "/event/base_seq", "base (%d) is behind the current room head (%d)", base.Seq, head.Seq)
	e.Data = map[string]any{
		"base_seq":     base.Seq,
		"base_hash":    base.Hash,
		"current_seq":  head.Seq,
		"current_hash": head.Hash,
	}
	return e
}

// withEventsURL adds events_url (the records after the base) to a
// room_head_mismatch error.
func withEventsURL(err error, roomURL string, baseSeq int64) error {
	e, ok := err.(*Error)
	if !ok || e.Code != CodeRoomHeadMismatch || roomURL == "" {
		return err
	}
	e.Data["events_url"] = strings.TrimSuffix(roomURL, "/") + "/events?after_seq=" + strconv.FormatInt(baseSeq, 10)
	return e
}

// QuotaClass returns the rate quota class of an event type (12.2, 20):
// message.create counts as message, contract writes as control, membership
// events as signal, and custom types by their kind.
func QuotaClass(typ string, reg Registry) (Kind, error) {
	if b, ok := builtinTypes[typ]; ok {
		return b.quota, nil
	}
	if def, ok := reg.Lookup(typ); ok {
		return def.Kind, nil
	}
	return "", newError(CodeTypeNotDefined, "/event/type", "event type %q is not in the room's type registry", text.Truncate(typ, 80))
}

// RateLimit returns the per-agent events-per-minute quota for an event type:
// the type's rate_hint when it has one (a hint adjusts the default within
// the host ceiling l.MaxRateHint, 20), otherwise the default of its quota
// class. 0 means no limit; a class the limits leave unlimited stays
// unlimited whatever the hint. Check does not enforce rates: the hub counts
// events per agent itself.
func RateLimit(l Limits, typ string, reg Registry) (int, error) {
	k, err := QuotaClass(typ, reg)
	if err != nil {
		return 0, err
	}
	if def, ok := reg.Lookup(typ); ok && def.RateHint > 0 && l.rateFor(k) > 0 {
		hint := min(def.RateHint, 1<<31)
		if l.MaxRateHint > 0 {
			hint = min(hint, int64(l.MaxRateHint))
		}
		return int(hint), nil
	}
	return l.rateFor(k), nil
}
