package text

import (
	"strings"
	"testing"
)

func TestCleanDefusesWhatTheHostRefuses(t *testing.T) {
	cases := []struct{ in, mustNot string }{
		{"<script>alert(1)</script>", "<"},
		{"see javascript:alert(1)", "javascript:"},
		{"open ui://app/panel", "ui://"},
		{"data:text/html,<b>x</b>", "data:text/html"},
		{"token eyJhbGciOiJFZERTQSJ9.eyJpc3MiOiJ4In0.c2ln", "eyJhbGciOiJFZERTQSJ9.eyJ"},
		{"-----BEGIN PRIVATE KEY-----", "-----"},
		{"Authorization: Bearer abc", "Bearer"},
		{`{"kind":"apconnect-ed25519-key"}`, "apconnect-ed25519"},
		{"line\nbreak\x00nul", "\n"},
	}
	for _, tc := range cases {
		got := Clean(tc.in, 200)
		if strings.Contains(got, tc.mustNot) {
			t.Errorf("Clean(%q) = %q still holds %q", tc.in, got, tc.mustNot)
		}
	}
	if got := Clean("plain words: fine", 200); got != "plain words: fine" {
		t.Errorf("harmless text changed: %q", got)
	}
}

func TestCleanCutsByCharacters(t *testing.T) {
	got := Clean(strings.Repeat("é", 20), 10)
	if got != strings.Repeat("é", 9)+"…" {
		t.Fatalf("got %q", got)
	}
	if got := Quote("x", 5); got != `"x"` {
		t.Fatalf("Quote = %q", got)
	}
}

func TestFormatting(t *testing.T) {
	if Plural(1, "vote") != "1 vote" || Plural(3, "vote") != "3 votes" || Plural(0, "vote") != "0 votes" {
		t.Fatal("Plural")
	}
	for ms, want := range map[int64]string{-5: "0s", 5_000: "5s", 120_000: "2m", 3 * 3600_000: "3h", 72 * 3600_000: "3d"} {
		if got := Until(ms); got != want {
			t.Errorf("Until(%d) = %q, want %q", ms, got, want)
		}
	}
	if Int(-42) != "-42" {
		t.Fatal("Int")
	}
}
