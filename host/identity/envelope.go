package identity

import (
	"crypto/ed25519"
	"crypto/sha3"
	"strings"

	itext "apconnect/host/text"
)

// Envelope is a signed event envelope (section 5): the event, its hash (the
// event ID) and the Ed25519 signature over the raw event hash.
type Envelope struct {
	Hash      string `json:"hash"`
	Event     Event  `json:"event"`
	Signature string `json:"signature"`
}

// envelopeFields is the closed set of envelope members.
var envelopeFields = map[string]bool{"hash": true, "event": true, "signature": true}

// ParseEnvelope runs steps 1–5 of section 6.1 on a JSON text: strict parsing,
// the closed envelope and event shapes, the recomputed hash, the actor's key
// and the strict signature. The returned envelope is authentic; timestamps,
// nonces and protocol rules are the caller's to check.
func ParseEnvelope(data []byte) (*Envelope, error) {
	v, err := ParseStrict(data)
	if err != nil {
		return nil, eventError(err, "")
	}
	env, err := EnvelopeFromValue(v, "")
	if err != nil {
		return nil, err
	}
	if err := env.Verify(); err != nil {
		return nil, err
	}
	return env, nil
}

// EnvelopeFromValue checks the shape of a parsed envelope without verifying
// its hash or signature; call Verify for that. pointer locates the envelope
// in its document for error messages.
func EnvelopeFromValue(v any, pointer string) (*Envelope, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer, "envelope must be a JSON object")
	}
	for k := range obj {
		if !envelopeFields[k] {
			return nil, newError(CodeInvalidEvent, pointer+"/"+itext.EscapePointer(k), "unknown envelope field %q", truncate(k, 80))
		}
	}
	ev, ok := obj["event"]
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer, "missing required field \"event\"")
	}
	env := new(Envelope)
	if err := eventFromValue(ev, pointer+"/event", &env.Event); err != nil {
		return nil, err
	}
	hash, ok := obj["hash"].(string)
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer+"/hash", "hash must be a base64url string")
	}
	sig, ok := obj["signature"].(string)
	if !ok {
		return nil, newError(CodeInvalidEvent, pointer+"/signature", "signature must be a base64url string")
	}
	env.Hash, env.Signature = hash, sig
	return env, nil
}

// UnmarshalJSON strictly parses an envelope and checks its shape. It does not
// verify the hash or signature: call Verify, or use ParseEnvelope.
func (env *Envelope) UnmarshalJSON(data []byte) error {
	v, err := ParseStrict(data)
	if err != nil {
		return eventError(err, "")
	}
	e, err := EnvelopeFromValue(v, "")
	if err != nil {
		return err
	}
	*env = *e
	return nil
}

// MarshalJSON writes the envelope with its event in canonical form.
func (env Envelope) MarshalJSON() ([]byte, error) {
	return Canonicalize(env.Value())
}

// Value returns the envelope as a JSON object value.
func (env *Envelope) Value() map[string]any {
	return map[string]any{"hash": env.Hash, "event": env.Event.Object(), "signature": env.Signature}
}

// Verify recomputes the event hash, compares it with Hash and verifies the
// signature under section 3.1. Errors carry invalid_event_hash,
// invalid_signature or invalid_actor.
func (env *Envelope) Verify() error {
	_, err := env.VerifyCanonical()
	return err
}

// VerifyCanonical is Verify that also returns JCS(event), the bytes it
// hashed, for a caller that serializes the envelope next (AppendCanonical)
// and would otherwise canonicalize the event a second time.
func (env *Envelope) VerifyCanonical() ([]byte, error) {
	return env.VerifyAppend(make([]byte, 0, 512))
}

// VerifyAppend is VerifyCanonical writing JCS(event) at the end of b, which
// it returns extended, for a caller that reuses a buffer: the hash and the
// signature are checked over exactly the bytes it appended.
func (env *Envelope) VerifyAppend(b []byte) ([]byte, error) {
	start := len(b)
	b, err := env.Event.appendCanonical(b)
	if err != nil {
		return nil, newError(CodeInvalidEvent, "/event", "cannot canonicalize event: %v", err)
	}
	canon := b[start:]
	digest := sha3.Sum256(canon)
	if !EqualBase64URL(digest[:], env.Hash) {
		return nil, newError(CodeInvalidEventHash, "/hash", "hash does not match the event content")
	}
	// The key and signature are decoded into stack buffers: the same
	// canonical decoding as ParseAgentID and DecodeBase64URLLen, whose
	// errors are reported.
	var pub [ed25519.PublicKeySize]byte
	var sig [ed25519.SignatureSize]byte
	if a := env.Event.Actor; !strings.HasPrefix(a, AgentIDPrefix) || len(a) != agentIDLen || !decodeBase64URLInto(pub[:], a[len(AgentIDPrefix):]) {
		if _, err := env.Event.publicKey(); err != nil {
			return nil, err
		}
		return nil, &Error{Code: CodeInvalidActor, Pointer: "/event/actor", Message: "actor is not a canonical Agent ID"}
	}
	if !decodeBase64URLInto(sig[:], env.Signature) {
		return nil, newError(CodeInvalidSignature, "/signature", "signature must be 64 bytes in canonical base64url")
	}
	if err := VerifyStrict(pub[:], digest[:], sig[:]); err != nil {
		return nil, &Error{Code: CodeInvalidSignature, Pointer: "/signature", Message: err.Error(), Err: err}
	}
	return b, nil
}

// AppendCanonical appends JCS(envelope) to b, given canonicalEvent =
// JCS(env.Event) (from VerifyCanonical): the same bytes as MarshalJSON.
func (env *Envelope) AppendCanonical(b, canonicalEvent []byte) []byte {
	b = append(b, `{"event":`...)
	b = append(b, canonicalEvent...)
	b = append(b, `,"hash":`...)
	b = appendCanonicalString(b, env.Hash)
	b = append(b, `,"signature":`...)
	b = appendCanonicalString(b, env.Signature)
	return append(b, '}')
}

// Signer signs event hashes for one Agent ID. The host's key store implements
// it; nothing else does, and no tool ever receives one.
type Signer interface {
	// AgentID returns the did:agent: form of the signing key.
	AgentID() string
	// SignDigest signs the raw 32-byte event hash of an event the caller has
	// built and checked itself.
	SignDigest(digest []byte) []byte
}

// KeySigner signs with an in-memory Ed25519 private key.
type KeySigner struct{ key ed25519.PrivateKey }

// NewKeySigner wraps an Ed25519 private key.
func NewKeySigner(key ed25519.PrivateKey) *KeySigner { return &KeySigner{key: key} }

// AgentID returns the Agent ID of the key.
func (s *KeySigner) AgentID() string {
	return AgentIDFromPublicKey(s.key.Public().(ed25519.PublicKey))
}

// SignDigest signs a 32-byte event hash.
func (s *KeySigner) SignDigest(digest []byte) []byte { return ed25519.Sign(s.key, digest) }

// String never prints key material.
func (s *KeySigner) String() string { return "KeySigner(" + s.AgentID() + ")" }

// SignEvent checks the event's closed shape, computes its hash from the full
// event (never a digest supplied from elsewhere, section 5.3) and signs it.
// The event's actor must be the signer's Agent ID.
func SignEvent(s Signer, ev Event) (*Envelope, error) {
	if ev.Actor != s.AgentID() {
		return nil, newError(CodeInvalidActor, "/event/actor", "actor %s is not the signing key %s", truncate(ev.Actor, 80), s.AgentID())
	}
	// Round-trip through the shape check so a signer never signs an event a
	// receiver would reject as malformed.
	b, err := Canonicalize(ev.Object())
	if err != nil {
		return nil, newError(CodeInvalidEvent, "/event", "cannot canonicalize event: %v", err)
	}
	v, err := ParseStrict(b)
	if err != nil {
		return nil, eventError(err, "/event")
	}
	checked, err := EventFromValue(v, "/event")
	if err != nil {
		return nil, err
	}
	digest := sha3.Sum256(b)
	sig := s.SignDigest(digest[:])
	return &Envelope{Hash: EncodeBase64URL(digest[:]), Event: *checked, Signature: EncodeBase64URL(sig)}, nil
}
