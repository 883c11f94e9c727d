package hubhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// compactJSON writes what json.Compact writes, and returns a compact text
// itself.
func TestCompactJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[true,null,"x y"]}`,
		`{"a": 1, "b" : [ true,null ,"x y" ] }`,
		"{\n\t\"a\":\"\\\" \\\\\",\r\n\"b\":\"\\\\\"}\n",
		`{"s":"a\"b c\\","t":" "}`,
		`[]`,
		` "x" `,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatal(err)
		}
		got, err := compactJSON([]byte(in))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("compactJSON(%q) = %q, %v; want %q", in, got, err, want.Bytes())
		}
	}
	b := []byte(`{"a":"x y","b":[1,2]}`)
	if got, _ := compactJSON(b); &got[0] != &b[0] {
		t.Error("a compact text was copied")
	}
}

// readAll reads the whole body whether its declared length is right,
// short, long or unknown, and whatever the reader's chunks.
func TestReadAll(t *testing.T) {
	body := strings.Repeat("0123456789", 50)
	for _, declared := range []int64{-1, 0, 1, 100, 499, 500, 501, 4096, 2 << 20} {
		for _, r := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.DataErrReader,
			iotest.HalfReader,
		} {
			got, err := readAll(r(strings.NewReader(body)), declared)
			if err != nil || string(got) != body {
				t.Fatalf("declared %d: %d bytes, %v", declared, len(got), err)
			}
		}
	}
	if _, err := readAll(iotest.TimeoutReader(strings.NewReader(body)), 500); err == nil {
		t.Fatal("a read error was lost")
	}
}
