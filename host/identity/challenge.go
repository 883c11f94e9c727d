package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"io"
)

// ControllerChallengePrefix opens an Agent Delegation controller
// registration challenge (Agent Delegation 4.3, as the reference SDK 0.12.6
// defines it): the prefix, then 43 opaque base64url characters, 88 in all.
const ControllerChallengePrefix = "agent-delegation/1.0:controller-registration:"

// controllerChallengeLen is the whole challenge's length.
const controllerChallengeLen = len(ControllerChallengePrefix) + 43

// IsControllerChallenge reports whether s has the fixed challenge shape:
// the prefix followed by exactly 43 characters of the base64url alphabet.
func IsControllerChallenge(s string) bool {
	if len(s) != controllerChallengeLen || s[:len(ControllerChallengePrefix)] != ControllerChallengePrefix {
		return false
	}
	for i := len(ControllerChallengePrefix); i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// NewControllerChallenge returns a fresh challenge for a principal host to
// issue: the prefix and 32 random bytes from r (crypto/rand when nil) in
// base64url. Binding it to the principal, key, source and policy being
// registered, its single use and its expiry are the host's to keep.
func NewControllerChallenge(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [32]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	return ControllerChallengePrefix + EncodeBase64URL(b[:]), nil
}

// SignControllerChallenge signs a controller registration challenge over
// its exact UTF-8 bytes and returns the base64url signature. Any string
// without the challenge shape is refused (invalid_request), so a signer
// never becomes an arbitrary-message signing oracle: the prefix separates
// these signatures from event signatures, which are over 32-byte hashes.
func SignControllerChallenge(s Signer, challenge string) (string, error) {
	if !IsControllerChallenge(challenge) {
		return "", newError(CodeInvalidRequest, "", "not an agent-delegation/1.0 controller registration challenge")
	}
	return EncodeBase64URL(s.SignDigest([]byte(challenge))), nil
}

// VerifyControllerChallenge verifies a registration proof: signature (64
// bytes in canonical base64url) over the challenge's exact bytes by the key
// of agentID, under the strict rules of section 3.1. Matching the challenge
// to the one the host issued, and its expiry, remain the host's checks.
// Errors carry invalid_request (not a challenge), invalid_actor or
// invalid_signature.
func VerifyControllerChallenge(agentID, challenge, signature string) error {
	if !IsControllerChallenge(challenge) {
		return newError(CodeInvalidRequest, "", "not an agent-delegation/1.0 controller registration challenge")
	}
	pub, err := ParseAgentID(agentID)
	if err != nil {
		return &Error{Code: CodeInvalidActor, Message: err.Error(), Err: err}
	}
	sig, err := DecodeBase64URLLen(signature, ed25519.SignatureSize)
	if err != nil {
		return newError(CodeInvalidSignature, "", "signature must be 64 bytes in canonical base64url")
	}
	if err := VerifyStrict(pub, []byte(challenge), sig); err != nil {
		return &Error{Code: CodeInvalidSignature, Message: err.Error(), Err: err}
	}
	return nil
}
