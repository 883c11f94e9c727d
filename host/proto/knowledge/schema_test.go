package knowledge

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

// The embedded schema is the SDK's file, unchanged (schema/SOURCE.md).
func TestSchemaIsTheSDKCopy(t *testing.T) {
	sum := sha256.Sum256(SchemaJSON())
	if got := hex.EncodeToString(sum[:]); got != "7fa7ae9e3b8a26fc95e6a5e529869df2675ffaa8925119869ce0797acebca817" {
		t.Fatalf("schema/knowledge.schema.json changed: sha256 %s (update SOURCE.md only when it is a new SDK copy)", got)
	}
	if len(SchemaDefinitions()) < 40 {
		t.Fatalf("only %d definitions compiled", len(SchemaDefinitions()))
	}
}

// The ECMA patterns mean the same under RE2 after translation.
func TestTranslateECMA(t *testing.T) {
	tests := []struct {
		pattern, in string
		match       bool
	}{
		{`^[A-Za-z0-9_-]{43}$(?![\s\S])`, strings.Repeat("A", 43), true},
		{`^[A-Za-z0-9_-]{43}$(?![\s\S])`, strings.Repeat("A", 43) + "\n", false},
		{`^https://[^/?#@\s]+$(?![\s\S])`, "https://a.example", true},
		{`^https://[^/?#@\s]+$(?![\s\S])`, "https://a\u00a0b", false},
		{`^https://[^/?#@\s]+$(?![\s\S])`, "https://a\u2028b", false},
		{`^https://[^/?#@]+(?:[/?#].*)?$(?![\s\S])`, "https://a/b\rc", false},
		{`^https://[^/?#@]+(?:[/?#].*)?$(?![\s\S])`, "https://a/b\u2029c", false},
		{`^https://[^/?#@]+(?:[/?#].*)?$(?![\s\S])`, "https://a/b\tc", true},
		{`:443$(?![\s\S])`, "https://a:443", true},
		{`^\u0041$`, "A", true},
	}
	for _, tc := range tests {
		re := regexp.MustCompile(translateECMA(tc.pattern))
		if got := re.MatchString(tc.in); got != tc.match {
			t.Errorf("%s on %q: match %v, want %v (RE2 %s)", tc.pattern, tc.in, got, tc.match, translateECMA(tc.pattern))
		}
	}
}

func TestValidateSchema(t *testing.T) {
	if err := ValidateSchema(val(t, m{"hashes": a{digestOf("x")}}), "batchRequest"); err != nil {
		t.Fatal(err)
	}
	err := ValidateSchema(val(t, m{"hashes": a{}, "x": 1}), "batchRequest")
	if code(err) != CodeInvalidEvent || len(PayloadErrors(err)) != 2 {
		t.Fatalf("got %v with %v", err, PayloadErrors(err))
	}
	if err := ValidateSchema(m{}, "noSuchDefinition"); code(err) != CodeInvalidEvent {
		t.Fatalf("unknown definition: %v", err)
	}
}
