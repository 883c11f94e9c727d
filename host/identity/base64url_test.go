package identity

import "testing"

func TestDecodeBase64URL(t *testing.T) {
	good := []string{"", "AA", "AAA", "AAAA", "_-8", "6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"}
	for _, s := range good {
		if _, err := DecodeBase64URL(s); err != nil {
			t.Errorf("%q rejected: %v", s, err)
		}
	}
	bad := []string{"AA==", "AB", "AAB", "A", "a+b/", "AA\nAA", " AA", "AA.", "6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0ix"}
	for _, s := range bad {
		if _, err := DecodeBase64URL(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if _, err := DecodeBase64URLLen("AAAA", 2); err == nil {
		t.Error("wrong length accepted")
	}
}

// TestValidBase64URLLenMatchesDecode holds ValidBase64URLLen to
// DecodeBase64URLLen, and EqualBase64URL to EncodeBase64URL, over
// encodings of every length up to 70 bytes, altered and malformed ones.
func TestValidBase64URLLenMatchesDecode(t *testing.T) {
	cands := []string{"", "A", "AA", "AAA", "AAAA", "AB", "AQ", "AQ==", "A\nA", "_-", "+/"}
	for n := 0; n <= 70; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + n)
		}
		e := EncodeBase64URL(b)
		if !EqualBase64URL(b, e) || (n > 0 && EqualBase64URL(b[1:], e)) || EqualBase64URL(b, e+"A") {
			t.Fatalf("EqualBase64URL of %d bytes", n)
		}
		cands = append(cands, e, e+"A", e[:max(0, len(e)-1)])
		if len(e) > 0 {
			x := []byte(e)
			x[len(x)-1] ^= 1
			cands = append(cands, string(x))
			x[0] = '='
			cands = append(cands, string(x))
		}
	}
	for _, s := range cands {
		for n := -1; n <= 70; n++ {
			_, err := DecodeBase64URLLen(s, n)
			if got := ValidBase64URLLen(s, n); got != (err == nil) {
				t.Fatalf("%q, %d bytes: ValidBase64URLLen %v, DecodeBase64URLLen %v", s, n, got, err)
			}
		}
	}
}
