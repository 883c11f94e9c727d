package identity

import (
	"crypto/ed25519"
	"strings"
	"testing"
)

// benchEvent is an ADP message of about 1 KiB in canonical form.
func benchEvent(s Signer) Event {
	ev := discourseEvent(s, "message.create")
	ev.Payload = map[string]any{
		"content_type": "text/markdown",
		"content":      strings.Repeat("Café ☕ lorem ipsum dolor sit amet. ", 18),
		"references":   []any{"pSqPTRievcRBpiy9Uk61jqkVdulqwvl-mp-FemLvsNs"},
	}
	return ev
}

func BenchmarkSignEvent(b *testing.B) {
	s := testSigner(b, "bench")
	ev := benchEvent(s)
	for b.Loop() {
		if _, err := SignEvent(s, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyStrict is the strict Ed25519 check alone (section 3.1).
func BenchmarkVerifyStrict(b *testing.B) {
	s := testSigner(b, "bench")
	pub := s.key.Public().(ed25519.PublicKey)
	msg := make([]byte, 32)
	sig := s.SignDigest(msg)
	for b.Loop() {
		if err := VerifyStrict(pub, msg, sig); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseEnvelope is the full live-write verification of a 1 KiB
// envelope: strict parse, shape, JCS, SHA3 and strict signature.
func BenchmarkParseEnvelope(b *testing.B) {
	s := testSigner(b, "bench")
	env, err := SignEvent(s, benchEvent(s))
	if err != nil {
		b.Fatal(err)
	}
	wire, _ := env.MarshalJSON()
	b.SetBytes(int64(len(wire)))
	for b.Loop() {
		if _, err := ParseEnvelope(wire); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJCS1KiB(b *testing.B) {
	s := testSigner(b, "bench")
	ev := benchEvent(s)
	obj := ev.Object()
	c, _ := Canonicalize(obj)
	if len(c) < 1000 || len(c) > 1200 {
		b.Fatalf("bench event is %d bytes, want about 1 KiB", len(c))
	}
	b.SetBytes(int64(len(c)))
	for b.Loop() {
		if _, err := Canonicalize(obj); err != nil {
			b.Fatal(err)
		}
	}
}
