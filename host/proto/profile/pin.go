package profile

// Pin is what a reader keeps of the latest profile.update it verified for an
// Agent ID, so that a service cannot roll the profile back (section 6): the
// update's nonce and event ID.
type Pin struct {
	Nonce   int64
	EventID string
}

// PinOrder is how a served profile compares with the pinned one.
type PinOrder int

const (
	// PinNewer: the served profile has a greater nonce and replaces the pin.
	PinNewer PinOrder = iota
	// PinSame: the served profile is the pinned update itself.
	PinSame
	// PinStale: the served profile is older (a smaller nonce) or conflicts
	// with the pin (the same nonce, another envelope); the pin stays.
	PinStale
)

// ComparePin compares a served profile with the pinned one. A profile is
// stale when its nonce is smaller than the pinned one, or equal with
// another envelope: nonces strictly increase per Agent ID, so the update
// with the greatest nonce is the latest, and two envelopes with one nonce
// mean one of them was never accepted.
func ComparePin(pinned, served Pin) PinOrder {
	switch {
	case served.Nonce > pinned.Nonce:
		return PinNewer
	case served.Nonce == pinned.Nonce && served.EventID == pinned.EventID:
		return PinSame
	default:
		return PinStale
	}
}

// CheckPin returns the stale_profile rejection when served is stale against
// pinned (ComparePin), with both pins as data, and nil otherwise.
func CheckPin(pinned, served Pin) error {
	if ComparePin(pinned, served) != PinStale {
		return nil
	}
	e := newError(CodeStaleProfile, "", "the served profile (nonce %d) is older than or conflicts with the pinned update (nonce %d)", served.Nonce, pinned.Nonce)
	e.Data = map[string]any{
		"pinned_nonce": pinned.Nonce, "pinned_event_id": pinned.EventID,
		"served_nonce": served.Nonce, "served_event_id": served.EventID,
	}
	return e
}
