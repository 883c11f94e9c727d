package room

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeTimelineItem decodes a stored timeline item (the JSON the store
// holds, as encoding/json wrote it) into it, exactly as json.Unmarshal
// would: a page of 50 items was mostly reflection and two scans of every
// byte. The fast path reads the members TimelineItem has in the forms
// encoding/json writes; anything else (an unknown or differently cased
// member, a non-integer number, an invalid string) is handed to
// json.Unmarshal, so the result never differs from it
// (TestDecodeTimelineItemMatchesUnmarshal).
func DecodeTimelineItem(data []byte, it *TimelineItem) error {
	var d itemDecoder
	d.data = data
	var fast TimelineItem
	if d.object(&fast) && d.end() {
		fast.fillTimes()
		*it = fast
		return nil
	}
	return json.Unmarshal(data, it)
}

// itemDecoder reads the JSON of one TimelineItem; every method reports
// false when the input is not in the forms it reads.
type itemDecoder struct {
	data []byte
	i    int
}

func (d *itemDecoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *itemDecoder) byte(c byte) bool {
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *itemDecoder) end() bool {
	d.ws()
	return d.i == len(d.data)
}

func (d *itemDecoder) literal(lit string) bool {
	d.ws()
	if len(d.data)-d.i >= len(lit) && string(d.data[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

func (d *itemDecoder) object(it *TimelineItem) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	for {
		key, ok := d.key()
		if !ok || !d.byte(':') || !d.member(it, key) {
			return false
		}
		if d.byte(',') {
			continue
		}
		return d.byte('}')
	}
}

// key reads a member name without escapes (the names TimelineItem has
// need none) and without copying it.
func (d *itemDecoder) key() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	rest := d.data[d.i:]
	q := bytes.IndexByte(rest, '"')
	if q < 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return nil, false
	}
	d.i += q + 1
	return rest[:q], true
}

// member reads the value of one member into it.
func (d *itemDecoder) member(it *TimelineItem, name []byte) bool {
	d.ws()
	null := d.literal("null")
	key := string(name) // not allocated: only compared
	switch key {
	case "room_id":
		return null || d.strInto(&it.RoomID)
	case "event_id":
		return null || d.strInto(&it.EventID)
	case "type":
		return null || d.strInto(&it.Type)
	case "kind":
		return null || d.strInto(&it.Kind)
	case "actor":
		return null || d.strInto(&it.Actor)
	case "summary":
		return null || d.strInto(&it.Summary)
	case "content_type":
		return null || d.strInto(&it.ContentType)
	case "seq":
		return null || d.int(&it.Seq)
	case "created_at":
		return null || d.int(&it.CreatedAt)
	case "received_at":
		return null || d.int(&it.ReceivedAt)
	case "accepted_at":
		return null || d.int(&it.AcceptedAt)
	case "redacted":
		return d.boolInto(&it.Redacted, null)
	case "mentions":
		return d.stringsInto(&it.Mentions, null)
	case "references":
		return d.stringsInto(&it.References, null)
	case "payload":
		return d.rawInto(&it.Payload, null)
	case "record":
		return d.rawInto(&it.Record, null)
	case "content":
		return d.contentInto(it, null)
	case "extra":
		return d.extraInto(it, null)
	}
	return false // unknown, or matched only case-insensitively by encoding/json
}

// boolInto reads true or false into b (null leaves it false).
func (d *itemDecoder) boolInto(b *bool, null bool) bool {
	switch {
	case null:
		return true
	case d.literal("true"):
		*b = true
	case d.literal("false"):
		*b = false
	default:
		return false
	}
	return true
}

// stringsInto reads an array of strings into list (null: nil).
func (d *itemDecoder) stringsInto(list *[]string, null bool) bool {
	if null {
		*list = nil
		return true
	}
	return d.strings(list)
}

// rawInto keeps a value's bytes, null included, as json.RawMessage does.
func (d *itemDecoder) rawInto(raw *json.RawMessage, null bool) bool {
	start := d.i
	if null {
		start = d.i - 4
	} else if !d.skip() {
		return false
	}
	*raw = json.RawMessage(append([]byte(nil), d.data[start:d.i]...))
	return true
}

// contentInto reads a message's content: a string fast, any other JSON
// value as encoding/json decodes it into an interface.
func (d *itemDecoder) contentInto(it *TimelineItem, null bool) bool {
	if null {
		it.Content = nil
		return true
	}
	if d.i < len(d.data) && d.data[d.i] == '"' {
		s, ok := d.str()
		it.Content = s
		return ok
	}
	start := d.i
	if !d.skip() {
		return false
	}
	var v any
	if json.Unmarshal(d.data[start:d.i], &v) != nil {
		return false
	}
	it.Content = v
	return true
}

// extraInto decodes an extra object as encoding/json does: into the present
// map, a fresh decode starting from none.
func (d *itemDecoder) extraInto(it *TimelineItem, null bool) bool {
	if null {
		it.Extra = nil
		return true
	}
	start := d.i
	if !d.skip() {
		return false
	}
	m := it.Extra
	if json.Unmarshal(d.data[start:d.i], &m) != nil {
		return false
	}
	it.Extra = m
	return true
}

func (d *itemDecoder) strInto(dst *string) bool {
	s, ok := d.str()
	if ok {
		*dst = s
	}
	return ok
}

// str reads a JSON string: escapes decoded, valid UTF-8 only.
func (d *itemDecoder) str() (string, bool) {
	if !d.byte('"') {
		return "", false
	}
	rest := d.data[d.i:]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return "", false
	}
	if bytes.IndexByte(rest[:q], '\\') < 0 {
		// No escape: the string ends at the first quote.
		raw := rest[:q]
		ascii := true
		for _, c := range raw {
			if c < 0x20 {
				return "", false
			}
			if c >= 0x80 {
				ascii = false
			}
		}
		if !ascii && !utf8.Valid(raw) {
			return "", false
		}
		d.i += q + 1
		return string(raw), true
	}
	start := d.i
	for d.i < len(d.data) {
		switch c := d.data[d.i]; {
		case c == '"':
			raw := d.data[start:d.i]
			d.i++
			return unquote(raw)
		case c == '\\':
			d.i += 2
		case c < 0x20:
			return "", false
		default:
			d.i++
		}
	}
	return "", false
}

// unquote decodes the inside of a JSON string with escapes or non-ASCII
// bytes; invalid UTF-8 (which encoding/json would replace) is refused.
func unquote(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c >= 0x80 {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			out = append(out, raw[i:i+n]...)
			i += n
			continue
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+2)
			if !ok {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, ok = hex4(raw, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError // encoding/json's replacement of a lone surrogate
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}

// int reads an integer written without fraction or exponent.
func (d *itemDecoder) int(dst *int64) bool {
	start := d.i
	if d.i < len(d.data) && d.data[d.i] == '-' {
		d.i++
	}
	for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
		d.i++
	}
	if d.i < len(d.data) {
		switch d.data[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	n, err := strconv.ParseInt(string(d.data[start:d.i]), 10, 64)
	if err != nil || (d.i-start > 1 && d.data[start] == '0') || (d.i-start > 2 && d.data[start] == '-' && d.data[start+1] == '0') {
		return false
	}
	*dst = n
	return true
}

// strings reads an array of strings (null elements are refused).
func (d *itemDecoder) strings(dst *[]string) bool {
	if !d.byte('[') {
		return false
	}
	out := []string{}
	if d.byte(']') {
		*dst = out
		return true
	}
	for {
		s, ok := d.str()
		if !ok {
			return false
		}
		out = append(out, s)
		if d.byte(',') {
			continue
		}
		if !d.byte(']') {
			return false
		}
		*dst = out
		return true
	}
}

// skip passes over one value, checking it is valid JSON.
func (d *itemDecoder) skip() bool {
	d.ws()
	start := d.i
	depth := 0
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			for d.i < len(d.data) && d.data[d.i] != '"' {
				if d.data[d.i] == '\\' {
					d.i++
				}
				d.i++
			}
			d.i++
		case c == '{' || c == '[':
			depth++
			d.i++
		case c == '}' || c == ']':
			depth--
			d.i++
		default:
			d.i++
		}
		if depth == 0 {
			// A scalar ends at the next delimiter.
			if c != '"' && c != '}' && c != ']' {
				for d.i < len(d.data) && !isDelim(d.data[d.i]) {
					d.i++
				}
			}
			return d.i <= len(d.data) && json.Valid(d.data[start:d.i])
		}
		if depth < 0 {
			return false
		}
	}
	return false
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
