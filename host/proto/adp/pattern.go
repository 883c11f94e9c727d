package adp

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"apconnect/host/text"
)

// CheckPattern reports whether p is a portable pattern, as the type schema
// profile (12.3.1 rule 2) and the reference SDK 0.12.6 read it: one leading
// "^" and one trailing unescaped "$" are anchors; elsewhere "^", "$" and "."
// are refused outside character classes; the only escapes are \( \) \* \+
// \- \. \? \[ \\ \] \^ \{ \| \} \n \r \t; a class is "[" ["^"] then any
// characters but an unescaped "[" up to "]", and may not be empty; group
// modifiers "(?" are refused; the quantifiers * + ? {n} {n,} {n,m} need an
// operand and may not be lazy or possessive; an unescaped "}" or "]" and
// unbalanced parentheses are refused. The pattern must then compile (an
// inverted range such as [z-a] or a{5,3} does not).
//
// Counts above RE2's limit of 1000 (a{1001}) are portable: the validator
// matches them through an equivalent expansion (see goPattern).
func CheckPattern(p string) error {
	_, err := compilePortable(p)
	return err
}

// compilePortable checks p and compiles it for Go's RE2 with JSON Schema's
// unanchored search semantics.
func compilePortable(p string) (*regexp.Regexp, error) {
	g, err := goPattern(p)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(g)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %v", text.Truncate(p, 80), strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// goPattern checks that p is portable and returns it in RE2 syntax: the same
// text, except that a repetition whose counts exceed RE2's nesting limit
// (the product of nested counts may not pass 1000) is written as a
// concatenation of smaller repetitions matching the same strings, so
// x{2500} becomes (?:x){1000}(?:x){1000}(?:x){500}.
func goPattern(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", fmt.Errorf("pattern is not valid UTF-8")
	}
	body := strings.TrimPrefix(p, "^")
	head := p[:len(p)-len(body)]
	tail := ""
	if strings.HasSuffix(body, "$") && !strings.HasSuffix(body, `\$`) {
		body, tail = body[:len(body)-1], "$"
	}
	ps := &patternParser{src: []rune(body), pattern: p}
	out, _, err := ps.alternation(0)
	if err != nil {
		return "", err
	}
	if ps.pos != len(ps.src) {
		return "", ps.fail("unbalanced parenthesis")
	}
	return head + out + tail, nil
}

// re2MaxRepeat is RE2's bound on repetition counts (and on the product of
// nested ones).
const re2MaxRepeat = 1000

// maxPatternDepth bounds group nesting, as RE2 bounds parse trees.
const maxPatternDepth = 1000

// portableEscapes are the characters that may follow "\".
const portableEscapes = `()*+-.?[\]^{|}nrt`

// patternParser reads a portable pattern body and writes its RE2 form. need
// values are the smallest repetition budget a subexpression needs under
// RE2's nesting rule: 1 for a literal, c×need for a repetition counted c.
type patternParser struct {
	src     []rune
	pos     int
	pattern string
}

func (p *patternParser) peek(off int) rune {
	if p.pos+off >= len(p.src) {
		return -1
	}
	return p.src[p.pos+off]
}

func (p *patternParser) fail(reason string) error {
	return fmt.Errorf("pattern %q is not portable: %s", text.Truncate(p.pattern, 80), reason)
}

// alternation reads branches separated by "|" up to ")" or the end.
func (p *patternParser) alternation(depth int) (string, int, error) {
	if depth > maxPatternDepth {
		return "", 0, p.fail(fmt.Sprintf("groups nested deeper than %d", maxPatternDepth))
	}
	var b strings.Builder
	need := 1
	for {
		out, n, err := p.branch(depth)
		if err != nil {
			return "", 0, err
		}
		b.WriteString(out)
		need = max(need, n)
		if p.peek(0) != '|' {
			return b.String(), need, nil
		}
		b.WriteByte('|')
		p.pos++
	}
}

// branch reads pieces up to "|", ")" or the end.
func (p *patternParser) branch(depth int) (string, int, error) {
	var b strings.Builder
	need := 1
	for {
		switch p.peek(0) {
		case -1, '|', ')':
			return b.String(), need, nil
		}
		out, n, err := p.piece(depth)
		if err != nil {
			return "", 0, err
		}
		b.WriteString(out)
		need = max(need, n)
	}
}

// piece reads an atom and its quantifier, if any.
func (p *patternParser) piece(depth int) (string, int, error) {
	atom, need, err := p.atom(depth)
	if err != nil {
		return "", 0, err
	}
	switch c := p.peek(0); c {
	case '*', '+', '?':
		p.pos++
		if q := p.peek(0); q == '?' || q == '+' {
			return "", 0, p.fail("lazy or possessive quantifier")
		}
		return atom + string(c), need, nil
	case '{':
		return p.counted(atom, need)
	}
	return atom, need, nil
}

// counted reads {n}, {n,} or {n,m} after an atom.
func (p *patternParser) counted(atom string, need int) (string, int, error) {
	start := p.pos
	p.pos++ // '{'
	lo, ok := p.number()
	if !ok {
		return "", 0, p.fail("malformed quantifier")
	}
	hi, unbounded := lo, false
	if p.peek(0) == ',' {
		p.pos++
		if n, ok := p.number(); ok {
			hi = n
		} else {
			unbounded = true
		}
	}
	if p.peek(0) != '}' {
		return "", 0, p.fail("malformed quantifier")
	}
	p.pos++
	if q := p.peek(0); q == '?' || q == '+' {
		return "", 0, p.fail("lazy or possessive quantifier")
	}
	if !unbounded && hi < lo {
		return "", 0, p.fail(fmt.Sprintf("repetition {%d,%d} has its bounds reversed", lo, hi))
	}
	count := hi
	if unbounded {
		count = lo
	}
	if count == 0 || (count <= re2MaxRepeat && count*need <= re2MaxRepeat) {
		return atom + string(p.src[start:p.pos]), max(need, count*need), nil
	}
	// Too large for RE2 in one piece: split into chunks of at most k.
	k := re2MaxRepeat / need
	group := "(?:" + atom + ")"
	var b strings.Builder
	chunks := func(n int, required bool) {
		for n > 0 {
			c := min(n, k)
			if required {
				b.WriteString(group + "{" + strconv.Itoa(c) + "}")
			} else {
				b.WriteString(group + "{0," + strconv.Itoa(c) + "}")
			}
			n -= c
		}
	}
	chunks(lo, true)
	switch {
	case unbounded:
		b.WriteString(group + "*")
	case hi > lo:
		chunks(hi-lo, false)
	}
	return "(?:" + b.String() + ")", k * need, nil
}

// number reads decimal digits; counts past 10^7 are refused rather than
// expanded.
func (p *patternParser) number() (int, bool) {
	start := p.pos
	for c := p.peek(0); c >= '0' && c <= '9'; c = p.peek(0) {
		p.pos++
	}
	if p.pos == start || p.pos-start > 7 {
		return 0, false
	}
	n, err := strconv.Atoi(string(p.src[start:p.pos]))
	return n, err == nil
}

// atom reads an escape, a class, a group or a literal character.
func (p *patternParser) atom(depth int) (string, int, error) {
	switch c := p.peek(0); c {
	case '\\':
		return p.escape()
	case '[':
		return p.class()
	case '(':
		if p.peek(1) == '?' {
			return "", 0, p.fail("group modifiers")
		}
		p.pos++
		inner, need, err := p.alternation(depth + 1)
		if err != nil {
			return "", 0, err
		}
		if p.peek(0) != ')' {
			return "", 0, p.fail("unbalanced parenthesis")
		}
		p.pos++
		return "(" + inner + ")", need, nil
	case '*', '+', '?', '{':
		return "", 0, p.fail("quantifier without operand")
	case '.':
		return "", 0, p.fail("'.' outside a character class")
	case '^', '$':
		return "", 0, p.fail("anchor inside the pattern")
	case '}', ']':
		return "", 0, p.fail("unescaped " + string(c))
	default:
		p.pos++
		return string(c), 1, nil
	}
}

// escape reads a portable escape.
func (p *patternParser) escape() (string, int, error) {
	next := p.peek(1)
	if next < 0 {
		return "", 0, p.fail("dangling escape")
	}
	if !strings.ContainsRune(portableEscapes, next) {
		return "", 0, p.fail(`escape \` + string(next))
	}
	p.pos += 2
	return `\` + string(next), 1, nil
}

// class reads a character class: "[" ["^"] then anything but "[" (escapes
// checked) up to "]", not empty.
func (p *patternParser) class() (string, int, error) {
	start := p.pos
	p.pos++ // '['
	if p.peek(0) == '^' {
		p.pos++
	}
	if p.peek(0) == ']' {
		return "", 0, p.fail("empty character class")
	}
	for {
		switch p.peek(0) {
		case -1:
			return "", 0, p.fail("unterminated character class")
		case ']':
			p.pos++
			return string(p.src[start:p.pos]), 1, nil
		case '[':
			return "", 0, p.fail("nested character class")
		case '\\':
			if _, _, err := p.escape(); err != nil {
				return "", 0, err
			}
		default:
			p.pos++
		}
	}
}
