package text

import (
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 4, "hel…"},
		{"héllo wörld", 3, "hé…"},
		{"日本語テキスト", 4, "日本語…"},
		{"", 0, ""},
		{"x", 0, "…"},
		{"ab", 1, "…"},
	} {
		got := Truncate(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) split a UTF-8 sequence: %q", tc.in, tc.n, got)
		}
	}
}

func FuzzTruncateNeverSplitsUTF8(f *testing.F) {
	f.Add("héllo wörld", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n > 1000 || n < -10 {
			return
		}
		got := Truncate(s, n)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if utf8.RuneCountInString(got) > max(n, 1) && got != s {
			t.Fatalf("Truncate(%q, %d) = %q is longer than %d code points", s, n, got, n)
		}
	})
}

func TestEscapePointer(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a/b": "a~1b", "m~n": "m~0n", "~/": "~0~1", "": ""} {
		if got := EscapePointer(in); got != want {
			t.Errorf("EscapePointer(%q) = %q, want %q", in, got, want)
		}
	}
}
