package identity

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"testing"
)

func TestVerifyStrictRules(t *testing.T) {
	s := testSigner(t, "alice")
	pub := s.key.Public().(ed25519.PublicKey)
	msg := []byte("0123456789abcdef0123456789abcdef")
	sig := s.SignDigest(msg)
	if err := VerifyStrict(pub, msg, sig); err != nil {
		t.Fatalf("honest signature: %v", err)
	}
	withR := func(rHex string) []byte {
		r, _ := hex.DecodeString(rHex)
		out := append([]byte{}, r...)
		return append(out, sig[32:]...)
	}
	cases := []struct {
		name string
		pub  []byte
		sig  []byte
		want error
	}{
		{"short key", pub[:31], sig, ErrBadKeyLength},
		{"short signature", pub, sig[:63], ErrBadSignatureLength},
		{"non-canonical A (y = p)", mustHex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), sig, ErrNonCanonicalKey},
		{"non-canonical A with sign bit (y = p+1)", mustHex("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"), sig, ErrNonCanonicalKey},
		{"small-order A (identity)", mustHex("0100000000000000000000000000000000000000000000000000000000000000"), sig, ErrSmallOrderKey},
		{"small-order A (order 2)", mustHex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), sig, ErrSmallOrderKey},
		{"small-order A (order 4, sign bit set)", mustHex("0000000000000000000000000000000000000000000000000000000000000080"), sig, ErrSmallOrderKey},
		{"small-order A (order 8)", mustHex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"), sig, ErrSmallOrderKey},
		{"small-order A (other order 8)", mustHex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"), sig, ErrSmallOrderKey},
		{"non-canonical R", pub, withR("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), ErrNonCanonicalR},
		{"small-order R", pub, withR("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"), ErrSmallOrderR},
		{"S = L", pub, append(append([]byte{}, sig[:32]...), groupOrder[:]...), ErrScalarNotReduced},
		{"wrong message", pub, sig, ErrSignatureMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := msg
			if tc.want == ErrSignatureMismatch {
				m = []byte("another message of 32 bytes....!")
			}
			if err := VerifyStrict(tc.pub, m, tc.sig); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
