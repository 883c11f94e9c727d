package readall_test

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"apconnect/host/internal/readall"
)

// Sized reads the whole body whether its declared length is right, short,
// long or unknown, and whatever the reader's chunks.
func TestSized(t *testing.T) {
	body := strings.Repeat("0123456789", 50)
	for _, declared := range []int64{-1, 0, 1, 100, 499, 500, 501, 4096, 2 << 20} {
		for _, r := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.DataErrReader,
			iotest.HalfReader,
		} {
			got, err := readall.Sized(r(strings.NewReader(body)), declared)
			if err != nil || string(got) != body {
				t.Fatalf("declared %d: %d bytes, %v", declared, len(got), err)
			}
		}
	}
	if _, err := readall.Sized(iotest.TimeoutReader(strings.NewReader(body)), 500); err == nil {
		t.Fatal("a read error was lost")
	}
}
