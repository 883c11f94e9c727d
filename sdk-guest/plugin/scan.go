package plugin

import (
	"errors"
	"math/bits"
	"unsafe"
)

// This file is the JSON scanner behind the SDK's decoders.
//
// Why not encoding/json: the host stops runaway plugins with wazero's
// WithCloseOnContextDone, which checks its deadline at every WebAssembly loop
// header. Go's WebAssembly backend implements every jump between basic
// blocks as a branch to the function's entry loop, so every taken branch,
// loop iteration and call of a non-leaf function costs a round trip into the
// host (30-50 ns; a leaf call costs 3.5 ns). encoding/json spends several per
// byte: about 200 µs per record. The primitives below are leaf functions
// (no calls, not even bounds-check panics: indexes are checked by hand, then
// read with unsafe loads), compute with masks instead of branches where they
// can, skip string bodies and structure eight bytes per iteration, parse up
// to sixteen digits without a loop and compare member names as machine
// words. Escaped strings, rare in practice, go through unquote (decoder.go).

var errSyntax = errors.New("plugin: malformed JSON input")

const (
	lsb      = 0x0101010101010101
	msb      = 0x8080808080808080
	bQuote   = 0x2222222222222222 // '"'
	bSlash   = 0x5c5c5c5c5c5c5c5c // '\\'
	bLBrace  = 0x7b7b7b7b7b7b7b7b // '{'
	bRBrace  = 0x7d7d7d7d7d7d7d7d // '}'
	bLSquare = 0x5b5b5b5b5b5b5b5b // '['
	bRSquare = 0x5d5d5d5d5d5d5d5d // ']'
)

// zeroBytes flags (high bit) the bytes of x that are zero; the lowest flag
// is always exact.
func zeroBytes(x uint64) uint64 { return (x - lsb) &^ x & msb }

// at returns b[i]; the caller has checked 0 <= i < len(b).
func at(b []byte, i int) byte {
	return *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

// word returns the eight bytes at b[i:] as a little-endian integer; the
// caller has checked i+8 <= len(b). WebAssembly allows unaligned loads.
func word(b []byte, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch at(b, i) {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// ws is skipSpace without entering a loop when there is no space (the host
// writes compact JSON).
func ws(b []byte, i int) int {
	if i < len(b) && at(b, i) <= ' ' {
		return skipSpace(b, i)
	}
	return i
}

// stringEnd returns the index just after the closing quote of the string
// whose opening quote is at b[i] (-1 if unterminated) and whether the string
// holds escapes.
func stringEnd(b []byte, i int) (int, bool) {
	i++
	escaped := false
	for {
		if i+8 <= len(b) {
			x := word(b, i)
			m := zeroBytes(x^bQuote) | zeroBytes(x^bSlash)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(b) && at(b, i) != '"' && at(b, i) != '\\' {
				i++
			}
			if i >= len(b) {
				return -1, escaped
			}
		}
		if at(b, i) == '"' {
			return i + 1, escaped
		}
		escaped = true
		i += 2
	}
}

// valueEnd returns the index just after the JSON value starting at b[i]
// (no leading space), or -1. Inside objects and arrays it jumps from one
// structural byte to the next eight bytes at a time.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch at(b, i) {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
	default:
		start := i
		for i+8 <= len(b) {
			// A scalar ends at the first delimiter; numbers and literals
			// contain no byte below '0' except '-', '+' and '.'.
			x := word(b, i)
			m := zeroBytes(x^0x2c2c2c2c2c2c2c2c) | zeroBytes(x^bRBrace) | zeroBytes(x^bRSquare) |
				zeroBytes(x^0x2020202020202020) | zeroBytes(x^0x3a3a3a3a3a3a3a3a) |
				zeroBytes(x^0x0a0a0a0a0a0a0a0a) | zeroBytes(x^0x0d0d0d0d0d0d0d0d) | zeroBytes(x^0x0909090909090909)
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				if i == start {
					return -1
				}
				return i
			}
			i += 8
		}
		for i < len(b) {
			switch at(b, i) {
			case ',', '}', ']', ' ', '\t', '\n', '\r', ':':
				if i == start {
					return -1
				}
				return i
			}
			i++
		}
		if i == start {
			return -1
		}
		return i
	}
	depth := 0
	for i < len(b) {
		if i+8 <= len(b) {
			x := word(b, i)
			m := zeroBytes(x^bQuote) | zeroBytes(x^bLBrace) | zeroBytes(x^bRBrace) |
				zeroBytes(x^bLSquare) | zeroBytes(x^bRSquare)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		switch at(b, i) {
		case '"':
			// The string body, inline (a call would cost a host round trip).
			i++
			for {
				if i+8 <= len(b) {
					x := word(b, i)
					m := zeroBytes(x^bQuote) | zeroBytes(x^bSlash)
					if m == 0 {
						i += 8
						continue
					}
					i += bits.TrailingZeros64(m) >> 3
				} else {
					for i < len(b) && at(b, i) != '"' && at(b, i) != '\\' {
						i++
					}
					if i >= len(b) {
						return -1
					}
				}
				if at(b, i) == '"' {
					i++
					break
				}
				i += 2
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

// digits returns the value of the n (1..8) ASCII digits in the low bytes of
// x, first digit lowest.
func digits(x uint64, n int) uint64 {
	x = (x - 0x3030303030303030) << (64 - 8*n) // leading zeros above
	x = (x & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8
	x = (x & 0x00FF00FF00FF00FF) * 6553601 >> 16
	return (x & 0x0000FFFF0000FFFF) * 42949672960001 >> 32
}

// digitRun returns how many of the eight bytes of x, from the lowest, are
// ASCII digits.
func digitRun(x uint64) int {
	m := ((x + 0x4646464646464646) | (x - 0x3030303030303030)) & msb
	return bits.TrailingZeros64(m) >> 3 // 64>>3 == 8 when all are digits
}

// integer parses an unsigned or negative integer of at most 16 digits at
// b[i]. It returns the index after it, or -1.
func integer(b []byte, i int) (int64, int) {
	neg := false
	if i < len(b) && at(b, i) == '-' {
		neg = true
		i++
	}
	var n uint64
	var count int
	if i+16 <= len(b) {
		x := word(b, i)
		k := digitRun(x)
		if k == 0 {
			return 0, -1
		}
		n = digits(x, k)
		count = k
		if k == 8 {
			y := word(b, i+8)
			if k2 := digitRun(y); k2 > 0 {
				if k2 == 8 && i+16 < len(b) && at(b, i+16) >= '0' && at(b, i+16) <= '9' {
					return 0, -1 // more than 16 digits
				}
				n = n*pow10[k2] + digits(y, k2)
				count += k2
			}
		}
		i += count
	} else {
		for i < len(b) && at(b, i) >= '0' && at(b, i) <= '9' && count < 17 {
			n = n*10 + uint64(at(b, i)-'0')
			i++
			count++
		}
		if count == 0 || count > 16 {
			return 0, -1
		}
	}
	if count > 1 && at(b, i-count) == '0' {
		return 0, -1 // leading zero
	}
	if i < len(b) && (at(b, i) == '.' || at(b, i) == 'e' || at(b, i) == 'E') {
		return 0, -1 // not an integer
	}
	if neg {
		return -int64(n), i
	}
	return int64(n), i
}

var pow10 = [9]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// name is a member name packed into machine words for comparison without
// calls. Names longer than 24 bytes never match a packed name.
type name struct {
	a, b, c uint64
	n       int
}

// is compares two packed names field by field (struct equality could call
// the runtime's memequal, a loop).
func (k name) is(o name) bool { return k.a == o.a && k.b == o.b && k.c == o.c && k.n == o.n }

func packKey(s string) name {
	k := name{n: len(s)}
	n := len(s)
	if n > 24 {
		return k
	}
	p := unsafe.Pointer(unsafe.StringData(s))
	load := func(off, cnt int) uint64 {
		// cnt (1..8) bytes at off without reading past the string: one
		// word load ending at the string's end, shifted into place.
		if n >= 8 {
			w := *(*uint64)(unsafe.Add(p, min(off, n-8)))
			shift := 8 * (off - min(off, n-8))
			w >>= shift
			if cnt < 8 {
				w &= 1<<(8*cnt) - 1
			}
			return w
		}
		var w uint64
		for j := 0; j < cnt; j++ {
			w |= uint64(*(*byte)(unsafe.Add(p, off+j))) << (8 * j)
		}
		return w
	}
	switch {
	case n == 0:
	case n <= 8:
		k.a = load(0, n)
	case n <= 16:
		k.a, k.b = load(0, 8), load(8, n-8)
	default:
		k.a, k.b, k.c = load(0, 8), load(8, 8), load(16, n-16)
	}
	return k
}

// keyAt packs the n bytes at b[i:] like packKey; a leaf.
func keyAt(b []byte, i, n int) name {
	k := name{n: n}
	if n > 24 {
		return k
	}
	if i+24 <= len(b) {
		k.a, k.b, k.c = word(b, i), word(b, i+8), word(b, i+16)
		switch {
		case n < 8:
			k.a &= 1<<(8*n) - 1
			k.b, k.c = 0, 0
		case n == 8:
			k.b, k.c = 0, 0
		case n < 16:
			k.b &= 1<<(8*(n-8)) - 1
			k.c = 0
		case n == 16:
			k.c = 0
		case n < 24:
			k.c &= 1<<(8*(n-16)) - 1
		}
		return k
	}
	for j := 0; j < n; j++ {
		v := uint64(at(b, i+j)) << (8 * (j % 8))
		switch j / 8 {
		case 0:
			k.a |= v
		case 1:
			k.b |= v
		case 2:
			k.c |= v
		}
	}
	return k
}
