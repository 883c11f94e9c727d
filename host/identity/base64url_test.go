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
