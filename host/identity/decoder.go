package identity

// Decoder reads one strict JSON text — under the rules of ParseStrict — a
// value at a time, for a caller that knows the shape of a document and
// builds its own values from it instead of reading ParseStrict's maps (a
// history page: every record, envelope and event object was a map built
// only to be read once). Its methods report only whether they read what
// was asked; on false the caller abandons the Decoder and reads the text
// with ParseStrict, whose value or error is the one to use. Value gives
// exactly the values ParseStrict gives.
type Decoder struct {
	p     parser
	depth int // of the innermost container being read
}

// decoderMaxMembers bounds the members an Object reads (it finds repeated
// names by comparing each with those read).
const decoderMaxMembers = 32

// NewDecoder returns a Decoder of data.
func NewDecoder(data []byte) *Decoder {
	d := &Decoder{p: parser{data: data}}
	d.p.skipSpace()
	return d
}

// next reports whether the next byte is c.
func (d *Decoder) next(c byte) bool {
	return d.p.pos < len(d.p.data) && d.p.data[d.p.pos] == c
}

// Object reads an object, calling member with each member name in order,
// the Decoder at its value; member reads the value (one method call) and
// reports whether it did. Object reports false for a repeated name, more
// than decoderMaxMembers members, or anything else not read.
func (d *Decoder) Object(member func(name string) bool) bool {
	p := &d.p
	if !d.next('{') || d.depth+1 > MaxJSONDepth {
		return false
	}
	d.depth++
	p.pos++
	p.skipSpace()
	if d.next('}') {
		p.pos++
		d.depth--
		return true
	}
	var names [decoderMaxMembers]string
	for n := 0; ; n++ {
		p.skipSpace()
		if n == len(names) || !d.next('"') {
			return false
		}
		name, err := p.string()
		if err != nil {
			return false
		}
		for _, seen := range names[:n] {
			if seen == name {
				return false
			}
		}
		names[n] = name
		p.skipSpace()
		if !d.next(':') {
			return false
		}
		p.pos++
		p.skipSpace()
		if !member(name) {
			return false
		}
		p.skipSpace()
		switch {
		case d.next(','):
			p.pos++
		case d.next('}'):
			p.pos++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// Array reads an array, calling elem for each element with its index, the
// Decoder at the element; elem reads it and reports whether it did.
func (d *Decoder) Array(elem func(i int) bool) bool {
	p := &d.p
	if !d.next('[') || d.depth+1 > MaxJSONDepth {
		return false
	}
	d.depth++
	p.pos++
	p.skipSpace()
	if d.next(']') {
		p.pos++
		d.depth--
		return true
	}
	for i := 0; ; i++ {
		p.skipSpace()
		if !elem(i) {
			return false
		}
		p.skipSpace()
		switch {
		case d.next(','):
			p.pos++
		case d.next(']'):
			p.pos++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// String reads a string.
func (d *Decoder) String() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	s, err := d.p.string()
	return s, err == nil
}

// Null reads null if it comes next, and reports whether it did.
func (d *Decoder) Null() bool {
	if !d.next('n') {
		return false
	}
	return d.p.literal("null") == nil
}

// Int reads a non-negative integer written as plain digits (no sign,
// fraction or exponent; no leading zero) of at most 2^53-1: the numbers
// ParseStrict reads as exactly that integer.
func (d *Decoder) Int() (int64, bool) {
	p := &d.p
	start := p.pos
	var n int64
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		if p.pos-start == 16 {
			return 0, false // 17 digits or more: above 2^53-1
		}
		n = n*10 + int64(p.data[p.pos]-'0')
		p.pos++
	}
	digits := p.pos - start
	if digits == 0 || (digits > 1 && p.data[start] == '0') || n > MaxSafeInteger {
		return 0, false
	}
	if d.next('.') || d.next('e') || d.next('E') {
		return 0, false
	}
	return n, true
}

// Value reads any value, as ParseStrict would give it.
func (d *Decoder) Value() (any, bool) {
	v, err := d.p.value(d.depth)
	return v, err == nil
}

// End reports whether nothing but white space follows.
func (d *Decoder) End() bool {
	d.p.skipSpace()
	return d.p.pos == len(d.p.data)
}
