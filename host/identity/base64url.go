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

// ValidBase64URLLen reports whether s is a canonical base64url string that
// decodes to exactly n bytes: DecodeBase64URLLen without the result, and,
// for n up to 64, without allocating (the hashes and signatures of every
// record synced are checked with it).
func ValidBase64URLLen(s string, n int) bool {
	var dst [64]byte
	if n < 0 || n > len(dst) {
		_, err := DecodeBase64URLLen(s, n)
		return err == nil
	}
	return decodeBase64URLInto(dst[:n], s)
}

// decodeBase64URLInto decodes s into dst when s is a canonical base64url
// string of exactly len(dst) bytes, and reports whether it is:
// DecodeBase64URLLen into a caller's buffer (of at most 64 bytes).
func decodeBase64URLInto(dst []byte, s string) bool {
	// A canonical encoding of n bytes has exactly this length (the round
	// trip below compares with it).
	if len(dst) > 64 || len(s) != base64.RawURLEncoding.EncodedLen(len(dst)) {
		return false
	}
	var src, enc [88]byte // the encoding of 64 bytes is 86 characters
	var out [66]byte      // Decode may write up to 3*len(s)/4 bytes
	copy(src[:], s)
	m, err := base64.RawURLEncoding.Strict().Decode(out[:], src[:len(s)])
	if err != nil || m != len(dst) {
		return false
	}
	base64.RawURLEncoding.Encode(enc[:len(s)], out[:m])
	if string(enc[:len(s)]) != s {
		return false
	}
	copy(dst, out[:m])
	return true
}

// EqualBase64URL reports whether s is the base64url encoding (no padding)
// of b, without allocating for b of up to 64 bytes.
func EqualBase64URL(b []byte, s string) bool {
	var buf [88]byte
	if len(s) != base64.RawURLEncoding.EncodedLen(len(b)) {
		return false
	}
	if len(s) > len(buf) {
		return EncodeBase64URL(b) == s
	}
	base64.RawURLEncoding.Encode(buf[:len(s)], b)
	return string(buf[:len(s)]) == s
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
