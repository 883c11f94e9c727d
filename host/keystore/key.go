package keystore

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"apconnect/host/identity"
)

// SeedSize is the size of an Ed25519 seed (the private key as stored).
const SeedSize = ed25519.SeedSize

// Key is an agent's Ed25519 key pair held in memory. The zero value is an
// empty key with no Agent ID that cannot sign.
//
// Every way of printing or encoding a Key (fmt verbs, String, GoString,
// encoding/json, log/slog) shows the Agent ID only. The private key is
// reachable only through a closure: fmt's reflection prints a func as an
// address and cannot look inside, so even a struct holding a Key in an
// unexported field, printed with any verb (including a bad one, for which fmt
// dumps pointers), never shows the bytes.
type Key struct {
	agentID     string
	pub         ed25519.PublicKey
	unencrypted bool
	sk          func() *secret // nil for the zero Key
}

// secret holds the private key; see Key.
type secret struct {
	priv  ed25519.PrivateKey
	wiped bool
}

// secret returns the live secret, or nil for an empty or wiped Key.
func (k Key) secret() *secret {
	if k.sk == nil {
		return nil
	}
	if s := k.sk(); !s.wiped {
		return s
	}
	return nil
}

// The host signs events through identity.Signer; a Key is one.
var _ identity.Signer = (*Key)(nil)

// Generate returns a new key whose seed is read from crypto/rand, or from the
// reader given with WithRand.
func Generate(opts ...Option) (*Key, error) {
	o := buildOptions(opts)
	seed := make([]byte, SeedSize)
	defer wipe(seed)
	if _, err := io.ReadFull(o.rand, seed); err != nil {
		return nil, newErr(CodeIO, "", "cannot read random bytes for a new seed", err)
	}
	return FromSeed(seed)
}

// FromSeed returns the key for a 32-byte Ed25519 seed. The seed is copied;
// the caller may wipe its own slice afterwards.
func FromSeed(seed []byte) (*Key, error) {
	if len(seed) != SeedSize {
		return nil, newErr(CodeInvalidSeed, "", fmt.Sprintf("seed must be %d bytes, got %d", SeedSize, len(seed)), nil)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	s := &secret{priv: priv}
	return &Key{
		agentID: identity.AgentIDFromPublicKey(pub),
		pub:     pub,
		sk:      func() *secret { return s },
	}, nil
}

// ParseSeed decodes a seed given as text: 64 hexadecimal digits (either case)
// or 43 characters of canonical unpadded base64url. Surrounding white space
// is ignored. Errors never repeat the input.
func ParseSeed(text string) ([]byte, error) {
	s := strings.TrimSpace(text)
	switch len(s) {
	case 2 * SeedSize:
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, newErr(CodeInvalidSeed, "", "seed has 64 characters but is not hexadecimal", nil)
		}
		return b, nil
	case 43:
		b, err := identity.DecodeBase64URLLen(s, SeedSize)
		if err != nil {
			return nil, newErr(CodeInvalidSeed, "", "seed has 43 characters but is not canonical unpadded base64url", nil)
		}
		return b, nil
	default:
		return nil, newErr(CodeInvalidSeed, "", "seed must be 32 bytes written as 64 hexadecimal digits or 43 base64url characters (got "+strconv.Itoa(len(s))+" characters)", nil)
	}
}

// Import is ParseSeed followed by FromSeed.
func Import(text string) (*Key, error) {
	seed, err := ParseSeed(text)
	if err != nil {
		return nil, err
	}
	defer wipe(seed)
	return FromSeed(seed)
}

// AgentID returns the did:agent: identifier of the key.
func (k Key) AgentID() string { return k.agentID }

// PublicKey returns a copy of the Ed25519 public key.
func (k Key) PublicKey() ed25519.PublicKey {
	return append(ed25519.PublicKey(nil), k.pub...)
}

// Unencrypted reports whether the key was loaded from an unencrypted
// development key file. `apconnect doctor` warns about such keys every time.
func (k Key) Unencrypted() bool { return k.unencrypted }

// Sign signs msg with Ed25519 (RFC 8032, pure). It panics on an empty or
// wiped Key, as ed25519.Sign does on a malformed private key.
func (k Key) Sign(msg []byte) []byte {
	s := k.secret()
	if s == nil {
		panic("keystore: Sign called on an empty or wiped Key")
	}
	return ed25519.Sign(s.priv, msg)
}

// SignDigest signs a 32-byte event hash; it makes Key an identity.Signer.
func (k Key) SignDigest(digest []byte) []byte { return k.Sign(digest) }

// PrivateKeyForSigning returns the raw Ed25519 private key (seed followed by
// public key) for code that must hand it to another signing API, or nil for
// an empty or wiped Key. The result is the live key: never log, print, store or return it to a tool. Prefer
// Sign or SignDigest.
func (k Key) PrivateKeyForSigning() ed25519.PrivateKey {
	if s := k.secret(); s != nil {
		return s.priv
	}
	return nil
}

// Wipe overwrites the private key bytes with zeros. Neither this Key nor any
// copy of it can sign afterwards (Sign panics). It is a best-effort hygiene
// measure: copies the Go runtime made earlier are out of its reach.
func (k Key) Wipe() {
	if s := k.secret(); s != nil {
		wipe(s.priv)
		s.wiped = true
	}
}

// String returns the Agent ID.
func (k Key) String() string {
	if k.agentID == "" {
		return "keystore.Key(empty)"
	}
	return k.agentID
}

// GoString returns keystore.Key{AgentID: "…"}; used by %#v.
func (k Key) GoString() string {
	return "keystore.Key{AgentID: " + strconv.Quote(k.agentID) + "}"
}

// Format makes every fmt verb print the Agent ID (%#v prints GoString, %q a
// quoted Agent ID), so no verb, flag or width reveals key material.
func (k Key) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, k.GoString())
	case verb == 'q':
		io.WriteString(f, strconv.Quote(k.String()))
	default:
		io.WriteString(f, k.String())
	}
}

// MarshalJSON encodes the key as {"agent_id": "…"}.
func (k Key) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		AgentID string `json:"agent_id"`
	}{k.agentID})
}

// LogValue makes log/slog record the Agent ID only.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// wipe zeroes b.
func wipe(b []byte) {
	clear(b)
}

// options are the settings Option functions change.
type options struct {
	rand io.Reader
	kdf  KDFParams
}

// Option changes how keys are generated or saved.
type Option func(*options)

// WithRand makes Generate and Save read randomness (seed, salt, nonce) from
// r instead of crypto/rand. For tests.
func WithRand(r io.Reader) Option { return func(o *options) { o.rand = r } }

// WithKDFParams makes Save derive the file key with p instead of
// DefaultKDFParams. Tests use cheap parameters; p must still be within the
// load bounds (see KDFParams.Check).
func WithKDFParams(p KDFParams) Option { return func(o *options) { o.kdf = p } }

func buildOptions(opts []Option) options {
	o := options{rand: rand.Reader, kdf: DefaultKDFParams()}
	for _, fn := range opts {
		fn(&o)
	}
	return o
}
