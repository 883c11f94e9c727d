package identity

import (
	"encoding/base64"
	"errors"
)

// ErrNonCanonicalBase64 is returned when a base64url string does not survive a
// decode/encode round trip: padding, characters outside the URL-safe alphabet,
// or non-zero trailing bits.
var ErrNonCanonicalBase64 = errors.New("base64url value is not canonical (unpadded URL-safe alphabet, zero trailing bits)")

// EncodeBase64URL encodes b as base64url without padding (Agent Identity 4.2).
func EncodeBase64URL(b []byte) string {
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeBase64URL decodes a canonical base64url string without padding. It
// rejects every input whose re-encoding differs from s, so one byte string has
// exactly one accepted text form.
func DecodeBase64URL(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, ErrNonCanonicalBase64
	}
	// Strict() already rejects non-zero trailing bits; the round trip guards
	// against any other leniency (for example embedded newlines, which the
	// standard decoder skips).
	var buf [128]byte
	if string(base64.RawURLEncoding.AppendEncode(buf[:0], b)) != s {
		return nil, ErrNonCanonicalBase64
	}
	return b, nil
}

// DecodeBase64URLLen decodes a canonical base64url string that must decode to
// exactly n bytes.
func DecodeBase64URLLen(s string, n int) ([]byte, error) {
	b, err := DecodeBase64URL(s)
	if err != nil {
		return nil, err
	}
	if len(b) != n {
		return nil, errors.New("base64url value decodes to the wrong length")
	}
	return b, nil
}
