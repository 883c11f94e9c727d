package identity

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxNonceJump bounds how far one Max-Seen-Nonce header may advance a client's
// next nonce beyond max(next, now_ms) (section 6.2), so a faulty or hostile
// service cannot exhaust the shared sequence.
const MaxNonceJump = 1 << 32

// NextNonce returns the nonce for an event created at nowMS after last was
// used: max(last+1, nowMS) (section 6.2). It fails only when the sequence is
// exhausted.
func NextNonce(last, nowMS int64) (int64, error) {
	n := max(last+1, nowMS, 1)
	if n > MaxSafeInteger || last >= MaxSafeInteger {
		return 0, fmt.Errorf("nonce sequence exhausted (last %d)", last)
	}
	return n, nil
}

// ApplyMaxSeenNonce applies a Max-Seen-Nonce response header to a client's
// next nonce (section 6.2, with the bound of the reference SDK 0.12.6). Let
// floor = max(next, nowMS). A header v is refused when v+1 > floor+2^32 (one
// answer may move the sequence by at most 2^32) or v >= 2^53−1 (v+1 would not
// be a valid nonce); otherwise the result is max(next, v+1). A refused or
// malformed header (anything but ASCII digits naming a positive integer) is
// an error and leaves next unchanged.
func ApplyMaxSeenNonce(next, nowMS int64, header string) (int64, error) {
	if header == "" || len(header) > 16 || strings.Trim(header, "0123456789") != "" {
		return next, fmt.Errorf("Max-Seen-Nonce %q is not a decimal integer", truncate(header, 40))
	}
	v, err := strconv.ParseInt(header, 10, 64)
	if err != nil || v < 1 {
		return next, fmt.Errorf("Max-Seen-Nonce %q is not a positive integer", truncate(header, 40))
	}
	if v >= MaxSafeInteger {
		return next, fmt.Errorf("Max-Seen-Nonce %d leaves no valid nonce after it; refusing to apply it", v)
	}
	if floor := max(next, nowMS); v+1 > floor+MaxNonceJump {
		return next, fmt.Errorf("Max-Seen-Nonce %d would move the local sequence (%d) by more than 2^32; refusing to apply it", v, floor)
	}
	if v >= next {
		return v + 1, nil
	}
	return next, nil
}
