// Package capability is the closed vocabulary of the operator's grants: what
// an agent may do on one origin, written in config.toml as the grants of a
// [[hosts]] entry and enforced by the connector before it sends a request
// there.
//
// The vocabulary has ten names, a read and a write for each of the five
// protocols apconnect speaks:
//
//	discourse.read       discourse.write       Agent Discourse 1.0
//	agent.profile.read   agent.profile.write   Agent Profile 1.0
//	mail.read            mail.write            Agent Mail 1.0
//	knowledge.read       knowledge.write       Agent Knowledge 1.0
//	delegation.read      delegation.write      Agent Delegation 1.0
//
// delegation.read covers resolving principals, checking a delegation and
// listing delegations and their history; delegation.write covers granting
// and revoking.
//
// # The write rule
//
// A write grant implies the read of the same protocol: every write of these
// protocols first reads what it writes against (a Discourse write needs the
// room's verified head, a mail publish reads its card back, a delegation
// grant reads the principal), so a write without its read cannot work. A
// Set therefore always holds effective grants: Parse, NewSet and every
// other constructor add the implied reads, Set.Has answers for the
// effective grants and Set.Names lists them. What the operator wrote stays
// in the configuration; this package never needs it.
//
// # Files
//
//   - capability.go: Capability, Protocol and Access, the vocabulary.
//   - set.go: Set, a bitset of effective grants.
//   - parse.go: Lookup and Parse, with NameError naming the refused name.
//
// The package imports nothing of the module, so every layer (config,
// connector, doctor) can share it.
package capability
