package identity

import "encoding/json"

// EqualValues reports whether two JSON values as the strict parser builds
// them (map[string]any, []any, string, json.Number, bool, nil; int64 and
// float64 from values built in Go) are the same value member for member.
// Two equal values have the same canonical form, so a value equal to one
// whose hash was checked has that hash too: comparing is the cheaper proof.
// A type it does not know is never equal to anything.
func EqualValues(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !EqualValues(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

// Equal reports whether two events have the same members and values
// (EqualValues): an event equal to one whose canonical form was hashed has
// that hash.
func (e *Event) Equal(o *Event) bool {
	if e.Protocol != o.Protocol || e.Type != o.Type || e.Actor != o.Actor || e.CreatedAt != o.CreatedAt || e.Nonce != o.Nonce ||
		len(e.Fields) != len(o.Fields) || !EqualValues(e.Payload, o.Payload) {
		return false
	}
	for k, v := range e.Fields {
		w, ok := o.Fields[k]
		if !ok || !EqualValues(v, w) {
			return false
		}
	}
	return true
}
