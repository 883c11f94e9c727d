package wasmguard

import (
	"errors"
	"fmt"
)

// reader reads the WebAssembly binary format. Every read is bounds-checked;
// a read past the end fails with errTruncated.
type reader struct {
	b   []byte
	off int
}

var errTruncated = errors.New("unexpected end of the module")

func (r *reader) done() bool { return r.off >= len(r.b) }

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.off) {
		return nil, errTruncated
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

// leb reads an LEB128 number of at most maxBytes bytes and returns its raw
// bits. Its length is decided by the continuation bits alone, as in
// wazero's decoders; a number that would need more bytes is refused rather
// than read differently.
func (r *reader) leb(maxBytes int) (uint64, int, error) {
	var v uint64
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, 0, err
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("an LEB128 number at offset %d is longer than %d bytes", r.off, maxBytes)
}

// u32 reads an unsigned 32-bit LEB128 number.
func (r *reader) u32() (uint32, error) {
	if r.off < len(r.b) && r.b[r.off] < 0x80 { // one byte: most of them
		v := r.b[r.off]
		r.off++
		return uint32(v), nil
	}
	v, n, err := r.leb(5)
	if err != nil {
		return 0, err
	}
	if n == 5 && v>>32 != 0 {
		return 0, fmt.Errorf("an unsigned 32-bit number at offset %d overflows", r.off)
	}
	return uint32(v), nil
}

// s33 reads a signed 33-bit LEB128 number (block types).
func (r *reader) s33() (int64, error) {
	v, n, err := r.leb(5)
	if err != nil {
		return 0, err
	}
	shift := 7 * n
	if shift < 64 && v&(1<<(shift-1)) != 0 {
		v |= ^uint64(0) << shift
	}
	return int64(v), nil
}

// skipLEB skips a signed or unsigned LEB128 number of at most maxBytes.
func (r *reader) skipLEB(maxBytes int) error {
	b, off := r.b, r.off
	for i := 0; i < maxBytes; i++ {
		if off >= len(b) {
			return errTruncated
		}
		c := b[off]
		off++
		if c < 0x80 {
			r.off = off
			return nil
		}
	}
	return fmt.Errorf("an LEB128 number at offset %d is longer than %d bytes", r.off, maxBytes)
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

// appendU32 appends v as unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// appendS64 appends v as signed LEB128.
func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendSection(out []byte, id byte, body []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}
