package knowledge

import (
	"apconnect/host/identity"
)

// Record is an acceptance record, the receipt a service returns for an
// accepted event and the unit of every read: {envelope, accepted_at, seq}.
// Seq is allocated by the service at commit, from 1, never reused.
type Record struct {
	Envelope   *identity.Envelope
	AcceptedAt int64
	Seq        int64
}

// NewRecord builds the record of an accepted envelope.
func NewRecord(env *identity.Envelope, acceptedAt, seq int64) *Record {
	return &Record{Envelope: env, AcceptedAt: acceptedAt, Seq: seq}
}

// Value returns the record as a JSON object value.
func (r *Record) Value() map[string]any {
	return map[string]any{"envelope": r.Envelope.Value(), "accepted_at": r.AcceptedAt, "seq": r.Seq}
}

// MarshalJSON writes the record in canonical form.
func (r *Record) MarshalJSON() ([]byte, error) { return identity.Canonicalize(r.Value()) }

// ID returns the event id (the envelope hash).
func (r *Record) ID() string { return r.Envelope.Hash }

// ValidateRecord is the client's check of a record a service returned
// (the SDK's validate_knowledge_record): the acceptanceRecord schema (extra
// members allowed), a valid envelope, and, when expectedID is not "", the
// id that was asked for. Every failure is invalid_response.
func ValidateRecord(v any, expectedID string) (*Record, error) {
	if err := checkStrict(v, "", 0); err != nil {
		return nil, recode(err, CodeInvalidResponse)
	}
	if err := ValidateSchema(v, "acceptanceRecord"); err != nil {
		return nil, recode(err, CodeInvalidResponse)
	}
	m := obj(v)
	env, err := ValidateEnvelope(m["envelope"])
	if err != nil {
		return nil, recode(under(err, "/envelope"), CodeInvalidResponse)
	}
	if expectedID != "" && env.Hash != expectedID {
		return nil, errorf(CodeInvalidResponse, "/envelope/hash", "the service returned event %s, not the requested %s", env.Hash, expectedID)
	}
	acceptedAt, _ := intOf(m["accepted_at"])
	seq, _ := intOf(m["seq"])
	return &Record{Envelope: env, AcceptedAt: acceptedAt, Seq: seq}, nil
}

// Limits are a service's submission limits.
type Limits struct {
	// FutureSkewMS is how far created_at may be ahead of the clock.
	FutureSkewMS int64
	// MaxEnvelopeBytes bounds EnvelopeSize.
	MaxEnvelopeBytes int
}

// DefaultLimits are the SDK store's defaults.
var DefaultLimits = Limits{FutureSkewMS: DefaultFutureSkewMS, MaxEnvelopeBytes: DefaultMaxEnvelopeBytes}

// CheckSubmission is what a service checks of a validated envelope that is
// not an exact resubmission (which returns the original record before any
// of this), in the SDK store's order: created_at no later than now +
// FutureSkewMS (timestamp_out_of_window; there is no lower bound and no
// nonce cache), then CheckDependencies against the retained events, then
// EnvelopeSize within MaxEnvelopeBytes (payload_too_large). A negative or
// unsafe clock is invalid_request. The caller then allocates seq
// (permission_denied once it would pass 2^53-1) and stores NewRecord.
func CheckSubmission(env *identity.Envelope, now int64, lookup Lookup, lim Limits) error {
	if now < 0 || now > maxSafe || lim.FutureSkewMS < 0 {
		return errorf(CodeInvalidRequest, "", "invalid clock or skew allowance")
	}
	if env.Event.CreatedAt > now+lim.FutureSkewMS {
		return errorf(CodeTimestampOutOfWindow, "/event/created_at", "created_at %d is more than %d ms after the service clock %d", env.Event.CreatedAt, lim.FutureSkewMS, now)
	}
	if err := CheckDependencies(&env.Event, lookup); err != nil {
		return err
	}
	size, err := EnvelopeSize(env)
	if err != nil {
		return err
	}
	if size > lim.MaxEnvelopeBytes {
		e := errorf(CodePayloadTooLarge, "", "the envelope is %d bytes; the limit is %d", size, lim.MaxEnvelopeBytes)
		e.Data = map[string]any{"limit": int64(lim.MaxEnvelopeBytes)}
		return e
	}
	return nil
}

// Item is the flattened view of a record the connector's tools return
// (KnowledgeItem).
type Item struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Actor      string `json:"actor"`
	CreatedAt  int64  `json:"created_at"`
	Seq        int64  `json:"seq"`
	AcceptedAt int64  `json:"accepted_at"`
	Payload    any    `json:"payload"`
}

// Item flattens the record.
func (r *Record) Item() Item {
	ev := r.Envelope.Event
	return Item{ID: r.Envelope.Hash, Type: ev.Type, Actor: ev.Actor, CreatedAt: ev.CreatedAt, Seq: r.Seq, AcceptedAt: r.AcceptedAt, Payload: ev.Payload}
}
