package hubhttp

import (
	"bytes"
	"encoding/json"
	"testing"
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
