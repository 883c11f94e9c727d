package plugin

import (
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// decoder reads one JSON text with the primitives of scan.go. The first error
// sticks: the position jumps to the end, so every loop stops.
type decoder struct {
	b   []byte
	i   int
	err error
	// pool backs the string slices of a whole envelope (mentions), so that
	// each record does not allocate its own.
	pool []string
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errSyntax
	}
	d.i = len(d.b)
}

// open consumes c ('{' or '[').
func (d *decoder) open(c byte) bool {
	d.i = ws(d.b, d.i)
	if d.i < len(d.b) && at(d.b, d.i) == c {
		d.i++
		return true
	}
	d.fail()
	return false
}

// more moves to the next member or element of the container closed by
// close, and returns false after consuming close.
func (d *decoder) more(close byte) bool {
	b, i := d.b, d.i
	if i+1 < len(b) {
		// Compact input: one separator, then the next value or the close.
		c := at(b, i)
		if c == ',' && at(b, i+1) > ' ' {
			d.i = i + 1
			return true
		}
		if c == close {
			d.i = i + 1
			return false
		}
	}
	i = ws(b, i)
	if i < len(b) && at(b, i) == ',' {
		i = ws(b, i+1)
	}
	if i >= len(b) {
		d.fail()
		return false
	}
	if at(b, i) == close {
		d.i = i + 1
		return false
	}
	d.i = i
	return true
}

// key reads a member name and its colon and returns the name packed; an
// escaped name is unescaped first. Names of up to 23 bytes followed by
// enough input are found with three word loads and no loop.
func (d *decoder) key() name {
	b, i := d.b, d.i
	if i >= len(b) || at(b, i) != '"' {
		d.fail()
		return name{}
	}
	if i+26 <= len(b) {
		x, y, z := word(b, i+1), word(b, i+9), word(b, i+17)
		mx := zeroBytes(x^bQuote) | zeroBytes(x^bSlash)
		my := zeroBytes(y^bQuote) | zeroBytes(y^bSlash)
		mz := zeroBytes(z^bQuote) | zeroBytes(z^bSlash)
		var n int
		var k name
		switch {
		case mx != 0:
			n = bits.TrailingZeros64(mx) >> 3
			k = name{a: x & (1<<(8*n) - 1), n: n}
		case my != 0:
			n = 8 + bits.TrailingZeros64(my)>>3
			k = name{a: x, b: y & (1<<(8*(n-8)) - 1), n: n}
		case mz != 0:
			n = 16 + bits.TrailingZeros64(mz)>>3
			k = name{a: x, b: y, c: z & (1<<(8*(n-16)) - 1), n: n}
		default:
			n = -1
		}
		// The byte found must be the closing quote, followed by the colon.
		if n >= 0 && at(b, i+1+n) == '"' && at(b, i+2+n) == ':' {
			d.i = ws(b, i+3+n)
			return k
		}
	}
	end, escaped := stringEnd(b, i)
	if end < 0 {
		d.fail()
		return name{}
	}
	var k name
	if escaped {
		k = packKey(unquote(d, b[i:end]))
	} else {
		k = keyAt(b, i+1, end-i-2)
	}
	i = ws(b, end)
	if i >= len(b) || at(b, i) != ':' {
		d.fail()
		return name{}
	}
	d.i = ws(b, i+1)
	return k
}

// str reads a string value; unless escaped it shares the input.
func (d *decoder) str() string {
	b, i := d.b, ws(d.b, d.i)
	if i >= len(b) || at(b, i) != '"' {
		d.fail()
		return ""
	}
	end, escaped := stringEnd(b, i)
	if end < 0 {
		d.fail()
		return ""
	}
	d.i = end
	if escaped {
		return unquote(d, b[i:end])
	}
	if end-i == 2 {
		return ""
	}
	return unsafe.String(&b[i+1], end-i-2)
}

// int reads an integer value.
func (d *decoder) int() int64 {
	n, end := integer(d.b, ws(d.b, d.i))
	if end < 0 {
		d.fail()
		return 0
	}
	d.i = end
	return n
}

// bool reads true or false.
func (d *decoder) bool() bool {
	b, i := d.b, ws(d.b, d.i)
	if i+8 <= len(b) {
		w := word(b, i)
		if w&0xFFFFFFFF == 0x65757274 { // "true"
			d.i = i + 4
			return true
		}
		if w&0xFFFFFFFFFF == 0x65736c6166 { // "false"
			d.i = i + 5
			return false
		}
	} else {
		if i+4 <= len(b) && string(b[i:i+4]) == "true" {
			d.i = i + 4
			return true
		}
		if i+5 <= len(b) && string(b[i:i+5]) == "false" {
			d.i = i + 5
			return false
		}
	}
	d.fail()
	return false
}

// strs reads an array of strings into the decoder's shared backing array.
func (d *decoder) strs() []string {
	if !d.open('[') {
		return nil
	}
	start := len(d.pool)
	for d.more(']') {
		d.pool = append(d.pool, d.str())
	}
	if d.err != nil {
		return nil
	}
	return d.pool[start:len(d.pool):len(d.pool)]
}

// skip passes over one value.
func (d *decoder) skip() {
	end := valueEnd(d.b, ws(d.b, d.i))
	if end < 0 {
		d.fail()
		return
	}
	d.i = end
}

// raw returns the next value as a Raw sharing the input.
func (d *decoder) raw() Raw {
	start := ws(d.b, d.i)
	end := valueEnd(d.b, start)
	if end < 0 {
		d.fail()
		return nil
	}
	d.i = end
	return Raw(d.b[start:end:end])
}

// unquote decodes one escaped JSON string literal (with its quotes) as
// encoding/json does: a lone surrogate and invalid UTF-8 become U+FFFD; a
// bad escape or a raw control character fails the decoder.
func unquote(d *decoder, b []byte) string {
	s, ok := unquoteBytes(b)
	if !ok {
		d.fail()
		return ""
	}
	return s
}

func unquoteBytes(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	b = b[1 : len(b)-1]
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\':
			if i+1 >= len(b) {
				return "", false
			}
			switch b[i+1] {
			case '"', '\\', '/':
				out = append(out, b[i+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b, i)
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2 := hex4(b, i); r2 >= 0 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	return string(out), true
}

// hex4 reads the \uXXXX escape at b[i:], or returns -1.
func hex4(b []byte, i int) rune {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
