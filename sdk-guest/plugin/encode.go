package plugin

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file is the SDK's JSON encoder. It writes what encoding/json's
// Marshal writes for the values plugins hand the SDK — the SDK's own
// output types, and in the "any" fields (schemas, Structured, proposal
// payloads, Extra) the values JSON decodes into, the other Go number
// types, []string, map[string]string, Raw and any json.Marshaler such as
// json.RawMessage — without encoding/json, fmt or reflect: those three
// make up about 40% of a minimal Go plugin (docs/PLUGINS.md). Other values
// (structs, pointers, typed maps and slices) need reflection: importing
// apconnect/sdk-guest/plugin/structjson (reflection only) or
// apconnect/sdk-guest/plugin/stdlib (encoding/json) installs an encoder
// for them.

// marshalOther encodes the values appendValue does not know; nil until a
// package (structjson, stdlib) installs one with EncodeOthersWith.
var marshalOther func(v any) ([]byte, error)

// EncodeOthersWith installs marshal (encoding/json.Marshal, in practice)
// for the values the SDK's own encoder does not handle: structs, pointers
// and typed maps or slices in schemas, Structured results, proposal
// payloads and Extra. Import apconnect/sdk-guest/plugin/structjson or
// apconnect/sdk-guest/plugin/stdlib for its side effect instead of calling
// this directly; the last installed wins. Without it such a value
// makes the operation fail with code encode_failed, naming the fix.
func EncodeOthersWith(marshal func(v any) ([]byte, error)) { marshalOther = marshal }

// errNeedsReflection is the failure for a value only reflection encodes.
var errNeedsReflection = errors.New("plugin: a value is not one the SDK encodes without reflection " +
	"(nil, bool, string, a number, []any, []string, map[string]any, map[string]string, plugin.Raw or a json.Marshaler such as json.RawMessage); " +
	`for structs, pointers and typed maps or slices add import _ "apconnect/sdk-guest/plugin/structjson" (or .../plugin/stdlib) to the plugin`)

// marshaler is encoding/json's Marshaler, named here without importing it.
type marshaler interface {
	MarshalJSON() ([]byte, error)
}

// appendValue appends v as JSON.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return appendString(dst, v), nil
	case float64:
		return appendFloat(dst, v, 64)
	case float32:
		return appendFloat(dst, float64(v), 32)
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(dst, v, 10), nil
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		return appendStrings(dst, v), nil
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendString(dst, k), ':')
			var err error
			if dst, err = appendValue(dst, v[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case map[string]string:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendString(dst, k), ':')
			dst = appendString(dst, v[k])
		}
		return append(dst, '}'), nil
	case Raw:
		if len(v) == 0 {
			return append(dst, "null"...), nil
		}
		return appendCompact(dst, v)
	case marshaler:
		b, err := v.MarshalJSON()
		if err != nil {
			return dst, err
		}
		return appendCompact(dst, b)
	}
	if marshalOther == nil {
		return dst, errNeedsReflection
	}
	b, err := marshalOther(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendStrings appends a []string (null when nil, as encoding/json).
func appendStrings(dst []byte, v []string) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

var errBadFloat = errors.New("plugin: a number is NaN or infinite, which JSON cannot hold")

// appendFloat formats f as encoding/json does (ES6 number to string).
func appendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errBadFloat
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 becomes e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

var errBadMarshaler = errors.New("plugin: a MarshalJSON method (or a Raw) returned something that is not one JSON value")

// appendCompact appends the JSON value b without insignificant space and
// with <, >, &, U+2028 and U+2029 escaped, as encoding/json does with what
// a json.Marshaler returns.
func appendCompact(dst, b []byte) ([]byte, error) {
	start := ws(b, 0)
	end := valueEnd(b, start)
	if end < 0 || ws(b, end) != len(b) {
		return dst, errBadMarshaler
	}
	inString := false
	for i := start; i < end; i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			dst = append(dst, c, b[i+1])
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			continue
		case c == 0xE2 && i+2 < end && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[b[i+2]&0xF])
			i += 2
			continue
		}
		dst = append(dst, c)
	}
	return dst, nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped exactly as
// encoding/json.Marshal escapes it (HTML characters too). Plain printable
// ASCII is copied as is.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// object writes the members of one JSON object, remembering the first
// error; its methods mirror the struct tags of the output types.
type object struct {
	b   []byte
	n   int
	err error
}

func (o *object) key(k string) {
	if o.n == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(appendString(o.b, k), ':')
}

func (o *object) str(k, v string) { o.key(k); o.b = appendString(o.b, v) }

func (o *object) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *object) strs(k string, v []string) { o.key(k); o.b = appendStrings(o.b, v) }

func (o *object) strsOmit(k string, v []string) {
	if len(v) > 0 {
		o.strs(k, v)
	}
}

func (o *object) int(k string, v int64) { o.key(k); o.b = strconv.AppendInt(o.b, v, 10) }

func (o *object) intOmit(k string, v int64) {
	if v != 0 {
		o.int(k, v)
	}
}

func (o *object) value(k string, v any) {
	o.key(k)
	if o.err == nil {
		o.b, o.err = appendValue(o.b, v)
	}
}

func (o *object) valueOmit(k string, v any) {
	if v != nil {
		o.value(k, v)
	}
}

// list writes the key and a JSON array of n elements (null when isNil).
func (o *object) list(k string, n int, isNil bool, each func(i int)) {
	o.key(k)
	if isNil {
		o.b = append(o.b, "null"...)
		return
	}
	o.b = append(o.b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		each(i)
	}
	o.b = append(o.b, ']')
}

// end closes the object.
// element writes one object element of a list o is writing: fill writes
// its members, and the bytes and any error carry back to o.
func (o *object) element(fill func(e *object)) {
	e := object{b: o.b, err: o.err}
	fill(&e)
	e.end()
	o.b, o.err = e.b, e.err
}

func (o *object) end() {
	if o.n == 0 {
		o.b = append(o.b, '{')
	}
	o.b = append(o.b, '}')
}

// appendDescription encodes the describe output.
func appendDescription(dst []byte, d *description) ([]byte, error) {
	o := object{b: dst}
	o.str("name", d.Name)
	o.str("version", d.Version)
	o.int("abi_version", int64(d.ABIVersion))
	o.strOmit("description", d.Description)
	o.strsOmit("validates", d.Validates)
	o.strsOmit("watches", d.Watches)
	o.strsOmit("proposes", d.Proposes)
	if len(d.Tools) > 0 {
		o.list("tools", len(d.Tools), false, func(i int) {
			t := &d.Tools[i]
			o.element(func(to *object) {
				to.str("name", t.Name)
				to.strOmit("title", t.Title)
				to.str("description", t.Description)
				to.value("input_schema", t.InputSchema)
				to.valueOmit("output_schema", t.OutputSchema)
			})
		})
	}
	if len(d.Packs) > 0 {
		o.list("packs", len(d.Packs), false, func(i int) { o.b, o.err = appendPack(o.b, o.err, &d.Packs[i]) })
	}
	o.end()
	return o.b, o.err
}

// appendPack encodes a Pack (the pack output and the packs of describe).
func appendPack(dst []byte, err error, p *Pack) ([]byte, error) {
	o := object{b: dst, err: err}
	o.str("name", p.Name)
	o.str("version", p.Version)
	o.strOmit("title", p.Title)
	o.strOmit("description", p.Description)
	o.list("types", len(p.Types), p.Types == nil, func(i int) {
		t := &p.Types[i]
		o.element(func(to *object) {
			to.str("type", t.Type)
			to.str("kind", t.Kind)
			to.str("title", t.Title)
			to.strOmit("description", t.Description)
			to.value("schema", t.Schema)
			to.strsOmit("roles", t.Roles)
			to.strOmit("instructions", t.Instructions)
			to.strOmit("version", t.Version)
			to.strOmit("status", t.Status)
			to.intOmit("rate_hint", t.RateHint)
			to.intOmit("max_payload_hint", t.MaxPayloadHint)
			to.valueOmit("extra", t.Extra)
		})
	})
	o.end()
	return o.b, o.err
}

// appendToolResult encodes the tool output.
func appendToolResult(dst []byte, r *ToolResult) ([]byte, error) {
	o := object{b: dst}
	o.list("content", len(r.Content), r.Content == nil, func(i int) {
		o.element(func(c *object) {
			c.str("type", r.Content[i].Type)
			c.str("text", r.Content[i].Text)
		})
	})
	o.valueOmit("structured", r.Structured)
	if r.IsError {
		o.key("is_error")
		o.b = append(o.b, "true"...)
	}
	if len(r.Proposals) > 0 {
		o.list("proposals", len(r.Proposals), false, func(i int) {
			p := &r.Proposals[i]
			o.element(func(po *object) {
				po.str("type", p.Type)
				po.value("payload", p.Payload)
				po.strsOmit("mentions", p.Mentions)
				po.strsOmit("references", p.References)
			})
		})
	}
	o.end()
	return o.b, o.err
}

// sortedKeys returns the keys of m in order (nil when m is empty).
func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendWatchOutput encodes the watch result envelope.
func appendWatchOutput(dst []byte, items []watchItem) []byte {
	dst = append(dst, `{"items":[`...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"kind":"room.event.custom","seq":`...)
		dst = strconv.AppendInt(dst, it.seq, 10)
		dst = append(dst, `,"summary":`...)
		dst = appendString(dst, it.Summary)
		if it.Priority != "" {
			dst = append(dst, `,"priority":`...)
			dst = appendString(dst, it.Priority)
		}
		if it.RequiresResponse {
			dst = append(dst, `,"requires_response":true`...)
		}
		if it.Reason != "" {
			dst = append(dst, `,"reason":`...)
			dst = appendString(dst, it.Reason)
		}
		if len(it.SuggestedTools) > 0 {
			dst = append(dst, `,"suggested_tools":`...)
			dst = appendStrings(dst, it.SuggestedTools)
		}
		dst = append(dst, '}')
	}
	return append(dst, `]}`...)
}

// appendValidateOutput encodes the validate result envelope.
func appendValidateOutput(dst []byte, errs []FieldError) []byte {
	if len(errs) == 0 {
		return append(dst, `{"ok":true}`...)
	}
	dst = append(dst, `{"ok":false,"errors":[`...)
	for i, e := range errs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"path":`...)
		dst = appendString(dst, e.Path)
		dst = append(dst, `,"message":`...)
		dst = appendString(dst, e.Message)
		dst = append(dst, '}')
	}
	return append(dst, `]}`...)
}

// errorOutput encodes the error envelope returned with status 1.
func errorOutput(code, message string) []byte {
	dst := append([]byte(nil), `{"error":{"code":`...)
	dst = appendString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, truncate(message, 1024))
	return append(dst, `}}`...)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
