package identity

import (
	"encoding/json"
	"testing"

	"github.com/gowebpki/jcs"
)

func TestCanonicalize(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"utf16 key order", `{"\ud83d\ude00":1,"\uff01":2,"\u00e9":3,"a":4,"B":5}`, `{"B":5,"a":4,"é":3,"😀":1,"！":2}`},
		{"minimal escaping", `["\u2028\u2029","\u001f\u0000","\b\t\n\f\r","\"\\","\/","\u00e9"]`,
			"[\"\u2028\u2029\",\"\\u001f\\u0000\",\"\\b\\t\\n\\f\\r\",\"\\\"\\\\\",\"/\",\"é\"]"},
		{"numbers", `[1.0,1e2,-0,0.000001,1e-7,4.5e-20,1.5,-1.25e-3,9007199254740991]`,
			`[1,100,0,0.000001,1e-7,4.5e-20,1.5,-0.00125,9007199254740991]`},
		{"literals and whitespace", " { \"t\" : true , \"f\":false,\"n\" :null } ", `{"f":false,"n":null,"t":true}`},
		{"nested", `{"b":[{"z":1,"y":[]}],"a":{}}`, `{"a":{},"b":[{"y":[],"z":1}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CanonicalizeJSON([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			// Agree with the independent implementation.
			ref, err := jcs.Transform([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(ref) != string(got) {
				t.Fatalf("reference JCS %s differs from ours %s", ref, got)
			}
		})
	}
}

func TestCanonicalizeGoValues(t *testing.T) {
	got, err := Canonicalize(map[string]any{"n": int64(5), "i": 7, "s": []string{"x"}, "f": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"f":0.5,"i":7,"n":5,"s":["x"]}` {
		t.Fatalf("got %s", got)
	}
	if _, err := Canonicalize(map[string]any{"x": struct{}{}}); err == nil {
		t.Fatal("unsupported type accepted")
	}
	if _, err := Canonicalize(int64(MaxSafeInteger + 1)); err == nil {
		t.Fatal("unsafe integer accepted")
	}
	if _, err := Canonicalize(json.Number("nope")); err == nil {
		t.Fatal("bad number accepted")
	}
}
