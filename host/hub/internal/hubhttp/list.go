package hubhttp

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// CheckQuery rejects query parameters other than allowed, and any parameter
// given more than once, with invalid_request. The hub is strict so that a
// client's misspelt parameter fails loudly instead of being ignored.
func CheckQuery(q url.Values, allowed ...string) error {
	for k, vs := range q {
		if !slices.Contains(allowed, k) {
			return Errorf(identity.CodeInvalidRequest, "unknown query parameter %q", text.Truncate(k, 60)).WithData("parameter", text.Truncate(k, 60))
		}
		if len(vs) > 1 {
			return Errorf(identity.CodeInvalidRequest, "query parameter %q given more than once", k).WithData("parameter", k)
		}
	}
	return nil
}

// ParseLimit reads the "limit" parameter (Agent Identity 8.2): absent means
// def; otherwise a positive decimal integer, capped at max.
func ParseLimit(q url.Values, def, max int) (int, error) {
	s, ok := q["limit"]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s[0])
	if err != nil || n < 1 || s[0][0] == '+' {
		return 0, Errorf(identity.CodeInvalidRequest, "limit must be a positive integer").WithData("parameter", "limit")
	}
	return min(n, max), nil
}

// cursorBody is what an opaque cursor encodes: the list it belongs to and a
// position. Clients never look inside.
type cursorBody struct {
	Scope string          `json:"s"`
	Key   json.RawMessage `json:"k"`
}

// EncodeCursor returns an opaque cursor for a position (any JSON value) in
// the list named scope.
func EncodeCursor(scope string, key any) string {
	k, err := json.Marshal(key)
	if err != nil {
		panic("hubhttp: unencodable cursor key: " + err.Error())
	}
	b, _ := json.Marshal(cursorBody{Scope: scope, Key: k})
	return identity.EncodeBase64URL(b)
}

// DecodeCursor decodes a cursor made by EncodeCursor for scope into key. A
// cursor that is malformed or belongs to another list is invalid_request.
func DecodeCursor(cursor, scope string, key any) error {
	bad := Errorf(identity.CodeInvalidRequest, "invalid cursor").WithData("parameter", "cursor")
	raw, err := identity.DecodeBase64URL(cursor)
	if err != nil || len(raw) > 1024 {
		return bad
	}
	var c cursorBody
	if err := identity.UnmarshalStrict(raw, &c); err != nil || c.Scope != scope || len(c.Key) == 0 {
		return bad
	}
	if err := identity.UnmarshalStrict(c.Key, key); err != nil {
		return bad
	}
	return nil
}
