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
// next nonce. Within the bound it returns max(next, header+1); a header more
// than MaxNonceJump beyond max(next, nowMS), or one that is not a positive
// decimal integer, is an error and leaves next unchanged.
func ApplyMaxSeenNonce(next, nowMS int64, header string) (int64, error) {
	header = strings.TrimSpace(header)
	v, err := strconv.ParseInt(header, 10, 64)
	if err != nil || v < 1 || v > MaxSafeInteger || header[0] == '+' {
		return next, fmt.Errorf("Max-Seen-Nonce %q is not a positive safe integer", truncate(header, 40))
	}
	if v > max(next, nowMS)+MaxNonceJump {
		return next, fmt.Errorf("Max-Seen-Nonce %d is more than 2^32 beyond the local sequence (%d); refusing to apply it", v, max(next, nowMS))
	}
	if v >= next {
		return v + 1, nil
	}
	return next, nil
}
