package termsafe

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcödé, 日本語":           "plain text, ünïcödé, 日本語",
		"hide\x1b[8m the rest":               `hide\x1b[8m the rest`,
		"line\r\nAll checks passed.":         `line\r\nAll checks passed.`,
		"tab\there":                          `tab\there`,
		"title \x1b]0;owned\x07":             `title \x1b]0;owned\x07`,
		"del\x7f nul\x00":                    `del\x7f nul\x00`,
		"c1 \u009b31m csi":                   `c1 \u{009b}31m csi`,
		"bidi \u202egnp.exe":                 `bidi \u{202e}gnp.exe`,
		"zero\u200bwidth \ufeff":             `zero\u{200b}width \u{feff}`,
		"sep\u2028line":                      `sep\u{2028}line`,
		"tag \U000e0041":                     `tag \u{e0041}`,
		"bad utf-8 \xff\xfe":                 `bad utf-8 \xff\xfe`,
		`a literal backslash \x1b stays put`: `a literal backslash \x1b stays put`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		out := Escape(in)
		if strings.ContainsFunc(out, func(r rune) bool { return unsafe(r) }) {
			t.Errorf("Escape(%q) keeps an unsafe character: %q", in, out)
		}
	}
}

func TestJSON(t *testing.T) {
	v := map[string]string{"d": "a\x1b[8m\u009b\u202e\U000e0041\x7f", "ok": "ünï"}
	raw, _ := json.MarshalIndent(v, "", "  ")
	safe := JSON(raw)
	if strings.ContainsFunc(string(safe), func(r rune) bool { return unsafe(r) && r != '\n' }) {
		t.Fatalf("unsafe characters left: %q", safe)
	}
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil {
		t.Fatal(err)
	}
	if back["d"] != v["d"] || back["ok"] != v["ok"] {
		t.Fatalf("round trip: %q", back)
	}
	if !strings.Contains(string(safe), `\u009b`) || !strings.Contains(string(safe), `\udb40\udc41`) {
		t.Fatalf("%s", safe)
	}
}

func TestLines(t *testing.T) {
	in := "config: 2 problems:\n- key \x1b[8mx\n- plugin: \r\x1b[1AAll checks passed."
	want := "config: 2 problems:\n  - key \\x1b[8mx\n  - plugin: \\r\\x1b[1AAll checks passed."
	if got := Lines(in); got != want {
		t.Fatalf("Lines = %q, want %q", got, want)
	}
}
