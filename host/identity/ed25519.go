package identity

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
)

// Errors returned by VerifyStrict, one per rule of Agent Identity 3.1 that a
// signature can break.
var (
	ErrBadKeyLength        = errors.New("ed25519: public key must be 32 bytes")
	ErrBadSignatureLength  = errors.New("ed25519: signature must be 64 bytes")
	ErrNonCanonicalKey     = errors.New("ed25519: public key A is not a canonical encoding")
	ErrNonCanonicalR       = errors.New("ed25519: signature point R is not a canonical encoding")
	ErrSmallOrderKey       = errors.New("ed25519: public key A is a point of small order")
	ErrSmallOrderR         = errors.New("ed25519: signature point R is a point of small order")
	ErrScalarNotReduced    = errors.New("ed25519: signature scalar S is not reduced (S >= L)")
	ErrSignatureMismatch   = errors.New("ed25519: signature does not verify")
	errSmallOrderTableInit = errors.New("bad small-order table")
)

// fieldPrime is p = 2^255 - 19, little-endian.
var fieldPrime = [32]byte{
	0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
}

// groupOrder is L = 2^252 + 27742317777372353535851937790883648493, little-endian.
var groupOrder = [32]byte{
	0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
}

// smallOrderY lists the y-coordinates (sign bit cleared) of the points of
// small order, exactly as Appendix B gives them.
var smallOrderY = mustHexList(
	"0100000000000000000000000000000000000000000000000000000000000000", // order 1
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2 (p-1)
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
)

func mustHexList(hs ...string) [][32]byte {
	out := make([][32]byte, len(hs))
	for i, h := range hs {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 32 {
			panic(errSmallOrderTableInit)
		}
		copy(out[i][:], b)
	}
	return out
}

// lessLE reports whether the little-endian numbers a < b.
func lessLE(a, b *[32]byte) bool {
	for i := 31; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// yCoordinate returns the encoding with the sign bit cleared.
func yCoordinate(enc []byte) [32]byte {
	var y [32]byte
	copy(y[:], enc)
	y[31] &= 0x7f
	return y
}

// checkPointEncoding applies rules 1 and 2 of section 3.1 to a point encoding.
func checkPointEncoding(enc []byte, nonCanonical, smallOrder error) error {
	y := yCoordinate(enc)
	if !lessLE(&y, &fieldPrime) {
		return nonCanonical
	}
	for i := range smallOrderY {
		if y == smallOrderY[i] {
			return smallOrder
		}
	}
	return nil
}

// CheckPublicKey applies the point rules of section 3.1 to a public key: a
// key that fails them can never produce a valid signature.
func CheckPublicKey(pub []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return ErrBadKeyLength
	}
	return checkPointEncoding(pub, ErrNonCanonicalKey, ErrSmallOrderKey)
}

// VerifyStrict verifies an Ed25519 signature under the four rules of Agent
// Identity 3.1: canonical A and R, neither of small order, S < L, and the
// cofactorless equation [S]B = R + [k]A. It returns nil only for a valid
// signature and otherwise names the rule that failed.
//
// crypto/ed25519 alone is cofactorless and rejects S >= L, but it accepts
// non-canonical and small-order public keys; the checks here close that gap
// so every conforming verifier accepts exactly the same signatures.
func VerifyStrict(pub, msg, sig []byte) error {
	if err := CheckPublicKey(pub); err != nil {
		return err
	}
	if len(sig) != ed25519.SignatureSize {
		return ErrBadSignatureLength
	}
	if err := checkPointEncoding(sig[:32], ErrNonCanonicalR, ErrSmallOrderR); err != nil {
		return err
	}
	var s [32]byte
	copy(s[:], sig[32:])
	if !lessLE(&s, &groupOrder) {
		return ErrScalarNotReduced
	}
	if !ed25519.Verify(ed25519.PublicKey(pub), msg, sig) {
		return ErrSignatureMismatch
	}
	return nil
}
