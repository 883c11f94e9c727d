package knowledge

import (
	"slices"
	"strings"
	"unicode/utf8"

	"apconnect/host/identity"
)

// TextTerms splits search text into terms as the SDK's knowledge_text_terms
// does: the text holds 1..MaxTextScalars Unicode scalar values; terms are
// the non-empty runs between ASCII white space (TAB, LF, VT, FF, CR,
// SPACE), lowercased in ASCII only (no Unicode folding or normalization); a
// lexical search allows at most MaxLexicalTerms. Failures are
// invalid_request.
func TextTerms(text string, lexical bool) ([]string, error) {
	if !utf8.ValidString(text) {
		return nil, errorf(CodeInvalidRequest, "/text", "text is not valid Unicode")
	}
	if n := utf8.RuneCountInString(text); n < 1 || n > MaxTextScalars {
		return nil, errorf(CodeInvalidRequest, "/text", "text must hold 1..%d Unicode scalar values, not %d", MaxTextScalars, n)
	}
	terms := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || '\t' <= r && r <= '\r' })
	if len(terms) == 0 || lexical && len(terms) > MaxLexicalTerms {
		return nil, errorf(CodeInvalidRequest, "/text", "text must hold 1..%d terms, not %d", MaxLexicalTerms, len(terms))
	}
	for i, t := range terms {
		terms[i] = asciiLower(t)
	}
	return terms, nil
}

// SearchableFields returns the text a lexical search looks in, ASCII
// lowercased: a publication's title, statement and basis, an assessment's
// summary and basis, a retraction's reason, and every string of the
// context (scope, conditions, limitations).
func SearchableFields(ev *identity.Event) []string {
	p := obj(ev.Payload)
	var names []string
	switch ev.Type {
	case TypePublish:
		names = []string{"title", "statement", "basis"}
	case TypeAssess:
		names = []string{"summary", "basis"}
	default:
		names = []string{"reason"}
	}
	var out []string
	for _, n := range names {
		out = append(out, asciiLower(str(p[n])))
	}
	ctx := obj(p["context"])
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch x := ctx[k].(type) {
		case string:
			out = append(out, asciiLower(x))
		case []any:
			for _, s := range x {
				out = append(out, asciiLower(str(s)))
			}
		}
	}
	return out
}

// TextMatches reports whether a validated event matches lexical search
// text: every term (TextTerms, lexical) is a substring of one of its
// SearchableFields. A text TextTerms refuses is its error.
func TextMatches(ev *identity.Event, text string) (bool, error) {
	terms, err := TextTerms(text, true)
	if err != nil {
		return false, err
	}
	return termsMatch(SearchableFields(ev), terms), nil
}

func termsMatch(fields, terms []string) bool {
	for _, t := range terms {
		found := false
		for _, f := range fields {
			if strings.Contains(f, t) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// SearchRequest is a validated search request.
type SearchRequest struct {
	Text    string
	Mode    string
	Filters Filters
	// HasFilters records whether the request carried a filters object (an
	// empty one included), so Value round-trips it.
	HasFilters bool
	Limit      *int64 // 1..MaxSearchLimit, default DefaultSearchLimit
}

// ParseSearchRequest validates a search request given as a JSON object
// against the modes a service advertises (the SDK's
// validate_knowledge_search_request), in its order: a string mode that is
// not a search mode or not advertised is unsupported_search_mode (a mode is
// never substituted); then the searchRequest schema, the text's terms
// (TextTerms, lexical for the lexical mode) and the filter rules, each
// invalid_request.
func ParseSearchRequest(v any, modes []string) (*SearchRequest, error) {
	if err := checkStrict(v, "", 0); err != nil {
		return nil, recode(err, CodeInvalidRequest)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errorf(CodeInvalidRequest, "", "a search request must be a JSON object")
	}
	if mode, ok := m["mode"].(string); ok && (!slices.Contains(searchModes, mode) || !slices.Contains(modes, mode)) {
		return nil, errorf(CodeUnsupportedSearchMode, "/mode", "search mode %q is not advertised", describe(mode))
	}
	if err := ValidateSchema(v, "searchRequest"); err != nil {
		return nil, recode(err, CodeInvalidRequest)
	}
	r := &SearchRequest{Text: str(m["text"]), Mode: str(m["mode"]), Limit: optInt(m, "limit")}
	if _, err := TextTerms(r.Text, r.Mode == ModeLexical); err != nil {
		return nil, err
	}
	if f, ok := m["filters"]; ok {
		r.HasFilters = true
		if err := r.Filters.read(obj(f)); err != nil {
			return nil, under(err, "/filters")
		}
	}
	return r, nil
}

// EffectiveLimit returns Limit, or DefaultSearchLimit.
func (r *SearchRequest) EffectiveLimit() int {
	if r.Limit == nil {
		return DefaultSearchLimit
	}
	return int(*r.Limit)
}

// Value returns the request as a JSON object value.
func (r *SearchRequest) Value() map[string]any {
	m := map[string]any{"text": r.Text, "mode": r.Mode}
	if r.HasFilters {
		m["filters"] = r.Filters.Value()
	}
	if r.Limit != nil {
		m["limit"] = *r.Limit
	}
	return m
}

// Eligible reports whether a visible, validated event may be a hit of the
// request: it matches the exact filters and, in the lexical mode, the text.
func (r *SearchRequest) Eligible(ev *identity.Event) bool {
	if !r.Filters.Matches(ev) {
		return false
	}
	if r.Mode != ModeLexical {
		return true
	}
	ok, err := TextMatches(ev, r.Text)
	return err == nil && ok
}

// Coverage says whether a search page holds every eligible event.
type Coverage struct {
	Exhaustive bool     `json:"exhaustive"`
	Reasons    []string `json:"reasons"` // empty exactly when Exhaustive
}

// Ranking names the ranking a search page used.
type Ranking struct {
	Mode string `json:"mode"`
	ID   string `json:"id"`
}

// CheckSelection is a service's check of the hits it is about to return
// for a request (the SDK store's search): candidates, in ranked order, are
// distinct ids of eligible events (Eligible over the visible events, whose
// ids are eligible), and coverage claims exhaustive only for a lexical page
// that holds every eligible event within the limit. Coverage must be
// well formed (reasons empty exactly when exhaustive, semantic and hybrid
// never exhaustive and always "approximate"), and the ranking mode must be
// the requested mode. Failures are invalid_response: the service's own
// fault, never the client's.
func CheckSelection(r *SearchRequest, eligible map[string]bool, candidates []string, ranking Ranking, coverage Coverage) error {
	seen := make(map[string]bool, len(candidates))
	for _, id := range candidates {
		if seen[id] || !eligible[id] {
			return errorf(CodeInvalidResponse, "", "candidates repeat an id or include one the exact filters exclude")
		}
		seen[id] = true
	}
	if coverage.Exhaustive && (len(candidates) != len(eligible) || len(candidates) > r.EffectiveLimit()) {
		return errorf(CodeInvalidResponse, "", "coverage claims exhaustive but the page does not hold every eligible event")
	}
	scratch := map[string]any{"ranking": map[string]any{"mode": ranking.Mode, "id": ranking.ID}, "coverage": coverage.value()}
	if list, _ := SchemaErrors(scratch["ranking"], "ranking"); len(list) > 0 {
		return errorf(CodeInvalidResponse, "/ranking", "malformed ranking")
	}
	if list, _ := SchemaErrors(scratch["coverage"], "coverage"); len(list) > 0 || (ranking.Mode != ModeLexical && (coverage.Exhaustive || !slices.Contains(coverage.Reasons, "approximate"))) {
		return errorf(CodeInvalidResponse, "/coverage", "malformed coverage for a %s ranking", ranking.Mode)
	}
	if ranking.Mode != r.Mode {
		return errorf(CodeInvalidResponse, "/ranking/mode", "the ranking mode differs from the requested mode")
	}
	return nil
}

func (c Coverage) value() map[string]any {
	reasons := make([]any, len(c.Reasons))
	for i, s := range c.Reasons {
		reasons[i] = s
	}
	return map[string]any{"exhaustive": c.Exhaustive, "reasons": reasons}
}
