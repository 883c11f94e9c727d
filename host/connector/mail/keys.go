package mail

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha3"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"

	"apconnect/host/engine"
	"apconnect/host/identity"
	proto "apconnect/host/proto/mail"
)

// Mailbox secrets at rest (docs/SECURITY.md, "Agent Mail keys").
//
// A mailbox's X25519 secret is stored only sealed, with XChaCha20-Poly1305
// under a key derived from the agent's own Ed25519 key, so it is exactly as
// protected as that key: a passphrase-protected key file protects it, a
// development key's warning covers it, and nothing stored beside the
// database opens it.
//
// The sealing key is HKDF-SHA256 of an Ed25519 signature: the signer signs
// the digest SHA3-256(sealDomain || 0x00 || Agent ID), and that signature
// (never stored, sent or logged) is the HKDF input keying material, with
// the salt sealSalt and the Agent ID as info. Ed25519 signatures are
// deterministic (RFC 8032 5.1.6), so the same key derives the same sealing
// key in every process; without the private key the signature — hence the
// sealing key — cannot be computed. The digest can never be an event's
// (those are SHA3-256 of JCS of a JSON object, which starts with "{"; this
// one's preimage starts with the domain), so the signature is never valid
// for anything else the agent signs, and it is never shown to anyone.
//
// A sealed secret is 0x01 || 24-byte random nonce || ciphertext and tag;
// its associated data binds it to the agent, the mailbox and the public
// key, so a sealed secret moved to another row, or to another agent's
// database, does not open.

const (
	sealDomain  = "apconnect agent-mail key sealing v1"
	sealSalt    = "apconnect/mail-keys"
	sealVersion = 1
)

// sealer seals and opens mailbox secrets of one agent.
type sealer struct {
	agentID string
	key     []byte // 32 bytes, derived, in memory only
}

// newSealer derives the sealing key from the agent's signer.
func newSealer(s identity.Signer) (*sealer, error) {
	digest := sha3.Sum256(append([]byte(sealDomain+"\x00"), s.AgentID()...))
	sig := s.SignDigest(digest[:])
	if len(sig) != 64 {
		return nil, errors.New("mail: the signer gave no Ed25519 signature to derive the key-sealing key from")
	}
	key, err := hkdf.Key(sha256.New, sig, []byte(sealSalt), s.AgentID(), chacha20poly1305.KeySize)
	clear(sig)
	if err != nil {
		return nil, err
	}
	return &sealer{agentID: s.AgentID(), key: key}, nil
}

// sealing returns the module's sealer, derived once.
func (m *Module) sealing() (*sealer, error) {
	m.sealOnce.Do(func() { m.sealer, m.sealErr = newSealer(m.Signer()) })
	return m.sealer, m.sealErr
}

func (s *sealer) aad(mailboxID, publicKey string) []byte {
	return []byte("apconnect agent-mail key v1\x00" + s.agentID + "\x00" + mailboxID + "\x00" + publicKey)
}

// seal seals a mailbox key's secret for storage.
func (s *sealer) seal(mailboxID string, k *proto.Key) ([]byte, error) {
	aead, err := chacha20poly1305.NewX(s.key)
	if err != nil {
		return nil, err
	}
	secret := k.Secret()
	defer clear(secret)
	out := make([]byte, 1+chacha20poly1305.NonceSizeX, 1+chacha20poly1305.NonceSizeX+len(secret)+aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return aead.Seal(out, out[1:], secret, s.aad(mailboxID, k.PublicKey())), nil
}

// open opens a sealed secret stored for (mailboxID, publicKey) and checks
// that it is that public key's secret.
func (s *sealer) open(mailboxID, publicKey string, sealed []byte) (*proto.Key, error) {
	aead, err := chacha20poly1305.NewX(s.key)
	if err != nil {
		return nil, err
	}
	n := 1 + chacha20poly1305.NonceSizeX
	if len(sealed) < n+aead.Overhead() || sealed[0] != sealVersion {
		return nil, errSealed
	}
	secret, err := aead.Open(nil, sealed[1:n], sealed[n:], s.aad(mailboxID, publicKey))
	if err != nil {
		return nil, errSealed
	}
	defer clear(secret)
	k, err := proto.KeyFromSecret(secret)
	if err != nil || k.PublicKey() != publicKey {
		return nil, errSealed
	}
	return k, nil
}

// errSealed: a stored secret that does not open with this agent's key.
var errSealed = &engine.Error{Code: proto.CodeInvalidPrivateKey,
	Message: "a stored mailbox key does not open with this agent's key (a database of another key, or a damaged row)"}

// sealKey seals k for mailboxID.
func (m *Module) sealKey(mailboxID string, k *proto.Key) ([]byte, error) {
	s, err := m.sealing()
	if err != nil {
		return nil, engine.Wrap(err)
	}
	b, err := s.seal(mailboxID, k)
	if err != nil {
		return nil, engine.Wrap(fmt.Errorf("sealing a mailbox key: %w", err))
	}
	return b, nil
}

// openKey opens a stored sealed key.
func (m *Module) openKey(mailboxID, publicKey string, sealed []byte) (*proto.Key, error) {
	s, err := m.sealing()
	if err != nil {
		return nil, engine.Wrap(err)
	}
	return s.open(mailboxID, publicKey, sealed)
}
