package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseStrictErrors(t *testing.T) {
	cases := []struct {
		name, text, pointer, reason string
	}{
		{"duplicate at depth", `{"a":{"b":[{"c":1,"c":2}]}}`, "/a/b/0/c", "duplicate member name"},
		{"duplicate after escape decoding", `{"a":1,"\u0061":2}`, "/a", "duplicate member name"},
		{"pointer escaping", `{"x/y":{"m~n":1,"m~n":2}}`, "/x~1y/m~0n", "duplicate member name"},
		{"unpaired high surrogate", `{"s":"\ud800"}`, "/s", "unpaired high surrogate"},
		{"high surrogate then non-low", `{"s":"\ud800\u0041"}`, "/s", "unpaired high surrogate"},
		{"unpaired low surrogate", `["\udc00"]`, "/0", "unpaired low surrogate"},
		{"invalid utf-8", "{\"s\":\"\xff\"}", "/s", "not valid UTF-8"},
		{"overlong utf-8", "[\"\xc0\xaf\"]", "/0", "not valid UTF-8"},
		{"integer above range", `{"n":9007199254740992}`, "/n", "safe range"},
		{"huge integer", `[123456789012345678901234567890]`, "/0", "safe range"},
		{"exponent integer above range", `[1e16]`, "/0", "safe range"},
		{"non-finite", `[1e400]`, "/0", "finite"},
		{"large integral double", `[1.5e300]`, "/0", "safe range"},
		{"leading zero", `[01]`, "/0", "leading zero"},
		{"trailing data", `{} {}`, "", "after the JSON value"},
		{"raw control char", "[\"a\nb\"]", "/0", "control character"},
		{"bad escape", `["\x"]`, "/0", "invalid escape"},
		{"bom", "\ufeff{}", "", "byte order mark"},
		{"too deep", strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1), "", "nesting deeper"},
		{"empty", ``, "", "end of input"},
		{"single quotes", `{'a':1}`, "", "member name"},
		{"NaN literal", `[NaN]`, "/0", "unexpected character"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseStrict([]byte(tc.text))
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("err = %v, want *JSONError", err)
			}
			if !strings.HasPrefix(je.Pointer, tc.pointer) {
				t.Errorf("pointer = %q, want prefix %q", je.Pointer, tc.pointer)
			}
			if !strings.Contains(je.Reason, tc.reason) {
				t.Errorf("reason = %q, want it to mention %q", je.Reason, tc.reason)
			}
		})
	}
}

func TestParseStrictValues(t *testing.T) {
	v, err := ParseStrict([]byte(` {"a":[1,-2,3.5,true,false,null,"\ud83d\ude00\u00e9\n"],"b":{}} `))
	if err != nil {
		t.Fatal(err)
	}
	obj := v.(map[string]any)
	arr := obj["a"].([]any)
	want := []any{json.Number("1"), json.Number("-2"), json.Number("3.5"), true, false, nil, "😀é\n"}
	for i := range want {
		if arr[i] != want[i] {
			t.Errorf("a[%d] = %#v, want %#v", i, arr[i], want[i])
		}
	}
	if m, ok := obj["b"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("b = %#v", obj["b"])
	}
	// Limits accepted exactly at the boundary.
	for _, ok := range []string{`9007199254740991`, `-9007199254740991`, `1.5e-300`, `9007199254740991.0`, `-0`, `0.0`} {
		if _, err := ParseStrict([]byte(ok)); err != nil {
			t.Errorf("%s rejected: %v", ok, err)
		}
	}
	nested := strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)
	if _, err := ParseStrict([]byte(nested)); err != nil {
		t.Errorf("depth %d rejected: %v", MaxJSONDepth, err)
	}
}

func TestUnmarshalStrict(t *testing.T) {
	var out struct{ A int }
	if err := UnmarshalStrict([]byte(`{"A":1,"A":2}`), &out); err == nil {
		t.Fatal("duplicate accepted by UnmarshalStrict")
	}
	if err := UnmarshalStrict([]byte(`{"A":7}`), &out); err != nil || out.A != 7 {
		t.Fatalf("got %v, %v", out, err)
	}
}

// TestParseStrictDuplicatesInLargeObjects: duplicate member names are found
// at any position of an object past the size where the parser stops
// comparing names one by one, and the members of nested objects do not
// mix.
func TestParseStrictDuplicatesInLargeObjects(t *testing.T) {
	obj := func(n, dup int) string {
		var b strings.Builder
		b.WriteString(`{"outer":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":{"k%d":%d}`, i, i, i)
		}
		if dup >= 0 {
			fmt.Fprintf(&b, `,"k%d":0`, dup)
		}
		b.WriteString(`},"k1":1}`)
		return b.String()
	}
	for _, n := range []int{1, 15, 16, 17, 40} {
		v, err := ParseStrict([]byte(obj(n, -1)))
		if err != nil {
			t.Fatalf("%d members: %v", n, err)
		}
		if got := len(v.(map[string]any)["outer"].(map[string]any)); got != n {
			t.Fatalf("%d members: parsed %d", n, got)
		}
		for _, dup := range []int{0, n / 2, n - 1} {
			_, err := ParseStrict([]byte(obj(n, dup)))
			var je *JSONError
			if !errors.As(err, &je) || je.Pointer != fmt.Sprintf("/outer/k%d", dup) || !strings.Contains(je.Reason, "duplicate member name") {
				t.Fatalf("%d members, k%d twice: %v", n, dup, err)
			}
		}
	}
}
