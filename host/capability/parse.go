package capability

import (
	"fmt"
	"strings"
)

// NameError is a name Parse, Lookup or UnmarshalText refused: not a name
// of the vocabulary, or one already listed.
type NameError struct {
	// Name is the refused name, as written.
	Name string
	// Index is its position in the list given to Parse (-1 for Lookup).
	Index int
	// Duplicate is set when Name is a valid name listed before, at First.
	Duplicate bool
	// First is the position of the earlier listing of a duplicate.
	First int
}

// Error names the refused name and says what is wrong with it.
func (e *NameError) Error() string {
	if e.Duplicate {
		return fmt.Sprintf("capability %q is listed twice (at %d and %d)", e.Name, e.First, e.Index)
	}
	msg := fmt.Sprintf("unknown capability %q", e.Name)
	if hint := suggest(e.Name); hint != "" {
		msg += " (did you mean " + hint + "?)"
	}
	return msg + "; the capabilities are " + strings.Join(All().Names(), ", ")
}

// byName maps each name of the vocabulary to its capability.
var byName = func() map[string]Capability {
	m := make(map[string]Capability, lastCapability)
	for c := DiscourseRead; c <= lastCapability; c++ {
		m[c.String()] = c
	}
	return m
}()

// Lookup returns the capability called name. Names are exact: lowercase,
// as the vocabulary writes them.
func Lookup(name string) (Capability, error) { return lookup(name, -1) }

func lookup(name string, index int) (Capability, error) {
	if c, ok := byName[name]; ok {
		return c, nil
	}
	return 0, &NameError{Name: name, Index: index}
}

// Parse returns the effective grants of a list of names: each named
// capability with the read a write implies. An unknown name or a name
// listed twice is a *NameError naming it; a write and its read may both be
// listed. An empty (or nil) list grants nothing: the caller decides what
// an absent list means.
func Parse(names []string) (Set, error) {
	var s Set
	first := make(map[Capability]int, len(names))
	for i, n := range names {
		c, err := lookup(n, i)
		if err != nil {
			return Set{}, err
		}
		if j, dup := first[c]; dup {
			return Set{}, &NameError{Name: n, Index: i, Duplicate: true, First: j}
		}
		first[c] = i
		s.bits |= c.Implies().bits
	}
	return s, nil
}

// suggest returns the name the operator probably meant, quoted, or "".
func suggest(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, cand := range []string{n, "agent." + n, strings.ReplaceAll(n, "_", "."), strings.ReplaceAll(n, ":", ".")} {
		if _, ok := byName[cand]; ok && cand != name {
			return fmt.Sprintf("%q", cand)
		}
	}
	// A whole protocol ("mail", "mail.*", "profile.*"): name both.
	p := strings.TrimSuffix(strings.TrimSuffix(n, "*"), ".")
	for _, proto := range Protocols() {
		if p == proto.prefix() || "agent."+p == proto.prefix() {
			return fmt.Sprintf("%q and %q", proto.Read().String(), proto.Write().String())
		}
	}
	return ""
}
