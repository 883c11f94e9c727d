// Package readall reads a whole body into one buffer sized from the length
// its sender declared, for the hub's requests and the client's responses.
//
// io.ReadAll starts at 512 bytes and copies everything read so far each
// time it grows; a body of declared length n is read here into one buffer
// of n+1 bytes (the extra byte sees the end without growing). The
// declaration is only a hint: a shorter or longer body, or none declared,
// reads as io.ReadAll reads it, and a declaration past MaxPrealloc is
// believed only as the bytes arrive. Bounding the body is the caller's
// (http.MaxBytesReader, io.LimitReader).
package readall

import "io"

// MaxPrealloc bounds what Sized allocates before the bytes arrive.
const MaxPrealloc = 1 << 20

// Sized reads r to its end, like io.ReadAll, into a buffer sized for a body
// of declared bytes (-1 or 0 when unknown).
func Sized(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 || declared > MaxPrealloc {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, declared+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			rest, err := io.ReadAll(r)
			return append(b, rest...), err
		}
	}
}
