package mail

import (
	"crypto/ecdh"
	"crypto/hpke"
	"crypto/rand"

	"apconnect/host/identity"
)

// The HPKE suite of Agent Mail (RFC 9180 base mode): DHKEM(X25519,
// HKDF-SHA256) 0x0020, HKDF-SHA256 0x0001, ChaCha20Poly1305 0x0003, with
// info = Protocol, one message per context.
var (
	suiteKEM  = hpke.DHKEM(ecdh.X25519())
	suiteKDF  = hpke.HKDFSHA256()
	suiteAEAD = hpke.ChaCha20Poly1305()
	hpkeInfo  = []byte(Protocol)
)

// KeySize is the length of an X25519 secret, public key and encapsulated
// key.
const KeySize = 32

// probeSecret is the fixed, public scalar the SDK decapsulates a card's
// public key with to test it: a low-order key gives the all-zero shared
// secret, which X25519 refuses. It only validates; nothing is encrypted
// with it.
var probeSecret = func() *ecdh.PrivateKey {
	var b [KeySize]byte
	for i := range b {
		b[i] = 42
	}
	k, err := ecdh.X25519().NewPrivateKey(b[:])
	if err != nil {
		panic(err)
	}
	return k
}()

// Key is a mailbox's X25519 recipient key, independent of the identity
// key. It keeps the 32 secret bytes exactly as generated or given (raw, not
// clamped), as the SDK stores them: Secret returns them, and KeyFromSecret
// of them gives the same key back. It never prints its secret.
type Key struct {
	secret [KeySize]byte
	priv   hpke.PrivateKey
	public string
}

// GenerateKey draws a fresh recipient key.
func GenerateKey() (*Key, error) {
	var b [KeySize]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return KeyFromSecret(b[:])
}

// KeyFromSecret restores a key from its 32 raw secret bytes (invalid_request
// for another length).
func KeyFromSecret(secret []byte) (*Key, error) {
	if len(secret) != KeySize {
		return nil, fail(CodeInvalidRequest, "", "an X25519 secret is %d bytes, not %d", KeySize, len(secret))
	}
	ek, err := ecdh.X25519().NewPrivateKey(secret)
	if err != nil {
		return nil, fail(CodeInvalidRequest, "", "X25519 secret: %v", err)
	}
	priv, err := hpke.NewDHKEMPrivateKey(ek)
	if err != nil {
		return nil, fail(CodeInvalidRequest, "", "X25519 secret: %v", err)
	}
	k := &Key{priv: priv, public: identity.EncodeBase64URL(ek.PublicKey().Bytes())}
	copy(k.secret[:], secret)
	return k, nil
}

// Secret returns a copy of the raw secret bytes. SENSITIVE: seal them at
// rest and never put them in a result, a log or a snapshot a relay sees.
func (k *Key) Secret() []byte { return append([]byte(nil), k.secret[:]...) }

// PublicKey returns the base64url public key a card publishes.
func (k *Key) PublicKey() string { return k.public }

// String never prints the secret.
func (k *Key) String() string { return "mail.Key(" + k.public + ")" }

// CheckPublicKey checks a card's public_key as the SDK does: 32 bytes of
// canonical base64url, and a probe decapsulation that refuses low-order
// points (the all-zero key among them), which stdlib's KEM.NewPublicKey
// alone accepts. Refusals are invalid_event.
func CheckPublicKey(b64 string) error {
	raw, err := identity.DecodeBase64URLLen(b64, KeySize)
	if err != nil {
		return fail(CodeInvalidEvent, "", "public_key: %v", err)
	}
	return probe(raw)
}

// probe decapsulates raw with the probe secret.
func probe(raw []byte) error {
	pub, err := ecdh.X25519().NewPublicKey(raw)
	if err != nil {
		return fail(CodeInvalidEvent, "", "invalid X25519 key: %v", err)
	}
	if _, err := probeSecret.ECDH(pub); err != nil {
		return fail(CodeInvalidEvent, "", "unusable X25519 key (low order)")
	}
	return nil
}

// hpkeSeal encrypts plaintext to the card key publicKey with aad, in a
// single-shot base-mode context: it returns the encapsulated key and the
// ciphertext. The key is a verified card's, so CheckPublicKey's probe has
// refused a low-order point already (and NewSender's own ECDH would refuse
// one again): no second probe.
func hpkeSeal(publicKey string, aad, plaintext []byte) (enc, ciphertext []byte, err error) {
	raw, err := identity.DecodeBase64URLLen(publicKey, KeySize)
	if err != nil {
		return nil, nil, fail(CodeInvalidEvent, "", "public_key: %v", err)
	}
	pk, err := suiteKEM.NewPublicKey(raw)
	if err != nil {
		return nil, nil, fail(CodeInvalidEvent, "", "encryption failed: %v", err)
	}
	enc, sender, err := hpke.NewSender(pk, suiteKDF, suiteAEAD, hpkeInfo)
	if err != nil {
		return nil, nil, fail(CodeInvalidEvent, "", "encryption failed: %v", err)
	}
	ciphertext, err = sender.Seal(aad, plaintext)
	if err != nil {
		return nil, nil, fail(CodeInvalidEvent, "", "encryption failed: %v", err)
	}
	return enc, ciphertext, nil
}

// open decrypts a single-shot base-mode ciphertext: any failure (a
// low-order enc, a wrong key, tampered bytes or AAD) is invalid_event.
func (k *Key) open(enc, aad, ciphertext []byte) ([]byte, error) {
	r, err := hpke.NewRecipient(enc, k.priv, suiteKDF, suiteAEAD, hpkeInfo)
	if err != nil {
		return nil, fail(CodeInvalidEvent, "/event/payload/enc", "unable to decrypt packet: %v", err)
	}
	pt, err := r.Open(aad, ciphertext)
	if err != nil {
		return nil, fail(CodeInvalidEvent, "/event/payload/ciphertext", "unable to decrypt packet")
	}
	return pt, nil
}
