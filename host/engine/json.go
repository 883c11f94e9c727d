package engine

import (
	"encoding/json"
	"maps"

	"apconnect/host/identity"
)

// JSONValue converts a Go value into the strictly parsed JSON value form
// (map[string]any, []any, json.Number, …) that identity.Event payloads
// hold.
func JSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return identity.ParseStrict(b)
}

// ObjectValue converts a Go value into a strictly parsed JSON object.
func ObjectValue(v any) (map[string]any, error) {
	out, err := JSONValue(v)
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, Invalid("value is not a JSON object")
	}
	return m, nil
}

// CloneMap returns a shallow copy of m (nil stays nil).
func CloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }
