package adp

import (
	"crypto/sha3"
	"maps"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// Record is a server record (ADP 14): an accepted envelope with the host's
// acceptance data, linked to the previous record of the room by pre_hash.
// Exactly one of Envelope and Redaction is set.
type Record struct {
	RoomID string // the room the record belongs to
	Seq    int64  // position in the room's chain, from 1
	// PreHash is the previous record's hash; "" stands for JSON null, which
	// only seq 1 carries.
	PreHash    string
	Hash       string // record hash (RecordHash)
	AcceptedAt int64  // host clock at acceptance, Unix ms
	// Envelope is the original signed envelope; nil when redacted.
	Envelope *identity.Envelope
	// Redaction replaces the envelope of a redacted record (14.1).
	Redaction *Redaction
	// Extra holds any other members the host put on the record (the kernel
	// schema allows them). They are preserved on output, never hashed and
	// never trusted.
	Extra map[string]any

	// valid is what Validate found valid when the record was built
	// (RecordFromValue, NewRecord); zero when it was not. A value, not a
	// pointer: one allocation less per record parsed.
	valid validated
}

// validated is a copy of every value Validate reads, taken when a record
// was built and had just passed it. Validate runs several times on each
// record a connector syncs (parsing the page, the parallel checks, Apply's
// link check); on a record whose values all still equal the copy it
// returns at once instead of decoding its hashes and recomputing the
// record hash, a pure function of those same values. A record changed in
// any of them is validated from scratch. The copy is only ever made by this
// package, from a Validate that passed: nothing read from the wire can
// supply one.
type validated struct {
	ok                        bool // set by remember
	roomID, preHash, hash     string
	seq, acceptedAt           int64
	env                       *identity.Envelope
	red                       *Redaction
	redHash, redType          string
	envHash, protocol, evType string
	evRoom                    string
}

// snapshot returns the values Validate reads.
func (r *Record) snapshot() validated {
	v := validated{ok: true, roomID: r.RoomID, preHash: r.PreHash, hash: r.Hash, seq: r.Seq, acceptedAt: r.AcceptedAt,
		env: r.Envelope, red: r.Redaction}
	if r.Redaction != nil {
		v.redHash, v.redType = r.Redaction.Hash, r.Redaction.Type
	}
	if r.Envelope != nil {
		ev := &r.Envelope.Event
		v.envHash, v.protocol, v.evType, v.evRoom = r.Envelope.Hash, ev.Protocol, ev.Type, RoomOf(ev)
	}
	return v
}

// remember records that r just passed Validate (see validated). Only for a
// record no other goroutine holds yet.
func (r *Record) remember() { r.valid = r.snapshot() }

// Redaction is a redacted envelope (14.1): the event ID and type survive so
// the chain still verifies and the record's freshness class stays known.
type Redaction struct {
	Hash string // the redacted envelope's event ID
	Type string // the redacted event's type
}

// recordFields are the members of a server record this package interprets.
var recordFields = map[string]bool{
	"room_id": true, "seq": true, "pre_hash": true, "hash": true, "accepted_at": true, "envelope": true,
}

// RecordHash computes a record hash (14):
// base64url(SHA3-256(JCS({room_id, seq, pre_hash, envelope_hash, accepted_at}))),
// with pre_hash null when preHash is "".
func RecordHash(roomID string, seq int64, preHash, envelopeHash string, acceptedAt int64) (string, error) {
	sum, err := recordHashSum(roomID, seq, preHash, envelopeHash, acceptedAt)
	if err != nil {
		return "", err
	}
	return identity.EncodeBase64URL(sum[:]), nil
}

// recordHashSum is RecordHash before the base64url encoding.
func recordHashSum(roomID string, seq int64, preHash, envelopeHash string, acceptedAt int64) ([32]byte, error) {
	// The five members in JCS order, written directly: this runs for every
	// record verified (several times per record on a sync), and a map built
	// and sorted each time cost more than the SHA3 (TestRecordHashMatchesMap
	// holds it to Canonicalize of the map).
	var buf [256]byte
	b := append(buf[:0], `{"accepted_at":`...)
	b, err := identity.AppendCanonicalInt(b, acceptedAt)
	if err == nil {
		b = append(b, `,"envelope_hash":`...)
		b = identity.AppendCanonicalString(b, envelopeHash)
		b = append(b, `,"pre_hash":`...)
		if preHash == "" {
			b = append(b, "null"...)
		} else {
			b = identity.AppendCanonicalString(b, preHash)
		}
		b = append(b, `,"room_id":`...)
		b = identity.AppendCanonicalString(b, roomID)
		b = append(b, `,"seq":`...)
		b, err = identity.AppendCanonicalInt(b, seq)
	}
	if err != nil {
		return [32]byte{}, newError(CodeInvalidRecord, "", "cannot canonicalize the record hash payload: %v", err)
	}
	b = append(b, '}')
	return sha3.Sum256(b), nil
}

// NewRecord builds the record a host assigns to an accepted envelope,
// computing its hash. prev is the room's latest record (zero for the
// room.create record). The envelope must already have passed verification.
func NewRecord(roomID string, prev Link, acceptedAt int64, env *identity.Envelope) (*Record, error) {
	rec := &Record{RoomID: roomID, Seq: prev.Seq + 1, PreHash: prev.Hash, AcceptedAt: acceptedAt, Envelope: env}
	h, err := rec.ComputeHash()
	if err != nil {
		return nil, err
	}
	rec.Hash = h
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	rec.remember()
	return rec, nil
}

// IsRedacted reports whether the record's envelope was redacted.
func (r *Record) IsRedacted() bool { return r.Redaction != nil }

// EnvelopeHash returns the event ID the record commits to.
func (r *Record) EnvelopeHash() string {
	if r.Redaction != nil {
		return r.Redaction.Hash
	}
	if r.Envelope != nil {
		return r.Envelope.Hash
	}
	return ""
}

// Type returns the event type of the record, redacted or not.
func (r *Record) Type() string {
	if r.Redaction != nil {
		return r.Redaction.Type
	}
	if r.Envelope != nil {
		return r.Envelope.Event.Type
	}
	return ""
}

// Actor returns the signing Agent ID, or "" for a redacted record.
func (r *Record) Actor() string {
	if r.Envelope != nil {
		return r.Envelope.Event.Actor
	}
	return ""
}

// Link returns the record's chain position.
func (r *Record) Link() Link { return Link{Seq: r.Seq, Hash: r.Hash} }

// ComputeHash recomputes the record hash from the record's fields.
func (r *Record) ComputeHash() (string, error) {
	return RecordHash(r.RoomID, r.Seq, r.PreHash, r.EnvelopeHash(), r.AcceptedAt)
}

// Redactable reports whether records of an event type may be redacted
// (14.1): message.create and custom types may; every other built-in
// determines room state and may not.
func Redactable(typ string) bool {
	return typ == TypeMessageCreate || (!IsBuiltin(typ) && ValidTypeName(typ))
}

// Redact returns a copy of the record with its envelope replaced by a
// redacted envelope. The record hash is unchanged. It fails for types that
// may not be redacted.
func (r *Record) Redact() (*Record, error) {
	if r.Redaction != nil {
		c := *r
		return &c, nil
	}
	if r.Envelope == nil {
		return nil, newError(CodeInvalidRecord, "/envelope", "record has no envelope")
	}
	if !Redactable(r.Envelope.Event.Type) {
		return nil, newError(CodeInvalidRecord, "/envelope", "%s records determine room state and must not be redacted", r.Envelope.Event.Type)
	}
	c := *r
	c.Envelope = nil
	c.Redaction = &Redaction{Hash: r.Envelope.Hash, Type: r.Envelope.Event.Type}
	return &c, nil
}

// Validate checks the record's shape and recomputes its hash: a valid room
// id, seq in 1..2^53-1, pre_hash null exactly at seq 1, canonical 32-byte
// hashes, room.create exactly at seq 1, an ADP envelope of this room that is
// not a join request (join requests are never records), or a redaction of a
// redactable type. It does not verify the envelope's hash or signature; call
// Envelope.Verify for that.
func (r *Record) Validate() error {
	if r.valid.ok && r.valid == r.snapshot() {
		return nil // passed when the record was built, and unchanged since
	}
	if !ValidRoomID(r.RoomID) {
		return newError(CodeInvalidRecord, "/room_id", "room_id must match ^[A-Za-z0-9_-]{1,64}$")
	}
	if r.Seq < 1 || r.Seq > identity.MaxSafeInteger {
		return newError(CodeInvalidRecord, "/seq", "seq must be an integer from 1 to 2^53-1")
	}
	if r.Seq == 1 && r.PreHash != "" {
		return newError(CodeInvalidRecord, "/pre_hash", "the record at seq 1 must have a null pre_hash")
	}
	if r.Seq > 1 && !validHash(r.PreHash) {
		return newError(CodeInvalidRecord, "/pre_hash", "pre_hash must be a canonical base64url SHA3-256 hash")
	}
	if !validHash(r.Hash) {
		return newError(CodeInvalidRecord, "/hash", "hash must be a canonical base64url SHA3-256 hash")
	}
	if r.AcceptedAt < 0 || r.AcceptedAt > identity.MaxSafeInteger {
		return newError(CodeInvalidRecord, "/accepted_at", "accepted_at must be an integer from 0 to 2^53-1")
	}
	switch {
	case r.Envelope == nil && r.Redaction == nil:
		return newError(CodeInvalidRecord, "/envelope", "record has no envelope")
	case r.Envelope != nil && r.Redaction != nil:
		return newError(CodeInvalidRecord, "/envelope", "record has both an envelope and a redaction")
	case r.Redaction != nil:
		if !validHash(r.Redaction.Hash) {
			return newError(CodeInvalidRecord, "/envelope/hash", "redacted envelope hash must be a canonical base64url SHA3-256 hash")
		}
		if !ValidTypeName(r.Redaction.Type) {
			return newError(CodeInvalidRecord, "/envelope/type", "redacted envelope type is not a valid event type name")
		}
		if !Redactable(r.Redaction.Type) {
			return newError(CodeInvalidRecord, "/envelope/type", "%s records determine room state and must not be redacted (ADP 14.1)", r.Redaction.Type)
		}
	default:
		ev := &r.Envelope.Event
		if ev.Protocol != Protocol {
			return newError(CodeInvalidEvent, "/envelope/event/protocol", "protocol must be %q", Protocol)
		}
		if !validHash(r.Envelope.Hash) {
			return newError(CodeInvalidRecord, "/envelope/hash", "envelope hash must be a canonical base64url SHA3-256 hash")
		}
		switch {
		case ev.Type == TypeJoinRequest:
			return newError(CodeInvalidRecord, "/envelope/event/type", "a room.join.request is never a record; reviews embed it")
		case (ev.Type == TypeRoomCreate) != (r.Seq == 1):
			return newError(CodeInvalidRecord, "/envelope/event/type", "room.create is exactly the record at seq 1")
		case ev.Type != TypeRoomCreate && RoomOf(ev) != r.RoomID:
			return newError(CodeInvalidRecord, "/envelope/event/room_id", "event room_id differs from the record's room_id")
		}
	}
	sum, err := recordHashSum(r.RoomID, r.Seq, r.PreHash, r.EnvelopeHash(), r.AcceptedAt)
	if err != nil {
		return err
	}
	if !identity.EqualBase64URL(sum[:], r.Hash) {
		return newError(CodeInvalidRecord, "/hash", "record hash does not match its fields")
	}
	return nil
}

// validHash reports whether s is a canonical base64url encoding of 32 bytes.
func validHash(s string) bool {
	return len(s) == 43 && identity.ValidBase64URLLen(s, 32)
}

// Value returns the record as a JSON object value in the wire shape.
func (r *Record) Value() map[string]any {
	m := make(map[string]any, len(r.Extra)+6)
	maps.Copy(m, r.Extra)
	var pre any
	if r.PreHash != "" {
		pre = r.PreHash
	}
	m["room_id"] = r.RoomID
	m["seq"] = r.Seq
	m["pre_hash"] = pre
	m["hash"] = r.Hash
	m["accepted_at"] = r.AcceptedAt
	switch {
	case r.Redaction != nil:
		m["envelope"] = map[string]any{"hash": r.Redaction.Hash, "redacted": true, "type": r.Redaction.Type}
	case r.Envelope != nil:
		m["envelope"] = r.Envelope.Value()
	}
	return m
}

// AppendCanonical appends the record in canonical (JCS) form to b — the
// bytes of MarshalJSON — reusing canonicalEvent, JCS of the record's event
// (from identity.Envelope.VerifyCanonical), when the record carries a signed
// envelope and no extra members; otherwise it canonicalizes the whole
// record.
func (r *Record) AppendCanonical(b, canonicalEvent []byte) ([]byte, error) {
	if r.Envelope == nil || r.Redaction != nil || len(r.Extra) > 0 || canonicalEvent == nil {
		return identity.AppendCanonical(b, r.Value())
	}
	b = append(b, `{"accepted_at":`...)
	b, err := identity.AppendCanonicalInt(b, r.AcceptedAt)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"envelope":`...)
	b = r.Envelope.AppendCanonical(b, canonicalEvent)
	b = append(b, `,"hash":`...)
	b = identity.AppendCanonicalString(b, r.Hash)
	b = append(b, `,"pre_hash":`...)
	if r.PreHash == "" {
		b = append(b, "null"...)
	} else {
		b = identity.AppendCanonicalString(b, r.PreHash)
	}
	b = append(b, `,"room_id":`...)
	b = identity.AppendCanonicalString(b, r.RoomID)
	b = append(b, `,"seq":`...)
	if b, err = identity.AppendCanonicalInt(b, r.Seq); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// MarshalJSON writes the record in canonical (JCS) form.
func (r Record) MarshalJSON() ([]byte, error) {
	return identity.Canonicalize(r.Value())
}

// UnmarshalJSON strictly parses a record and validates it (see ParseRecord).
func (r *Record) UnmarshalJSON(data []byte) error {
	rec, err := ParseRecord(data)
	if err != nil {
		return err
	}
	*r = *rec
	return nil
}

// ParseRecord strictly parses (Agent Identity 4.1) and validates one server
// record. The envelope's hash and signature are not verified.
func ParseRecord(data []byte) (*Record, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		return nil, jsonError(err, "", CodeInvalidRecord)
	}
	return RecordFromValue(v, "")
}

// RecordsFromValues is RecordFromValue on every value, on every core: the
// i-th record and error are those of values[i], located at pointer(i).
func RecordsFromValues(values []any, pointer func(i int) string) ([]*Record, []error) {
	recs, errs := make([]*Record, len(values)), make([]error, len(values))
	parallel(len(values), func(i int) {
		// pointer only locates errors, and RecordFromValue builds the
		// pointers of the members it reads (concatenated strings) before it
		// knows whether they fail: a record is read at the root first, and
		// only one that fails is read again at its pointer, which gives the
		// error it would have given the first time (the result of a value
		// does not depend on its pointer).
		if recs[i], errs[i] = RecordFromValue(values[i], ""); errs[i] != nil {
			recs[i], errs[i] = RecordFromValue(values[i], pointer(i))
		}
	})
	return recs, errs
}

// RecordFromValue reads a strictly parsed server record and validates it.
// pointer locates the record in its document for error messages.
func RecordFromValue(v any, pointer string) (*Record, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidRecord, pointer, "record must be a JSON object")
	}
	var r Record
	var err error
	if r.RoomID, err = fieldString(obj, "room_id", pointer, CodeInvalidRecord); err != nil {
		return nil, err
	}
	if r.Seq, err = fieldInt(obj, "seq", pointer, CodeInvalidRecord); err != nil {
		return nil, err
	}
	pre, ok := obj["pre_hash"]
	if !ok {
		return nil, newError(CodeInvalidRecord, pointer, "missing required field \"pre_hash\"")
	}
	if pre != nil {
		s, ok := pre.(string)
		if !ok {
			return nil, newError(CodeInvalidRecord, pointer+"/pre_hash", "pre_hash must be a string or null")
		}
		if s == "" {
			return nil, newError(CodeInvalidRecord, pointer+"/pre_hash", "pre_hash must not be empty")
		}
		r.PreHash = s
	}
	if r.Hash, err = fieldString(obj, "hash", pointer, CodeInvalidRecord); err != nil {
		return nil, err
	}
	if r.AcceptedAt, err = fieldInt(obj, "accepted_at", pointer, CodeInvalidRecord); err != nil {
		return nil, err
	}
	envV, ok := obj["envelope"]
	if !ok {
		return nil, newError(CodeInvalidRecord, pointer, "missing required field \"envelope\"")
	}
	envObj, ok := envV.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidRecord, pointer+"/envelope", "envelope must be a JSON object")
	}
	if _, redacted := envObj["redacted"]; redacted {
		red, err := redactionFromValue(envObj, pointer+"/envelope")
		if err != nil {
			return nil, err
		}
		r.Redaction = red
	} else {
		env, err := identity.EnvelopeFromValue(envObj, pointer+"/envelope")
		if err != nil {
			return nil, AsError(err)
		}
		if env.Event.Protocol == Protocol {
			if err := CheckEventFields(&env.Event, pointer+"/envelope/event"); err != nil {
				return nil, err
			}
		}
		r.Envelope = env
	}
	// The six members read are all present: only a record with more has
	// extra members.
	if len(obj) > len(recordFields) {
		for k, val := range obj {
			if !recordFields[k] {
				if r.Extra == nil {
					r.Extra = map[string]any{}
				}
				r.Extra[k] = val
			}
		}
	}
	if err := r.Validate(); err != nil {
		e := AsError(err)
		if pointer != "" {
			e = withPointerPrefix(e, pointer)
		}
		return nil, e
	}
	r.remember()
	return &r, nil
}

// redactionFromValue reads the closed redacted envelope shape
// {hash, redacted: true, type}.
func redactionFromValue(obj map[string]any, pointer string) (*Redaction, error) {
	for k := range obj {
		if k != "hash" && k != "redacted" && k != "type" {
			return nil, newError(CodeInvalidRecord, pointer+"/"+text.EscapePointer(k), "unknown member %q in a redacted envelope", text.Truncate(k, 80))
		}
	}
	if obj["redacted"] != true {
		return nil, newError(CodeInvalidRecord, pointer+"/redacted", "redacted must be true")
	}
	h, err := fieldString(obj, "hash", pointer, CodeInvalidRecord)
	if err != nil {
		return nil, err
	}
	t, err := fieldString(obj, "type", pointer, CodeInvalidRecord)
	if err != nil {
		return nil, err
	}
	return &Redaction{Hash: h, Type: t}, nil
}
