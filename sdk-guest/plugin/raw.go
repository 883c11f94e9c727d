package plugin

// Raw is one JSON value exactly as the host sent it: a record's payload, a
// proposal's payload, a tool's arguments. Its accessors read single members
// without decoding the rest, which is much cheaper inside WebAssembly than
// decoding the whole value; stdlib.Decode (apconnect/sdk-guest/plugin/stdlib)
// unmarshals it into a Go value with encoding/json.
//
// Raw values and the strings read from them share the input buffer of their
// call. Every call gets a fresh buffer that is never written again, so they
// stay valid after the call; a Raw built by plugin code must likewise not be
// modified once strings were read from it.
type Raw []byte

// Kind is the JSON type of a Raw value.
type Kind int

// The JSON kinds a Raw value can have.
const (
	KindInvalid Kind = iota // absent or malformed
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// Kind returns the JSON type of r, KindInvalid when r is empty.
func (r Raw) Kind() Kind {
	i := ws(r, 0)
	if i >= len(r) {
		return KindInvalid
	}
	switch c := r[i]; {
	case c == '{':
		return KindObject
	case c == '[':
		return KindArray
	case c == '"':
		return KindString
	case c == 't' || c == 'f':
		return KindBool
	case c == 'n':
		return KindNull
	case c == '-' || (c >= '0' && c <= '9'):
		return KindNumber
	}
	return KindInvalid
}

// Exists reports whether r holds a value (a member that Get found).
func (r Raw) Exists() bool { return len(r) > 0 }

// Get follows object member names and returns the value found, or nil when a
// member is missing or a step is not an object.
func (r Raw) Get(path ...string) Raw {
	cur := r
	for _, name := range path {
		cur = cur.member(name)
		if cur == nil {
			return nil
		}
	}
	return cur
}

func (r Raw) member(want string) Raw {
	i := ws(r, 0)
	if i >= len(r) || at(r, i) != '{' {
		return nil
	}
	d := decoder{b: r, i: i + 1}
	packed := len(want) <= 24
	target := packKey(want)
	for d.more('}') {
		start := d.i
		k := d.key()
		if packed && k.is(target) || !packed && k.n == len(want) && memberName(r, start) == want {
			return d.raw()
		}
		d.skip()
	}
	return nil
}

// memberName returns the (unescaped) member name whose quote is at r[i].
func memberName(r Raw, i int) string {
	d := decoder{b: r, i: i}
	return d.str()
}

// Index returns element i of an array, or nil.
func (r Raw) Index(i int) Raw {
	if r.Kind() != KindArray {
		return nil
	}
	d := decoder{b: r}
	d.open('[')
	for n := 0; d.more(']'); n++ {
		if n == i {
			return d.raw()
		}
		d.skip()
	}
	return nil
}

// Len returns the number of elements of an array or members of an object,
// and 0 for anything else.
func (r Raw) Len() int {
	n := 0
	switch r.Kind() {
	case KindArray:
		r.Each(func(int, Raw) bool { n++; return true })
	case KindObject:
		r.Fields(func(string, Raw) bool { n++; return true })
	}
	return n
}

// AsString returns the value as a string; ok is false when it is not one.
// Unless it holds escapes, the string shares r's memory (see Raw).
func (r Raw) AsString() (s string, ok bool) {
	d := decoder{b: r}
	s = d.str()
	if d.err != nil || ws(r, d.i) != len(r) {
		return "", false
	}
	return s, true
}

// AsInt returns the value as an integer; ok is false when it is not one.
func (r Raw) AsInt() (n int64, ok bool) {
	d := decoder{b: r}
	n = d.int()
	return n, d.err == nil && ws(r, d.i) == len(r)
}

// AsBool returns the value as a boolean; ok is false when it is not one.
func (r Raw) AsBool() (v bool, ok bool) {
	switch string(r) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	d := decoder{b: r}
	v = d.bool()
	return v, d.err == nil && ws(r, d.i) == len(r)
}

// AsStrings returns an array of strings; ok is false when r is not an array
// or an element is not a string.
func (r Raw) AsStrings() (s []string, ok bool) {
	d := decoder{b: r}
	s = d.strs()
	if d.err != nil || ws(r, d.i) != len(r) {
		return nil, false
	}
	return s, true
}

// Each calls fn for every element of an array until fn returns false.
func (r Raw) Each(fn func(i int, v Raw) bool) {
	if r.Kind() != KindArray {
		return
	}
	d := decoder{b: r}
	d.open('[')
	for n := 0; d.more(']'); n++ {
		v := d.raw()
		if d.err != nil || !fn(n, v) {
			return
		}
	}
}

// Fields calls fn for every member of an object until fn returns false.
func (r Raw) Fields(fn func(name string, v Raw) bool) {
	if r.Kind() != KindObject {
		return
	}
	d := decoder{b: r}
	d.open('{')
	for d.more('}') {
		k := memberName(r, d.i)
		d.key()
		v := d.raw()
		if d.err != nil || !fn(k, v) {
			return
		}
	}
}

// MarshalJSON returns r itself ("null" when empty), so a Raw can be placed in
// any value the SDK encodes.
func (r Raw) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of the raw value.
func (r *Raw) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// Marshal encodes v as a Raw value (a convenience for proposal payloads),
// exactly as encoding/json.Marshal would. Values other than the ones the
// SDK encodes itself (see EncodeOthersWith) need package stdlib.
func Marshal(v any) (Raw, error) {
	b, err := appendValue(nil, v)
	return Raw(b), err
}
