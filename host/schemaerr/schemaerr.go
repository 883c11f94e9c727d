// Package schemaerr flattens a JSON Schema validation error of
// github.com/santhosh-tekuri/jsonschema/v6 into its leaf failures, in a
// stable order: the library reports the causes of a failure in no
// particular order, and every place that turns them into an error body or a
// message wants them the same way.
package schemaerr

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"apconnect/host/text"
)

// Leaf is one failed check.
type Leaf struct {
	// Pointer is the RFC 6901 pointer of the failing value in the instance
	// ("" for its root).
	Pointer string
	// Keyword is the keyword that failed ("type", "required", …; "" when the
	// library names none).
	Keyword string
	// Kind is the library's description of the failure, for callers that
	// expand some kinds (one issue per missing field, say).
	Kind jsonschema.ErrorKind
	// Message says what failed, in English.
	Message string
}

// printer renders messages in English, so they are stable.
var printer = message.NewPrinter(language.English)

// Leaves returns the leaf failures of err, sorted by pointer, keyword and
// message, without duplicates. An error that is not a
// *jsonschema.ValidationError is one leaf carrying its text.
func Leaves(err error) []Leaf {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Leaf{{Message: err.Error()}}
	}
	var out []Leaf
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Leaf{Pointer: Pointer(e.InstanceLocation), Keyword: keywordOf(e.ErrorKind), Kind: e.ErrorKind,
				Message: e.ErrorKind.LocalizedString(printer)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortFunc(out, func(a, b Leaf) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Keyword, b.Keyword), strings.Compare(a.Message, b.Message))
	})
	return slices.CompactFunc(out, func(a, b Leaf) bool {
		return a.Pointer == b.Pointer && a.Keyword == b.Keyword && a.Message == b.Message
	})
}

// Pointer renders reference tokens as an RFC 6901 pointer.
func Pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(text.EscapePointer(t))
	}
	return b.String()
}

// keywordOf names the keyword that produced a failure.
func keywordOf(k jsonschema.ErrorKind) string {
	if p := k.KeywordPath(); len(p) > 0 {
		return p[0]
	}
	switch k.(type) {
	case *kind.Not:
		return "not"
	case *kind.FalseSchema:
		return "false"
	case *kind.RefCycle:
		return "$ref"
	case *kind.InvalidJsonValue:
		return "type"
	}
	return ""
}
