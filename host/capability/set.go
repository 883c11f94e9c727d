package capability

import (
	"encoding/json"
	"math/bits"
	"strings"
)

// Set is a set of effective grants: a bitset, compared with ==. Every
// constructor adds the reads the writes imply, so a Set never holds a
// write without its read. The zero value is the empty set: nothing is
// granted.
type Set struct {
	bits uint16
}

func bit(c Capability) uint16 { return 1 << (c - 1) }

// allBits has one bit per capability.
const allBits = 1<<lastCapability - 1

// NewSet returns the effective grants of cs: each capability with the read
// it implies. Invalid capabilities grant nothing.
func NewSet(cs ...Capability) Set {
	var s Set
	for _, c := range cs {
		s.bits |= c.Implies().bits
	}
	return s
}

// All returns the set of all ten capabilities: what an origin is granted
// when its configuration names no grants.
func All() Set { return Set{bits: allBits} }

// Has reports whether c is granted, directly or as the read a granted write
// implies. An invalid c is never granted.
func (s Set) Has(c Capability) bool { return c.Valid() && s.bits&bit(c) != 0 }

// Union returns the grants of s and t together.
func (s Set) Union(t Set) Set { return Set{bits: s.bits | t.bits} }

// Len returns how many capabilities are granted (implied reads included).
func (s Set) Len() int { return bits.OnesCount16(s.bits) }

// IsEmpty reports whether nothing is granted.
func (s Set) IsEmpty() bool { return s.bits == 0 }

// Capabilities returns the granted capabilities in vocabulary order, the
// implied reads included; never nil.
func (s Set) Capabilities() []Capability {
	cs := make([]Capability, 0, s.Len())
	for c := DiscourseRead; c <= lastCapability; c++ {
		if s.Has(c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// Names returns the names of the granted capabilities in vocabulary order
// (discourse, agent.profile, mail, knowledge, delegation; read before
// write), the implied reads included: the effective grants, not the list
// as written. Never nil.
func (s Set) Names() []string {
	names := make([]string, 0, s.Len())
	for _, c := range s.Capabilities() {
		names = append(names, c.String())
	}
	return names
}

// String returns the names joined by ", ", or "none" for the empty set.
func (s Set) String() string {
	if s.IsEmpty() {
		return "none"
	}
	return strings.Join(s.Names(), ", ")
}

// MarshalJSON encodes the set as the JSON array of its Names.
func (s Set) MarshalJSON() ([]byte, error) { return json.Marshal(s.Names()) }

// UnmarshalJSON decodes a JSON array of names with Parse.
func (s *Set) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	v, err := Parse(names)
	if err != nil {
		return err
	}
	*s = v
	return nil
}
