package adp

// Class is a record's freshness class (5.1): how its base is checked and
// whether it moves the room head.
type Class string

// The four freshness classes.
const (
	// ClassGenesis is room.create: no base, starts the head.
	ClassGenesis Class = "genesis"
	// ClassHeadBound is message.create and custom message/control kinds: the
	// base must equal the current head; the record becomes the head.
	ClassHeadBound Class = "head-bound"
	// ClassContract is room.update, room.close, room.cancel and type.define:
	// the base must name an accepted record; the record becomes the head.
	ClassContract Class = "contract"
	// ClassSignal is custom signal kinds and the membership events: the base
	// must name an accepted record; the head does not move.
	ClassSignal Class = "signal"
)

// AdvancesHead reports whether an accepted record of the class becomes the
// room head: every class but signal.
func (c Class) AdvancesHead() bool {
	return c == ClassGenesis || c == ClassHeadBound || c == ClassContract
}

// BaseMustBeHead reports whether the class's base must equal the current head
// (head-bound) rather than merely name an accepted record.
func (c Class) BaseMustBeHead() bool { return c == ClassHeadBound }

// KindClass returns the freshness class of a custom type of kind k.
func KindClass(k Kind) Class {
	if k == KindSignal {
		return ClassSignal
	}
	return ClassHeadBound
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
	return "", newError(CodeTypeNotDefined, "/event/type", "event type %q is not in the room's type registry", truncate(typ, 80))
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
	return "", newError(CodeTypeNotDefined, "/event/type", "event type %q is not in the room's type registry", truncate(typ, 80))
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
