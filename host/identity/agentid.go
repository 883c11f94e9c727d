package identity

import (
	"crypto/ed25519"
	"fmt"
	"strings"

	itext "apconnect/host/text"
)

// AgentIDPrefix is the fixed prefix of every Agent ID (section 3.2).
const AgentIDPrefix = "did:agent:"

// agentIDLen is the exact length of a canonical Agent ID: the prefix plus 43
// base64url characters for 32 bytes.
const agentIDLen = len(AgentIDPrefix) + 43

// AgentIDFromPublicKey returns the canonical did:agent: form of a 32-byte
// Ed25519 public key.
func AgentIDFromPublicKey(pub ed25519.PublicKey) string {
	return AgentIDPrefix + EncodeBase64URL(pub)
}

// ParseAgentID decodes an Agent ID with every check of section 3.3: the exact
// prefix, base64url without padding, 32 bytes, and a canonical suffix. It does
// not apply the point-level checks of section 3.1; those run when the key
// verifies a signature.
func ParseAgentID(id string) (ed25519.PublicKey, error) {
	if !strings.HasPrefix(id, AgentIDPrefix) {
		return nil, fmt.Errorf("agent id %q: must start with %q", truncate(id, 80), AgentIDPrefix)
	}
	if len(id) != agentIDLen {
		return nil, fmt.Errorf("agent id %q: suffix must be 43 base64url characters (a 32-byte key)", truncate(id, 80))
	}
	b, err := DecodeBase64URLLen(id[len(AgentIDPrefix):], ed25519.PublicKeySize)
	if err != nil {
		return nil, fmt.Errorf("agent id %q: %w", truncate(id, 80), err)
	}
	return ed25519.PublicKey(b), nil
}

// ValidAgentID reports whether id is a canonical Agent ID (ParseAgentID
// would accept it), without allocating.
func ValidAgentID(id string) bool {
	return strings.HasPrefix(id, AgentIDPrefix) && len(id) == agentIDLen &&
		ValidBase64URLLen(id[len(AgentIDPrefix):], ed25519.PublicKeySize)
}

// truncate shortens untrusted text quoted in error messages (text.Truncate,
// under a name that does not clash with this package's text variables).
func truncate(s string, n int) string { return itext.Truncate(s, n) }
