package adp

import (
	"fmt"
	"regexp"
)

// CheckPattern reports whether p is a pattern the type schema profile
// (ADP 12.3.1 rule 2) admits: an I-Regexp (RFC 9485) without the \p{…} and
// \P{…} category escapes and without "." outside a character class,
// optionally preceded by "^" and followed by "$". Anywhere else "^" and "$"
// are refused, because I-Regexp reads them as literals while ECMA-262 and RE2
// read them as anchors.
//
// An admitted pattern must also compile under Go's RE2 engine, which the
// validator uses with JSON Schema's unanchored search semantics; that rejects
// repetition counts above 1000 and inverted ranges such as [z-a].
func CheckPattern(p string) error {
	ps := &reParser{src: []rune(p)}
	if ps.peek() == '^' {
		ps.pos++
	}
	if err := ps.alternation(0); err != nil {
		return err
	}
	if ps.pos == len(ps.src)-1 && ps.src[ps.pos] == '$' {
		ps.pos++
	}
	if ps.pos != len(ps.src) {
		return ps.fail("unexpected %q", ps.src[ps.pos])
	}
	if _, err := regexp.Compile(p); err != nil {
		return fmt.Errorf("pattern %q: %v", truncate(p, 80), err)
	}
	return nil
}

// reParser is a recursive-descent recognizer for the I-Regexp grammar of
// RFC 9485 section 5.3, narrowed by ADP 12.3.1.
type reParser struct {
	src []rune
	pos int
}

const reEOF = -1

func (p *reParser) peek() rune {
	if p.pos >= len(p.src) {
		return reEOF
	}
	return p.src[p.pos]
}

func (p *reParser) fail(format string, args ...any) error {
	return fmt.Errorf("pattern %q: offset %d: %s", truncate(string(p.src), 80), p.pos, fmt.Sprintf(format, args...))
}

// maxRegexpDepth bounds group nesting so hostile patterns cannot exhaust the
// stack.
const maxRegexpDepth = 64

// alternation parses branch *( "|" branch ).
func (p *reParser) alternation(depth int) error {
	if depth > maxRegexpDepth {
		return p.fail("groups nested deeper than %d", maxRegexpDepth)
	}
	for {
		if err := p.branch(depth); err != nil {
			return err
		}
		if p.peek() != '|' {
			return nil
		}
		p.pos++
	}
}

// branch parses *piece. It stops before "|", ")" and, at the top level, a
// final "$".
func (p *reParser) branch(depth int) error {
	for {
		c := p.peek()
		switch {
		case c == reEOF || c == '|' || c == ')':
			return nil
		case c == '$' && depth == 0 && p.pos == len(p.src)-1:
			return nil
		}
		if err := p.piece(depth); err != nil {
			return err
		}
	}
}

// piece parses atom [ quantifier ].
func (p *reParser) piece(depth int) error {
	if err := p.atom(depth); err != nil {
		return err
	}
	switch p.peek() {
	case '*', '+', '?':
		p.pos++
	case '{':
		return p.rangeQuantifier()
	}
	return nil
}

// rangeQuantifier parses "{" QuantExact [ "," [ QuantExact ] ] "}".
func (p *reParser) rangeQuantifier() error {
	p.pos++ // '{'
	if !p.digits() {
		return p.fail("a range quantifier needs a decimal count")
	}
	if p.peek() == ',' {
		p.pos++
		p.digits()
	}
	if p.peek() != '}' {
		return p.fail("unterminated range quantifier")
	}
	p.pos++
	return nil
}

func (p *reParser) digits() bool {
	start := p.pos
	for c := p.peek(); c >= '0' && c <= '9'; c = p.peek() {
		p.pos++
	}
	return p.pos > start
}

// atom parses NormalChar / charClass / "(" i-regexp ")".
func (p *reParser) atom(depth int) error {
	c := p.peek()
	switch c {
	case '(':
		p.pos++
		if err := p.alternation(depth + 1); err != nil {
			return err
		}
		if p.peek() != ')' {
			return p.fail("unterminated group")
		}
		p.pos++
		return nil
	case '[':
		return p.classExpr()
	case '\\':
		return p.escape()
	case '.':
		return p.fail(`"." outside a character class is excluded by the type schema profile`)
	case '^', '$':
		return p.fail("%q is only allowed as the first or last character", c)
	case ')', '*', '+', '?', ']', '{', '|', '}':
		return p.fail("unexpected %q", c)
	}
	p.pos++ // NormalChar
	return nil
}

// escape parses SingleCharEsc (and rejects the category escapes, which the
// profile excludes, and every other escape, which I-Regexp lacks).
func (p *reParser) escape() error {
	p.pos++ // '\'
	c := p.peek()
	switch c {
	case '(', ')', '*', '+', '-', '.', '?', '[', '\\', ']', '^', 'n', 'r', 't', '{', '|', '}':
		p.pos++
		return nil
	case 'p', 'P':
		return p.fail(`the \p{…} and \P{…} category escapes are excluded by the type schema profile`)
	case reEOF:
		return p.fail("pattern ends inside an escape")
	}
	return p.fail(`\%c is not an I-Regexp escape`, c)
}

// classExpr parses "[" [ "^" ] ( "-" / CCE1 ) *CCE1 [ "-" ] "]".
func (p *reParser) classExpr() error {
	p.pos++ // '['
	if p.peek() == '^' {
		p.pos++
	}
	if p.peek() == '-' {
		p.pos++
	} else if err := p.classElement(); err != nil {
		return err
	}
	for {
		switch c := p.peek(); {
		case c == ']':
			p.pos++
			return nil
		case c == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] == ']':
			p.pos += 2
			return nil
		case c == reEOF:
			return p.fail("unterminated character class")
		}
		if err := p.classElement(); err != nil {
			return err
		}
	}
}

// classElement parses CCE1 = ( CCchar [ "-" CCchar ] ).
func (p *reParser) classElement() error {
	if err := p.classChar(); err != nil {
		return err
	}
	if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
		p.pos++
		return p.classChar()
	}
	return nil
}

// classChar parses CCchar: any character except "-", "[", "\" and "]", or a
// SingleCharEsc.
func (p *reParser) classChar() error {
	switch c := p.peek(); c {
	case '\\':
		return p.escape()
	case '-', '[', ']':
		return p.fail("unexpected %q in a character class", c)
	case reEOF:
		return p.fail("unterminated character class")
	}
	p.pos++
	return nil
}

// truncate shortens untrusted text quoted in error messages.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
