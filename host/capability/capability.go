// Package capability is the operator's grant vocabulary (placeholder until
// the grants branch lands: same names).
package capability

import "fmt"

// Capability is one grant name.
type Capability string

// The ten capabilities.
const (
	DiscourseRead   Capability = "discourse.read"
	DiscourseWrite  Capability = "discourse.write"
	ProfileRead     Capability = "agent.profile.read"
	ProfileWrite    Capability = "agent.profile.write"
	MailRead        Capability = "mail.read"
	MailWrite       Capability = "mail.write"
	KnowledgeRead   Capability = "knowledge.read"
	KnowledgeWrite  Capability = "knowledge.write"
	DelegationRead  Capability = "delegation.read"
	DelegationWrite Capability = "delegation.write"
)

var order = []Capability{DiscourseRead, DiscourseWrite, ProfileRead, ProfileWrite, MailRead, MailWrite, KnowledgeRead, KnowledgeWrite, DelegationRead, DelegationWrite}

// Set is a set of capabilities.
type Set uint16

// All is every capability.
func All() Set { return Set(1<<len(order) - 1) }

func bit(c Capability) Set {
	for i, o := range order {
		if o == c {
			return 1 << i
		}
	}
	return 0
}

// Of returns the set of cs.
func Of(cs ...Capability) Set {
	var s Set
	for _, c := range cs {
		s |= bit(c)
	}
	return s
}

// Has reports whether c is in s.
func (s Set) Has(c Capability) bool { b := bit(c); return b != 0 && s&b != 0 }

// Names lists s in vocabulary order.
func (s Set) Names() []string {
	out := []string{}
	for _, c := range order {
		if s.Has(c) {
			out = append(out, string(c))
		}
	}
	return out
}

// ParseOne returns the capability named name, or an error naming it.
func ParseOne(name string) (Capability, error) {
	for _, c := range order {
		if string(c) == name {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown capability %q", name)
}
