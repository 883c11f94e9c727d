package knowledge

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// Filters are the exact filters of a query and of a search. An empty string
// is an absent filter (no filter value may be empty); a nil time bound is
// absent.
type Filters struct {
	Actor    string // an Agent ID
	Type     string // an event type
	Kind     string // a contribution kind (publications only)
	Target   string // a dependency id
	Relation string // a relation kind (publications only; with Target, that edge)
	Tag      string
	Profile  string // a profile digest
	Language string // compared ASCII case-insensitively (publications only)
	Verdict  string // assessments only
	// CreatedFrom and CreatedBefore bound created_at: from ≤ created_at < before.
	CreatedFrom   *int64
	CreatedBefore *int64
}

// Query is a parsed query request: the filters plus the read parameters.
type Query struct {
	Filters
	AfterSeq *int64 // default 0
	Limit    *int64 // 1..MaxQueryLimit, default DefaultQueryLimit
	Cursor   string // "" when absent
}

// filterStrings maps each string filter name to its field.
func (f *Filters) filterStrings() []struct {
	name string
	ptr  *string
} {
	return []struct {
		name string
		ptr  *string
	}{
		{"actor", &f.Actor}, {"type", &f.Type}, {"kind", &f.Kind}, {"target", &f.Target},
		{"relation", &f.Relation}, {"tag", &f.Tag}, {"profile", &f.Profile},
		{"language", &f.Language}, {"verdict", &f.Verdict},
	}
}

// integerParams are the query parameters that carry integers.
var integerParams = []string{"created_from", "created_before", "limit", "after_seq"}

// queryParams are every query parameter name.
var queryParams = []string{"actor", "type", "kind", "target", "relation", "tag", "profile", "language", "verdict",
	"created_from", "created_before", "after_seq", "limit", "cursor"}

// ParseQuery reads a query from decoded HTTP parameters, in order, as the
// SDK's parse_knowledge_query does: an unknown or repeated name is
// invalid_request; the integer parameters (created_from, created_before,
// limit, after_seq) are decimal digits only, at most MaxIntegerDigits after
// leading zeros; then QueryFromValue's checks apply.
func ParseQuery(params [][2]string) (*Query, error) {
	m := make(map[string]any, len(params))
	for _, p := range params {
		key, value := p[0], p[1]
		if _, dup := m[key]; dup || !slices.Contains(queryParams, key) {
			return nil, errorf(CodeInvalidRequest, "", "unknown or repeated query parameter %q", text.Truncate(key, 60))
		}
		if slices.Contains(integerParams, key) {
			if value == "" || strings.Trim(value, "0123456789") != "" {
				return nil, errorf(CodeInvalidRequest, "/"+key, "%s must be decimal digits", key)
			}
			digits := strings.TrimLeft(value, "0")
			if len(digits) > MaxIntegerDigits {
				return nil, errorf(CodeInvalidRequest, "/"+key, "%s exceeds the safe integer range", key)
			}
			n, _ := strconv.ParseInt("0"+digits, 10, 64)
			m[key] = n
			continue
		}
		m[key] = value
	}
	return QueryFromValue(m)
}

// ParseQueryValues is ParseQuery over url.Values: a name with several
// values is a repeated parameter.
func ParseQueryValues(values url.Values) (*Query, error) {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var params [][2]string
	for _, k := range keys {
		for _, v := range values[k] {
			params = append(params, [2]string{k, v})
		}
	}
	return ParseQuery(params)
}

// QueryFromValue validates a query given as a JSON object (the SDK's
// validate_knowledge_query): the queryRequest schema, canonical ids for
// actor, target and profile, and a non-empty time range. Failures are
// invalid_request.
func QueryFromValue(v any) (*Query, error) {
	if err := checkStrict(v, "", 0); err != nil {
		return nil, recode(err, CodeInvalidRequest)
	}
	if err := ValidateSchema(v, "queryRequest"); err != nil {
		return nil, recode(err, CodeInvalidRequest)
	}
	m := obj(v)
	q := &Query{Cursor: str(m["cursor"])}
	if err := q.Filters.read(m); err != nil {
		return nil, err
	}
	q.AfterSeq = optInt(m, "after_seq")
	q.Limit = optInt(m, "limit")
	return q, nil
}

// read fills f from a schema-checked object and applies the filter rules
// beyond the schema.
func (f *Filters) read(m map[string]any) error {
	for _, s := range f.filterStrings() {
		*s.ptr = str(m[s.name])
	}
	f.CreatedFrom = optInt(m, "created_from")
	f.CreatedBefore = optInt(m, "created_before")
	if f.Actor != "" {
		if err := checkID(strings.TrimPrefix(f.Actor, "did:agent:"), CodeInvalidRequest, "/actor", "actor key"); err != nil {
			return err
		}
	}
	if f.Target != "" {
		if err := checkID(f.Target, CodeInvalidRequest, "/target", "target"); err != nil {
			return err
		}
	}
	if f.Profile != "" {
		if err := checkID(f.Profile, CodeInvalidRequest, "/profile", "profile"); err != nil {
			return err
		}
	}
	if f.CreatedFrom != nil && f.CreatedBefore != nil && *f.CreatedFrom >= *f.CreatedBefore {
		return errorf(CodeInvalidRequest, "/created_before", "the time range is empty: created_from must be before created_before")
	}
	return nil
}

// optInt reads an optional integer member of a schema-checked object.
func optInt(m map[string]any, key string) *int64 {
	v, ok := m[key]
	if !ok {
		return nil
	}
	n, _ := intOf(v)
	return &n
}

// Value returns the filters as a JSON object value with only the present
// members.
func (f *Filters) Value() map[string]any {
	m := map[string]any{}
	for _, s := range f.filterStrings() {
		if *s.ptr != "" {
			m[s.name] = *s.ptr
		}
	}
	if f.CreatedFrom != nil {
		m["created_from"] = *f.CreatedFrom
	}
	if f.CreatedBefore != nil {
		m["created_before"] = *f.CreatedBefore
	}
	return m
}

// Value returns the query as a JSON object value with only the present
// members (no defaults filled in).
func (q *Query) Value() map[string]any {
	m := q.Filters.Value()
	if q.AfterSeq != nil {
		m["after_seq"] = *q.AfterSeq
	}
	if q.Limit != nil {
		m["limit"] = *q.Limit
	}
	if q.Cursor != "" {
		m["cursor"] = q.Cursor
	}
	return m
}

// Params returns the query as HTTP parameters, sorted by name, as a client
// sends it.
func (q *Query) Params() url.Values {
	out := url.Values{}
	for k, v := range q.Value() {
		switch x := v.(type) {
		case string:
			out.Set(k, x)
		case int64:
			out.Set(k, strconv.FormatInt(x, 10))
		}
	}
	return out
}

// EffectiveLimit returns the page size: Limit, or DefaultQueryLimit.
func (q *Query) EffectiveLimit() int {
	if q.Limit == nil {
		return DefaultQueryLimit
	}
	return int(*q.Limit)
}

// EffectiveAfterSeq returns AfterSeq, or 0.
func (q *Query) EffectiveAfterSeq() int64 {
	if q.AfterSeq == nil {
		return 0
	}
	return *q.AfterSeq
}

// WithCursor returns a copy of the query with the cursor set, for the next
// page of a traversal.
func (q *Query) WithCursor(cursor string) *Query {
	c := *q
	c.Cursor = cursor
	return &c
}

// Matches is the SDK's exact filter predicate (knowledge_query_matches)
// over a validated event; after_seq, limit and cursor are not filters. Kind,
// tag, language and relation match publications only, verdict assessments
// only; profile matches a binding's digest; target without relation matches
// any dependency, with relation that relation's edge.
func (f *Filters) Matches(ev *identity.Event) bool {
	p := obj(ev.Payload)
	publish := ev.Type == TypePublish
	switch {
	case f.Actor != "" && f.Actor != ev.Actor,
		f.Type != "" && f.Type != ev.Type,
		f.Language != "" && (!publish || asciiLower(f.Language) != asciiLower(str(p["language"]))),
		f.Verdict != "" && (ev.Type != TypeAssess || f.Verdict != str(p["verdict"])),
		f.CreatedFrom != nil && ev.CreatedAt < *f.CreatedFrom,
		f.CreatedBefore != nil && ev.CreatedAt >= *f.CreatedBefore,
		f.Kind != "" && (!publish || f.Kind != str(p["kind"])),
		f.Tag != "" && (!publish || !containsString(arr(p["tags"]), f.Tag)),
		f.Profile != "" && !hasProfile(p, f.Profile):
		return false
	}
	if f.Relation != "" {
		if !publish {
			return false
		}
		for _, r := range arr(p["relations"]) {
			m := obj(r)
			if str(m["relation"]) == f.Relation && (f.Target == "" || str(m["target"]) == f.Target) {
				return true
			}
		}
		return false
	}
	if f.Target != "" {
		return slices.Contains(Dependencies(ev), f.Target)
	}
	return true
}

func containsString(list []any, s string) bool {
	for _, v := range list {
		if x, ok := v.(string); ok && x == s {
			return true
		}
	}
	return false
}

func hasProfile(p map[string]any, digest string) bool {
	for _, b := range arr(p["profiles"]) {
		if str(obj(obj(b)["profile"])["digest"]) == digest {
			return true
		}
	}
	return false
}

// asciiLower lowercases ASCII letters only, as the SDK's portable folding
// does; other characters are unchanged.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// ParseReadJSON strictly parses the body of a read request (batch,
// search): a body that is not strict I-JSON is invalid_request, as the
// SDK's parse_knowledge_read_json answers.
func ParseReadJSON(data []byte) (any, error) {
	v, err := identity.ParseStrict(data)
	if err != nil {
		e := errorf(CodeInvalidRequest, "", "the request body is not strict JSON: %v", err)
		if je, ok := err.(*identity.JSONError); ok {
			e.Pointer = je.Pointer
		}
		e.Err = err
		return nil, e
	}
	return v, nil
}

// ParseBatchRequest validates a batch request {hashes: [1..100 distinct
// ids]} (the SDK's validate_knowledge_batch_request) and returns the ids in
// request order. Failures are invalid_request.
func ParseBatchRequest(v any) ([]string, error) {
	if err := checkStrict(v, "", 0); err != nil {
		return nil, recode(err, CodeInvalidRequest)
	}
	if err := ValidateSchema(v, "batchRequest"); err != nil {
		return nil, recode(err, CodeInvalidRequest)
	}
	hashes := arr(obj(v)["hashes"])
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = str(h)
		if err := checkID(out[i], CodeInvalidRequest, fmt.Sprintf("/hashes/%d", i), "hash"); err != nil {
			return nil, err
		}
	}
	return out, nil
}
