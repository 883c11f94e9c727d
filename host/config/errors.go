package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned (wrapped) by Load when config.toml does not exist.
var ErrNotFound = errors.New("config file not found")

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Field is the path of the offending value, such as "hosts[1].url" or
	// "identities"; for a syntax or type error found while decoding it is
	// the dotted TOML key, and it may be empty.
	Field string
	// Line and Column locate the problem in the file (1-based) when it was
	// found while decoding, for a name in a host's grants (the item, even
	// inside a multi-line array) and for every problem in [limits], [mail]
	// and [wake] (the key, the array item, or the [[wake.command]] header
	// of a command that lacks argv); both are 0 for other problems found by
	// validation and for a configuration built in memory.
	Line, Column int
	// Message says what is wrong and, where it helps, how to fix it.
	Message string
}

// String formats the problem as "line 7, column 1: field: message" with
// the parts that are known.
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ", column %d", p.Column)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is a configuration that cannot be used: one or more problems, found
// while decoding (with line numbers) or validating (with field paths).
type Error struct {
	// File is the configuration file, or "" for a configuration built in
	// memory.
	File string
	// Problems lists every problem found, in file order for decoding
	// problems and in field order for validation problems.
	Problems []Problem
}

// Error lists every problem, one per line, each prefixed with the file.
func (e *Error) Error() string {
	where := "config"
	if e.File != "" {
		where = "config " + e.File
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = where + ": " + p.String()
	}
	return strings.Join(lines, "\n")
}

// Field returns the first problem for field, and whether there is one.
func (e *Error) Field(field string) (Problem, bool) {
	for _, p := range e.Problems {
		if p.Field == field {
			return p, true
		}
	}
	return Problem{}, false
}

// problems collects validation problems.
type problems []Problem

func (ps *problems) add(field, format string, args ...any) {
	*ps = append(*ps, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}
