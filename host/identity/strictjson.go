package identity

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	itext "apconnect/host/text"
)

// MaxSafeInteger is 2^53-1, the largest integer every JSON implementation
// represents exactly (I-JSON, Agent Identity 4.1).
const MaxSafeInteger = 1<<53 - 1

// MaxJSONDepth bounds the nesting of arrays and objects the strict parser
// accepts, so hostile input cannot exhaust the stack.
const MaxJSONDepth = 128

// JSONError is a strict-parsing failure: what was wrong, and where. Pointer is
// an RFC 6901 JSON pointer to the offending value (for a duplicate member it
// points at the member); Offset is the byte offset in the input.
type JSONError struct {
	Pointer string
	Offset  int
	Reason  string
}

func (e *JSONError) Error() string {
	p := e.Pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("invalid JSON at %s (byte %d): %s", p, e.Offset, e.Reason)
}

// ParseStrict parses one I-JSON text (RFC 7493) as Agent Identity 4.1
// requires. It rejects duplicate member names at any depth, strings that are
// not valid Unicode (invalid UTF-8, unpaired surrogate escapes), integers
// outside ±(2^53-1), non-finite numbers, nesting deeper than MaxJSONDepth, a
// byte order mark, and anything after the value.
//
// The result uses the shapes encoding/json produces with UseNumber:
// map[string]any, []any, json.Number, string, bool and nil.
func ParseStrict(data []byte) (any, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return v, nil
}

// UnmarshalStrict parses data with ParseStrict and then decodes it into v with
// encoding/json, so typed decoding never sees input the strict rules reject.
func UnmarshalStrict(data []byte, v any) error {
	if _, err := ParseStrict(data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

type parser struct {
	data []byte
	pos  int
	path []segment // JSON pointer segments of the value being parsed

	// short holds the short strings of the text read so far, each in an
	// interface value (see intern).
	short map[string]any
	// members are the members of the objects being read (see object).
	members []member
}

// Interning: a page of records repeats the same member names and short
// values (room id, type, protocol) in every record, and allocating each
// anew — the string, and the interface value holding it — was the largest
// share of a parse. A string of at most internMax bytes is looked up
// (without allocating) among those already read and shares their copy and
// interface value; at most internCap distinct strings are kept, so a text of
// distinct short strings costs one lookup each and bounded memory.
const (
	internMax = 24
	internCap = 512
)

// intern returns string(b) as an interface value, shared with an equal
// short string read before.
func (p *parser) intern(b []byte) any {
	if len(b) > internMax {
		return string(b)
	}
	if v, ok := p.short[string(b)]; ok {
		return v
	}
	s := string(b)
	var v any = s
	if p.short == nil {
		p.short = make(map[string]any, 64)
	}
	if len(p.short) < internCap {
		p.short[s] = v
	}
	return v
}

// segment is a JSON pointer segment: a member name, or an array index
// (name "", index ≥ 0), formatted only when an error needs it.
type segment struct {
	name  string
	index int
}

func (p *parser) pointer() string {
	if len(p.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range p.path {
		b.WriteByte('/')
		if s.name == "" && s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			b.WriteString(itext.EscapePointer(s.name))
		}
	}
	return b.String()
}

func (p *parser) fail(reason string) *JSONError {
	return &JSONError{Pointer: p.pointer(), Offset: p.pos, Reason: reason}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.stringValue()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		if c == 0xEF && len(p.data) >= 3 && p.pos == 0 && p.data[1] == 0xBB && p.data[2] == 0xBF {
			return nil, p.fail("byte order mark is not allowed")
		}
		return nil, p.fail(fmt.Sprintf("unexpected character %q", rune(c)))
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail("invalid literal")
	}
	p.pos += len(word)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	if depth > MaxJSONDepth {
		return nil, p.fail(fmt.Sprintf("nesting deeper than %d", MaxJSONDepth))
	}
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return map[string]any{}, nil
	}
	// The members are collected on p.members (a stack shared by the nested
	// objects) and the map is made once at its final size: growing the
	// map of an event (nine members) cost a second table.
	base := len(p.members)
	var seen map[string]bool // the names, once the object is large
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("expected a member name")
		}
		keyStart := p.pos
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if p.duplicate(base, key, &seen) {
			p.path = append(p.path, segment{name: key, index: -1})
			e := p.fail(fmt.Sprintf("duplicate member name %q", truncate(key, 80)))
			e.Offset = keyStart
			return nil, e
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("expected ':' after a member name")
		}
		p.pos++
		p.skipSpace()
		p.path = append(p.path, segment{name: key, index: -1})
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		p.members = append(p.members, member{key, v})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			obj := make(map[string]any, len(p.members)-base)
			for _, m := range p.members[base:] {
				obj[m.name] = m.value
			}
			clear(p.members[base:])
			p.members = p.members[:base]
			return obj, nil
		default:
			return nil, p.fail("expected ',' or '}' in an object")
		}
	}
}

// member is one object member read (parser.members).
type member struct {
	name  string
	value any
}

// linearMembers is the size up to which duplicate reports whether a name
// was read by comparing it with each member read: cheaper than a map for
// the small objects of protocol documents; a larger object switches to one.
const linearMembers = 16

// duplicate reports whether the object whose members start at
// p.members[base] already has a member name.
func (p *parser) duplicate(base int, name string, seen *map[string]bool) bool {
	read := p.members[base:]
	if *seen == nil && len(read) < linearMembers {
		for _, m := range read {
			if m.name == name {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(read))
		for _, m := range read {
			(*seen)[m.name] = true
		}
	}
	if (*seen)[name] {
		return true
	}
	(*seen)[name] = true
	return false
}

func (p *parser) array(depth int) (any, error) {
	if depth > MaxJSONDepth {
		return nil, p.fail(fmt.Sprintf("nesting deeper than %d", MaxJSONDepth))
	}
	p.pos++ // '['
	arr := []any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for i := 0; ; i++ {
		p.skipSpace()
		p.path = append(p.path, segment{index: i})
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		arr = append(arr, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return arr, nil
		default:
			return nil, p.fail("expected ',' or ']' in an array")
		}
	}
}

// string parses a JSON string starting at the opening quote.
func (p *parser) string() (string, error) {
	v, err := p.stringValue()
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// stringValue is string, returning the string as an interface value.
func (p *parser) stringValue() (any, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes, plain valid UTF-8.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.data[start:p.pos]
			if !utf8.Valid(s) {
				return "", p.fail("string is not valid UTF-8")
			}
			p.pos++
			return p.intern(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	p.pos = start
	var b strings.Builder
	for {
		if p.pos >= len(p.data) {
			return "", p.fail("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail("control character in string must be escaped")
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fail("string is not valid UTF-8")
			}
			b.WriteRune(r)
			p.pos += size
		}
	}
}

// escape decodes one backslash escape, joining surrogate pairs and rejecting
// unpaired surrogates.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.fail("unterminated escape")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"':
		return '"', nil
	case '\\':
		return '\\', nil
	case '/':
		return '/', nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		p.pos -= 2
		return 0, p.fail(fmt.Sprintf("invalid escape \\%c", c))
	}
	r, err := p.hex4()
	if err != nil {
		return 0, err
	}
	switch {
	case utf16.IsSurrogate(r) && r < 0xDC00: // high surrogate: a low one must follow
		if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
			p.pos += 2
			lo, err := p.hex4()
			if err != nil {
				return 0, err
			}
			if lo >= 0xDC00 && lo <= 0xDFFF {
				return utf16.DecodeRune(r, lo), nil
			}
		}
		return 0, p.fail("unpaired high surrogate escape in string")
	case utf16.IsSurrogate(r):
		return 0, p.fail("unpaired low surrogate escape in string")
	}
	return r, nil
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, p.fail("truncated \\u escape")
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, p.fail("invalid hex digit in \\u escape")
		}
	}
	p.pos += 4
	return r, nil
}

// number parses a JSON number and enforces the I-JSON range rules.
func (p *parser) number() (any, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	intStart := p.pos
	if n := digits(); n == 0 {
		return nil, p.fail("invalid number")
	} else if n > 1 && p.data[intStart] == '0' {
		p.pos = intStart
		return nil, p.fail("number has a leading zero")
	}
	integer := true
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		integer = false
		p.pos++
		if digits() == 0 {
			return nil, p.fail("invalid number: digits must follow '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number: digits must follow the exponent")
		}
	}
	text := string(p.data[start:p.pos])
	if integer {
		// 17 digits is enough to tell: anything longer is out of range.
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n > MaxSafeInteger || n < -MaxSafeInteger {
			p.pos = start
			return nil, p.fail("integer outside the safe range ±(2^53-1)")
		}
		return json.Number(text), nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		p.pos = start
		return nil, p.fail("number is not a finite IEEE 754 double")
	}
	// A number in exponent or fraction form whose value is integral is still
	// an integer (1e16 canonicalizes to 10000000000000000), so the same
	// range applies; this also rejects every double above 2^53.
	if f == math.Trunc(f) && math.Abs(f) > MaxSafeInteger {
		p.pos = start
		return nil, p.fail("integer outside the safe range ±(2^53-1)")
	}
	return json.Number(text), nil
}
