package mail

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// Frame lengths around the block edges: 4 + n bytes rounded up to 1024.
func TestFrameBoundaries(t *testing.T) {
	for _, tc := range []struct{ n, size int }{
		{1, 1024}, {1019, 1024}, {1020, 1024}, {1021, 2048}, {2044, 2048}, {2045, 3072},
		{3068, 3072}, {3069, 4096}, {MaxPacketBytes - 4, MaxPacketBytes}, {MaxPacketBytes, MaxPacketBytes + 1024},
	} {
		data := bytes.Repeat([]byte("x"), tc.n)
		f, err := Frame(data)
		if err != nil {
			t.Fatalf("%d: %v", tc.n, err)
		}
		if len(f) != tc.size || FrameSize(tc.n) != tc.size {
			t.Errorf("%d bytes: frame of %d (FrameSize %d), want %d", tc.n, len(f), FrameSize(tc.n), tc.size)
		}
		if binary.BigEndian.Uint32(f) != uint32(tc.n) || !bytes.Equal(f[4:4+tc.n], data) || bytes.ContainsFunc(f[4+tc.n:], func(r rune) bool { return r != 0 }) {
			t.Errorf("%d bytes: frame content", tc.n)
		}
		if tc.size <= MaxPacketBytes {
			got, err := Unframe(f)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%d bytes: Unframe %v", tc.n, err)
			}
		} else if _, err := Unframe(f); ErrorCode(err) != CodeInvalidEvent {
			t.Errorf("%d bytes: a frame over 1 MiB unframes: %v", tc.n, err)
		}
	}
	if _, err := Frame(nil); ErrorCode(err) != CodeInvalidEvent {
		t.Errorf("empty: %v", err)
	}
	if _, err := Frame(make([]byte, MaxPacketBytes+1)); ErrorCode(err) != CodePayloadTooLarge {
		t.Errorf("over 1 MiB: %v", err)
	}
}

func TestUnframeRefusals(t *testing.T) {
	good := mustFrame(t, []byte(`{"a":1}`))
	set := func(f []byte, i int, b byte) []byte { f = bytes.Clone(f); f[i] = b; return f }
	prefix := func(f []byte, n uint32) []byte { f = bytes.Clone(f); binary.BigEndian.PutUint32(f, n); return f }
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"1023 bytes", good[:1023]},
		{"1025 bytes", append(bytes.Clone(good), 0)},
		{"extra zero block", append(bytes.Clone(good), make([]byte, 1024)...)},
		{"non-zero last byte", set(good, 1023, 1)},
		{"non-zero byte after the JSON", set(good, 11, ' ')},
		{"zero length", prefix(good, 0)},
		{"length past the frame", prefix(good, 1021)},
		{"huge length", prefix(good, 0xffffffff)},
		{"length one short", prefix(good, 6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Unframe(tc.frame); ErrorCode(err) != CodeInvalidEvent {
				t.Fatalf("%v", err)
			}
		})
	}
	// 1020 bytes of JSON fill one block exactly; the length prefix may
	// then point at the frame's last byte.
	full := mustFrame(t, bytes.Repeat([]byte("x"), 1020))
	if got, err := Unframe(full); err != nil || len(got) != 1020 {
		t.Fatalf("full block: %d, %v", len(got), err)
	}
}

func TestDecodePlaintext(t *testing.T) {
	m := letter()
	canon := mustCanon(t, m)
	spaced := strings.Replace(string(canon), `,"from":`, `, "from":`, 1)
	for _, tc := range []struct {
		name string
		data []byte
		code string
	}{
		{"canonical message", canon, "ok"},
		{"a space", []byte(spaced), CodeInvalidEvent},
		{"escaped ASCII", bytes.Replace(canon, []byte(`"from"`), []byte(`"\u0066rom"`), 1), CodeInvalidEvent},
		{"escaped non-ASCII", bytes.Replace(canon, []byte("私"), []byte(`\u79c1`), 1), CodeInvalidEvent},
		{"invalid UTF-8", bytes.Replace(canon, []byte("私"), []byte{0xff, 0xfe, 0xfd}, 1), CodeInvalidEvent},
		{"not JSON", []byte("{"), CodeInvalidEvent},
		{"duplicate key", []byte(`{"a":1,"a":1}`), CodeInvalidEvent},
		{"canonical, not a message", []byte(`{"a":1}`), CodeInvalidEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodePlaintext(mustFrame(t, tc.data))
			wantCode(t, err, tc.code)
			if err == nil && !bytes.Equal(mustCanon(t, got), canon) {
				t.Fatal("the decoded message differs")
			}
		})
	}
	f, err := EncodePlaintext(m)
	if err != nil || !bytes.Equal(f, mustFrame(t, canon)) {
		t.Fatalf("EncodePlaintext: %v", err)
	}
	if _, err := EncodePlaintext(letter(func(m *Message) { m.Parts = nil })); ErrorCode(err) != CodeInvalidEvent {
		t.Fatalf("invalid message framed: %v", err)
	}
}

// b64urlPattern matches exactly what the schema's regular expression
// matches, on every short string over an alphabet that reaches each of its
// branches, and on long random ones.
func TestB64URLPatternEqualsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(strings.ReplaceAll(b64urlSchemaPattern, ecmaEnd, `\z`))
	var fast b64urlPattern
	alphabet := "AQgwEB9_-+=/ \n\u00e9"
	var walk func(prefix string, n int)
	checked := 0
	walk = func(prefix string, n int) {
		if fast.MatchString(prefix) != re.MatchString(prefix) {
			t.Fatalf("%q: fast %v, regexp %v", prefix, fast.MatchString(prefix), re.MatchString(prefix))
		}
		checked++
		if n == 0 {
			return
		}
		for _, c := range strings.Split(alphabet, "") {
			walk(prefix+c, n-1)
		}
	}
	walk("", 4)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(3000))
		for i := range b {
			b[i] = "ABCDQgw019_-"[rng.IntN(12)]
		}
		if rng.IntN(10) == 0 && len(b) > 0 {
			b[rng.IntN(len(b))] = "=+/\n"[rng.IntN(4)]
		}
		if s := string(b); fast.MatchString(s) != re.MatchString(s) {
			t.Fatalf("%q: fast %v, regexp %v", s, fast.MatchString(s), re.MatchString(s))
		}
	}
	if s, _ := schemaRegexp(b64urlSchemaPattern); s.String() != b64urlSchemaPattern {
		t.Fatal("the schema's base64url pattern is not matched by b64urlPattern")
	}
	if checked < 10000 {
		t.Fatalf("checked %d strings", checked)
	}
}
