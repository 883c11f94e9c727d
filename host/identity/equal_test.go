package identity_test

import (
	"bytes"
	"testing"

	"apconnect/host/identity"
)

// Values the strict parser builds are equal exactly when their canonical
// forms are; a difference anywhere — a member, an element, a type, a
// number's text — makes them unequal.
func TestEqualValues(t *testing.T) {
	base := `{"a":[1,"x",true,null,{"b":2.5}],"c":"d","e":{}}`
	others := []string{
		`{"a":[1,"x",true,null,{"b":2.5}],"c":"d"}`,
		`{"a":[1,"x",true,null,{"b":2.5}],"c":"D","e":{}}`,
		`{"a":[1,"x",false,null,{"b":2.5}],"c":"d","e":{}}`,
		`{"a":[1,"x",true,{"b":2.5}],"c":"d","e":{}}`,
		`{"a":["1","x",true,null,{"b":2.5}],"c":"d","e":{}}`,
		`{"a":[1,"x",true,null,{"b":2.5}],"c":"d","f":{}}`,
		`{"a":[1,"x",true,null,{"b":2.5}],"c":"d","e":[]}`,
		`{"a":[1,"x",true,0,{"b":2.5}],"c":"d","e":{}}`,
	}
	parse := func(s string) any {
		v, err := identity.ParseStrict([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	canon := func(v any) []byte {
		b, err := identity.Canonicalize(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := parse(base)
	if !identity.EqualValues(a, parse(`{"e":{},"c":"d","a":[1,"x",true,null,{"b":2.5}]}`)) {
		t.Error("the same value with members in another order is unequal")
	}
	for _, o := range others {
		b := parse(o)
		if identity.EqualValues(a, b) || identity.EqualValues(b, a) {
			t.Errorf("%s equals %s", o, base)
		}
		if bytes.Equal(canon(a), canon(b)) {
			t.Errorf("%s: canonical forms agree, the test case is no difference", o)
		}
	}
	// Unequal is safe where canonical forms agree (2.5 and 2.50): it only
	// costs the caller the full check.
	if identity.EqualValues(parse(`[2.5]`), parse(`[2.50]`)) {
		t.Error("numbers of different text are equal")
	}
	if identity.EqualValues(int64(1), 1) || identity.EqualValues(struct{}{}, struct{}{}) {
		t.Error("a value of a type outside the parser's is equal to something")
	}
}
