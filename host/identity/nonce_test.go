package identity

import "testing"

func TestNextNonce(t *testing.T) {
	cases := []struct{ last, now, want int64 }{
		{0, 1000, 1000},
		{1000, 1000, 1001},
		{5000, 1000, 5001}, // clock went backwards: still monotonic
		{0, 0, 1},
	}
	for _, tc := range cases {
		if got, err := NextNonce(tc.last, tc.now); err != nil || got != tc.want {
			t.Errorf("NextNonce(%d, %d) = %d, %v; want %d", tc.last, tc.now, got, err, tc.want)
		}
	}
	if _, err := NextNonce(MaxSafeInteger, 1); err == nil {
		t.Error("exhausted sequence not reported")
	}
}

func TestApplyMaxSeenNonceMalformed(t *testing.T) {
	for _, h := range []string{"", "abc", "-5", "0", "+7", " 7", "7 ", "1.5", "9007199254740991", "9007199254740992", "99999999999999999999"} {
		if got, err := ApplyMaxSeenNonce(10, 1000, h); err == nil || got != 10 {
			t.Errorf("header %q: got %d, %v", h, got, err)
		}
	}
}
