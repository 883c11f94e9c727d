package capability

import "strconv"

// Capability is one grant of the vocabulary. The zero value is no
// capability: it is not valid, has no name and no Set holds it.
type Capability uint8

// The ten capabilities, in vocabulary order (the order Set.Names and All
// use): per protocol, the read before the write.
const (
	DiscourseRead Capability = iota + 1
	DiscourseWrite
	ProfileRead
	ProfileWrite
	MailRead
	MailWrite
	KnowledgeRead
	KnowledgeWrite
	DelegationRead
	DelegationWrite

	// lastCapability is the highest valid Capability.
	lastCapability = DelegationWrite
)

// Protocol is one of the five protocols a capability belongs to. The zero
// value is no protocol.
type Protocol uint8

// The protocols, in vocabulary order.
const (
	Discourse Protocol = iota + 1
	Profile
	Mail
	Knowledge
	Delegation

	lastProtocol = Delegation
)

// Access says whether a capability reads or writes.
type Access uint8

// The two kinds of access. The zero value is neither.
const (
	Read Access = iota + 1
	Write
)

// protocolInfo describes a protocol: its prefix in grant names, its
// protocol identifier and the name of its discovery document.
type protocolInfo struct {
	prefix, id, wellKnown string
}

var protocols = [lastProtocol + 1]protocolInfo{
	Discourse:  {"discourse", "agent-discourse/1.0", "agent-discourse"},
	Profile:    {"agent.profile", "agent-profile/1.0", "agent-profile"},
	Mail:       {"mail", "agent-mail/1.0", "agent-mail"},
	Knowledge:  {"knowledge", "agent-knowledge/1.0", "agent-knowledge"},
	Delegation: {"delegation", "agent-delegation/1.0", "agent-delegation"},
}

// Valid reports whether c is one of the ten capabilities.
func (c Capability) Valid() bool { return c >= DiscourseRead && c <= lastCapability }

// Protocol returns the protocol c belongs to (0 for an invalid c).
func (c Capability) Protocol() Protocol {
	if !c.Valid() {
		return 0
	}
	return Protocol((c-1)/2 + 1)
}

// Access returns whether c reads or writes (0 for an invalid c).
func (c Capability) Access() Access {
	switch {
	case !c.Valid():
		return 0
	case (c-1)%2 == 0:
		return Read
	default:
		return Write
	}
}

// Implies returns the capabilities a grant of c gives: c itself and, for a
// write, the read of the same protocol. It is empty for an invalid c.
func (c Capability) Implies() Set {
	if !c.Valid() {
		return Set{}
	}
	s := Set{bits: bit(c)}
	if c.Access() == Write {
		s.bits |= bit(c.Protocol().Read())
	}
	return s
}

// String returns the capability's name, such as "discourse.read", or
// "capability(N)" for an invalid one.
func (c Capability) String() string {
	if !c.Valid() {
		return "capability(" + strconv.Itoa(int(c)) + ")"
	}
	return c.Protocol().prefix() + "." + c.Access().String()
}

// MarshalText encodes the capability as its name; an invalid one is an
// error.
func (c Capability) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, &NameError{Name: c.String(), Index: -1}
	}
	return []byte(c.String()), nil
}

// UnmarshalText decodes a capability name; an unknown one is a *NameError.
func (c *Capability) UnmarshalText(b []byte) error {
	v, err := lookup(string(b), -1)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Valid reports whether p is one of the five protocols.
func (p Protocol) Valid() bool { return p >= Discourse && p <= lastProtocol }

// Read returns the protocol's read capability (0 for an invalid p).
func (p Protocol) Read() Capability {
	if !p.Valid() {
		return 0
	}
	return Capability(2*p - 1)
}

// Write returns the protocol's write capability (0 for an invalid p).
func (p Protocol) Write() Capability {
	if !p.Valid() {
		return 0
	}
	return Capability(2 * p)
}

// String returns the protocol's prefix in grant names: "discourse",
// "agent.profile", "mail", "knowledge" or "delegation".
func (p Protocol) String() string {
	if !p.Valid() {
		return "protocol(" + strconv.Itoa(int(p)) + ")"
	}
	return p.prefix()
}

func (p Protocol) prefix() string { return protocols[p].prefix }

// ID returns the protocol identifier its discovery document and events
// carry, such as "agent-discourse/1.0" ("" for an invalid p).
func (p Protocol) ID() string {
	if !p.Valid() {
		return ""
	}
	return protocols[p].id
}

// WellKnown returns the name of the protocol's discovery document, served
// at /.well-known/<name>, such as "agent-discourse" ("" for an invalid p).
func (p Protocol) WellKnown() string {
	if !p.Valid() {
		return ""
	}
	return protocols[p].wellKnown
}

// Protocols returns the five protocols in vocabulary order.
func Protocols() []Protocol {
	ps := make([]Protocol, 0, lastProtocol)
	for p := Discourse; p <= lastProtocol; p++ {
		ps = append(ps, p)
	}
	return ps
}

// String returns "read" or "write".
func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	default:
		return "access(" + strconv.Itoa(int(a)) + ")"
	}
}
