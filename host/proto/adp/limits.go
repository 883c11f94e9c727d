package adp

import "time"

// Limits are the quotas of ADP section 20. A zero field means "no limit":
// the check it controls is skipped. Hosts publish their limits; a verifier
// that does not know the host's limits uses VerifierLimits, which checks only
// what the protocol itself fixes.
type Limits struct {
	// Per-agent rates per minute by quota class (section 20). Check does not
	// enforce rates — they need a clock window the caller keeps — but
	// RateLimit reports the effective rate for a type.
	MessageRate int // message-kind events (and message.create)
	SignalRate  int // signal-kind events and membership events
	ControlRate int // control-kind events and contract writes
	// MaxRateHint is the host ceiling on a type's rate_hint (section 20:
	// hints adjust the defaults "within host ceilings"): a larger hint
	// counts as this. 0 leaves hints uncapped.
	MaxRateHint int

	// MaxPayload bounds the JCS size of an event payload, in bytes.
	MaxPayload int
	// MaxPayloadCeiling bounds what a type's max_payload_hint can raise the
	// payload limit to, and is the payload limit of room.create and
	// type.define, whose size is governed by the schema and definition
	// limits instead.
	MaxPayloadCeiling int
	// MaxSchemaSize bounds the JCS size of one type schema, in bytes
	// (invalid_type_schema beyond it).
	MaxSchemaSize int
	// MaxTypes bounds the number of types in a room's registry
	// (rate_limited beyond it: it is a quota).
	MaxTypes int
	// MaxPackSize bounds an external pack document, in bytes.
	MaxPackSize int
	// JoinRequestLifetime is how long a join request stays pending.
	JoinRequestLifetime time.Duration
	// MinRoomDuration and MaxRoomDuration bound end_time - start_time after
	// room.create and every room.update.
	MinRoomDuration time.Duration
	MaxRoomDuration time.Duration // see MinRoomDuration
	// MaxSpeakers caps members with a speaking role (moderator or speaker)
	// on top of policy.max_speakers; the smaller of the two applies.
	MaxSpeakers int
	// MaxObservers caps active observers (rate_limited beyond it).
	MaxObservers int
}

// DefaultLimits returns the recommended defaults of section 20.
func DefaultLimits() Limits {
	return Limits{
		MessageRate:         5,
		SignalRate:          60,
		ControlRate:         10,
		MaxRateHint:         120,
		MaxPayload:          64 << 10,
		MaxPayloadCeiling:   256 << 10,
		MaxSchemaSize:       16 << 10,
		MaxTypes:            64,
		MaxPackSize:         256 << 10,
		JoinRequestLifetime: 24 * time.Hour,
		MinRoomDuration:     10 * time.Minute,
		MaxRoomDuration:     7 * 24 * time.Hour,
		MaxSpeakers:         100,
		MaxObservers:        1000,
	}
}

// VerifierLimits returns the limits a reader applies to records of a host
// whose published limits it does not know: every host quota is off, and only
// the external pack size bound (a safety limit of the reader itself) stays.
// The mentions bound of section 5 is enforced by the identity package.
func VerifierLimits() Limits {
	return Limits{MaxPackSize: 256 << 10}
}

// payloadLimit returns the payload size limit for an event of the given type
// definition (nil for built-ins): a type's max_payload_hint replaces the
// default within the ceiling.
func (l Limits) payloadLimit(typ string, def *TypeDef) int {
	if l.MaxPayload == 0 && l.MaxPayloadCeiling == 0 {
		return 0
	}
	if typ == TypeRoomCreate || typ == TypeTypeDefine {
		return l.MaxPayloadCeiling
	}
	if def != nil && def.MaxPayloadHint > 0 {
		hint := int(min(def.MaxPayloadHint, int64(1)<<40))
		if l.MaxPayloadCeiling > 0 {
			hint = min(hint, l.MaxPayloadCeiling)
		}
		return hint
	}
	return l.MaxPayload
}

// rateFor returns the default per-minute rate of a quota class.
func (l Limits) rateFor(k Kind) int {
	switch k {
	case KindMessage:
		return l.MessageRate
	case KindSignal:
		return l.SignalRate
	case KindControl:
		return l.ControlRate
	}
	return 0
}
