package adp

import (
	"regexp"
	"strings"
	"testing"
)

// TestPortablePatterns holds the 4.9 table of design/PROTOCOL-0.12.md: the
// verdicts of the reference SDK 0.12.6's portable-pattern check plus its
// compile step.
func TestPortablePatterns(t *testing.T) {
	ok := []string{
		`a{1001}`, `[a-b-c]`, `[-a]`, `[a-]`, ``, `^$`, `()`, `(a|)`, `[.]`, `[a\-z]`, `a{2,}`, `é`,
		`^[A-Za-z0-9_-]{43}$`, `[^,]{1,3}`, `\.\-`, `[$^.]`, `a{0}`, `x{2500}`, `(ab){3000}`, `(a{10}){200}`,
	}
	refused := []string{
		`[z-a]`, `a{5,3}`, `a\$`, `[^]`, `[]a]`, `\d`, `[\d]`, `\p{L}`, `(?:a)`, `a{,2}`, `.`, `\u0041`,
		`a{1}{2}`, `x*?`, `\/`, `[[]`, `a**`, `+a`, `a|*`, `(`, `)`, `a}`, `a]`, `\`, `a^b`, `a$b`, `x{2}+`,
	}
	for _, p := range ok {
		if err := CheckPattern(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
	for _, p := range refused {
		if err := CheckPattern(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

// TestLargeRepetitionsMatchTheSameStrings checks the RE2 expansion of counts
// past 1000 against a plain rendering of the same language.
func TestLargeRepetitionsMatchTheSameStrings(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		yes, no []string
	}{
		{`^a{1001}$`, []string{strings.Repeat("a", 1001)}, []string{strings.Repeat("a", 1000), strings.Repeat("a", 1002)}},
		{`^a{1000,2500}$`, []string{strings.Repeat("a", 1000), strings.Repeat("a", 2500), strings.Repeat("a", 1733)}, []string{strings.Repeat("a", 999), strings.Repeat("a", 2501)}},
		{`^(ab){1500,}$`, []string{strings.Repeat("ab", 1500), strings.Repeat("ab", 4000)}, []string{strings.Repeat("ab", 1499), strings.Repeat("ab", 1500) + "a"}},
		{`^(a{10}){150}$`, []string{strings.Repeat("a", 1500)}, []string{strings.Repeat("a", 1490), strings.Repeat("a", 1510)}},
		{`x{0,1200}y`, []string{"y", strings.Repeat("x", 1200) + "y"}, []string{"x"}},
	} {
		re, err := compilePortable(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		for _, s := range tc.yes {
			if !re.MatchString(s) {
				t.Errorf("%s does not match %d runes", tc.pattern, len(s))
			}
		}
		for _, s := range tc.no {
			if re.MatchString(s) {
				t.Errorf("%s matches %d runes", tc.pattern, len(s))
			}
		}
	}
}

// TestSmallPatternsAreUnchanged checks that patterns RE2 takes as they are
// are compiled as written.
func TestSmallPatternsAreUnchanged(t *testing.T) {
	for _, p := range []string{`^[a-z]{1,1000}$`, `(a|b)+c?`, `[a-b-c]`, `x{2,}`, `^$`} {
		g, err := goPattern(p)
		if err != nil || g != p {
			t.Errorf("goPattern(%q) = %q, %v", p, g, err)
		}
		if _, err := regexp.Compile(g); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}
