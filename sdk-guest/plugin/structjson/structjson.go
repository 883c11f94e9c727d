// Package structjson lets the guest SDK encode structs, pointers and
// typed maps and slices — a tool's Structured result, most often — with
// reflection alone, writing what encoding/json.Marshal writes for them but
// without linking encoding/json and fmt: about 130 KB of module instead of
// the 800 KB package stdlib costs (docs/PLUGINS.md). Import it for its side
// effect:
//
//	import _ "apconnect/sdk-guest/plugin/structjson"
//
// It supports what plugin output types use: exported fields with `json`
// tags of a name and omitempty (or "-"), booleans, strings, numbers,
// pointers, interfaces, slices, arrays, maps with string or integer keys,
// and any type with a MarshalJSON method. Anything else — embedded
// structs, []byte, the ",string" option, MarshalText — fails the
// operation with encode_failed naming the type; package stdlib
// (encoding/json itself) handles those.
package structjson

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"apconnect/sdk-guest/plugin"
)

func init() { plugin.EncodeOthersWith(Marshal) }

// Marshal encodes v as encoding/json.Marshal would, for the values the
// package supports.
func Marshal(v any) ([]byte, error) {
	return appendValue(nil, reflect.ValueOf(v), 0)
}

// maxDepth stops a cyclic value.
const maxDepth = 1000

type marshaler interface {
	MarshalJSON() ([]byte, error)
}

var marshalerType = reflect.TypeFor[marshaler]()

func unsupported(t reflect.Type, why string) error {
	return errors.New("plugin/structjson: cannot encode " + t.String() + ": " + why +
		`; use package apconnect/sdk-guest/plugin/stdlib (encoding/json) for it`)
}

// leaf encodes a scalar through the SDK's own encoder.
func leaf(dst []byte, v any) ([]byte, error) {
	b, err := plugin.Marshal(v)
	return append(dst, b...), err
}

func appendValue(dst []byte, v reflect.Value, depth int) ([]byte, error) {
	if !v.IsValid() {
		return append(dst, "null"...), nil
	}
	if depth > maxDepth {
		return dst, errors.New("plugin/structjson: the value is nested too deeply (a cycle?)")
	}
	t := v.Type()
	if t.Implements(marshalerType) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		return leaf(dst, v.Interface())
	}
	if v.Kind() != reflect.Pointer && v.CanAddr() && reflect.PointerTo(t).Implements(marshalerType) {
		return leaf(dst, v.Addr().Interface())
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.AppendBool(dst, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(dst, v.Uint(), 10), nil
	case reflect.Float32:
		return leaf(dst, float32(v.Float()))
	case reflect.Float64:
		return leaf(dst, v.Float())
	case reflect.String:
		return leaf(dst, v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		return appendValue(dst, v.Elem(), depth+1)
	case reflect.Slice:
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return dst, unsupported(t, "byte slices are base64 in encoding/json")
		}
		fallthrough
	case reflect.Array:
		dst = append(dst, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, v.Index(i), depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case reflect.Map:
		return appendMap(dst, v, depth)
	case reflect.Struct:
		return appendStruct(dst, v, depth)
	}
	return dst, unsupported(t, "its kind has no JSON form")
}

func appendMap(dst []byte, v reflect.Value, depth int) ([]byte, error) {
	if v.IsNil() {
		return append(dst, "null"...), nil
	}
	type member struct {
		key string
		val reflect.Value
	}
	members := make([]member, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		k := it.Key()
		var ks string
		switch k.Kind() {
		case reflect.String:
			ks = k.String()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			ks = strconv.FormatInt(k.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			ks = strconv.FormatUint(k.Uint(), 10)
		default:
			return dst, unsupported(v.Type(), "map keys must be strings or integers")
		}
		members = append(members, member{ks, it.Value()})
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = leaf(dst, m.key); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = appendValue(dst, m.val, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendStruct(dst []byte, v reflect.Value, depth int) ([]byte, error) {
	t := v.Type()
	dst = append(dst, '{')
	n := 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, tagged := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		if f.Anonymous {
			return dst, unsupported(t, "embedded field "+f.Name)
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omitEmpty := false
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "":
			case "omitempty":
				omitEmpty = true
			default:
				return dst, unsupported(t, "field "+f.Name+" has the tag option "+strconv.Quote(opt))
			}
		}
		if !tagged || name == "" {
			name = f.Name
		} else if !validTagName(name) {
			name = f.Name // encoding/json ignores an invalid name
		}
		fv := v.Field(i)
		if omitEmpty && isEmpty(fv) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		var err error
		if dst, err = leaf(dst, name); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = appendValue(dst, fv, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// validTagName is encoding/json's rule for a tag name it uses, except that
// every non-ASCII character counts as a letter.
func validTagName(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c >= 0x80:
		default:
			return false
		}
	}
	return true
}

// isEmpty is omitempty's notion of empty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return false
}
