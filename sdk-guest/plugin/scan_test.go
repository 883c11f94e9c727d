package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// pad returns b with extra bytes after it, so that the word-at-a-time paths
// (which need bytes beyond the value) and the byte-at-a-time tails both run.
func variants(s string) [][]byte {
	return [][]byte{[]byte(s), []byte(s + strings.Repeat(" ", 32))}
}

func TestInteger(t *testing.T) {
	cases := []string{"0", "7", "-7", "42", "12345678", "123456789", "1779753700123",
		"9007199254740991", "-9007199254740991", "1234567890123456"}
	for _, c := range cases {
		want, _ := strconv.ParseInt(c, 10, 64)
		for _, b := range variants(c + ",") {
			got, end := integer(b, 0)
			if end != len(c) || got != want {
				t.Errorf("integer(%q) = %d, %d; want %d, %d", b, got, end, want, len(c))
			}
		}
	}
	for _, bad := range []string{"", "-", "x", "01", "12345678901234567", "1.5", "1e3", "-a"} {
		for _, b := range variants(bad + ",") {
			if _, end := integer(b, 0); end >= 0 {
				t.Errorf("integer(%q) accepted", b)
			}
		}
	}
}

func TestStringEnd(t *testing.T) {
	for _, s := range []string{``, `a`, `abcdefg`, `abcdefgh`, `abcdefghi`, `a\"b`, `\\`, `\\\"`,
		strings.Repeat("x", 100) + `\"` + strings.Repeat("y", 9), `日本語`, `\u00e9`} {
		lit := `"` + s + `"`
		for _, b := range variants(lit + `:1`) {
			end, escaped := stringEnd(b, 0)
			if end != len(lit) || escaped != strings.Contains(s, `\`) {
				t.Errorf("stringEnd(%q) = %d, %v", lit, end, escaped)
			}
		}
	}
	if end, _ := stringEnd([]byte(`"abc`), 0); end != -1 {
		t.Errorf("unterminated string accepted")
	}
}

// randomValue builds a random JSON value of bounded depth.
func randomValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(7); {
	case k == 0 || depth > 3:
		return randomString(r)
	case k == 1:
		return r.Int64N(1<<53) - 1<<52
	case k == 2:
		return r.IntN(2) == 0
	case k == 3:
		return nil
	case k == 4:
		n := r.IntN(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randomValue(r, depth+1)
		}
		return a
	default:
		n := r.IntN(4)
		m := map[string]any{}
		for i := 0; i < n; i++ {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	}
}

func randomString(r *rand.Rand) string {
	const alphabet = "ab\"\\/{}[],: \n\té日"
	var b strings.Builder
	for n := r.IntN(30); n > 0; n-- {
		if r.IntN(4) == 0 {
			rs := []rune(alphabet)
			b.WriteRune(rs[r.IntN(len(rs))])
		} else {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return b.String()
}

func TestValueEndMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		v := randomValue(r, 0)
		b, _ := json.Marshal(v)
		if i%2 == 1 {
			var ind bytes.Buffer
			_ = json.Indent(&ind, b, "", " ")
			b = ind.Bytes()
		}
		for _, in := range variants(string(b) + ",") {
			end := valueEnd(in, 0)
			if end != len(b) {
				t.Fatalf("valueEnd(%s) = %d, want %d", b, end, len(b))
			}
			raw := Raw(in[:end])
			var got, want any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal(b, &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("mismatch for %s", b)
			}
		}
	}
}

// hostRecord mirrors host/plugin.Record's JSON shape.
type hostRecord struct {
	Seq        int64           `json:"seq"`
	EventID    string          `json:"event_id"`
	Type       string          `json:"type"`
	Actor      string          `json:"actor,omitempty"`
	CreatedAt  int64           `json:"created_at,omitempty"`
	AcceptedAt int64           `json:"accepted_at"`
	Mentions   []string        `json:"mentions,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Redacted   bool            `json:"redacted,omitempty"`
}

const (
	agentA = "did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
	agentB = "did:agent:Speaker-00000000000000000000000000000000000"
	event1 = "cJg9aS9kgYX-vm1vpgdjCuaGSffm_EW5RoAJbAbk-ts"
)

func randomRecord(r *rand.Rand) hostRecord {
	h := hostRecord{Seq: r.Int64N(1<<40) + 1, EventID: event1, Type: "demo.t" + strconv.Itoa(r.IntN(9)), AcceptedAt: 1779753700000 + r.Int64N(1e6)}
	if r.IntN(3) > 0 {
		h.Actor = agentA
	}
	if r.IntN(2) == 0 {
		h.CreatedAt = 1779753700000
	}
	for n := r.IntN(3); n > 0; n-- {
		h.Mentions = append(h.Mentions, agentB)
	}
	if r.IntN(4) > 0 {
		p, _ := json.Marshal(map[string]any{"x": randomValue(r, 1), "s": randomString(r)})
		h.Payload = p
	}
	if r.IntN(10) == 0 {
		h = hostRecord{Seq: h.Seq, EventID: h.EventID, Type: h.Type, AcceptedAt: h.AcceptedAt, Redacted: true}
	}
	if r.IntN(8) == 0 {
		h.Type = `esc\"aped` // forces the slow path for type
	}
	return h
}

func TestDecodeRecordsMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		var recs []hostRecord
		for n := r.IntN(5) + 1; n > 0; n-- {
			recs = append(recs, randomRecord(r))
		}
		env := map[string]any{"op": "watch", "now_ms": 1779753700000, "records": recs,
			"room": map[string]any{"room_id": "r1", "self": map[string]any{"agent_id": agentA}}}
		b, _ := json.Marshal(env)
		switch i % 3 {
		case 1: // indented: every fast path fails
			var ind bytes.Buffer
			_ = json.Indent(&ind, b, "", "  ")
			b = ind.Bytes()
		case 2: // members in another order
			var generic map[string]any
			_ = json.Unmarshal(b, &generic)
			b, _ = json.Marshal(generic) // sorted keys
		}
		req, err := decodeWatch(b)
		if err != nil {
			t.Fatalf("decodeWatch(%s): %v", b, err)
		}
		if req.NowMS != 1779753700000 || req.Room.SelfID() != agentA || len(req.Records) != len(recs) {
			t.Fatalf("envelope mismatch for %s: %+v", b, req)
		}
		for j, h := range recs {
			g := req.Records[j]
			if g.Seq != h.Seq || g.EventID != h.EventID || g.Type != h.Type || g.Actor != h.Actor ||
				g.CreatedAt != h.CreatedAt || g.AcceptedAt != h.AcceptedAt || g.Redacted != h.Redacted ||
				!reflect.DeepEqual(g.Mentions, h.Mentions) {
				t.Fatalf("record %d of %s:\n got %+v\nwant %+v", j, b, g, h)
			}
			if (len(h.Payload) == 0) != (len(g.Payload) == 0) {
				t.Fatalf("payload presence mismatch in %s", b)
			}
			if len(h.Payload) > 0 {
				var gv, hv any
				_ = json.Unmarshal(g.Payload, &gv)
				_ = json.Unmarshal(h.Payload, &hv)
				if !reflect.DeepEqual(gv, hv) {
					t.Fatalf("payload mismatch: %s vs %s", g.Payload, h.Payload)
				}
			}
		}
	}
}

func TestRawAccessors(t *testing.T) {
	r := Raw(`{"a":{"b":[1,"x",true]},"s":"h\u00e9","n":-12,"t":true,"f":false,"l":["p","q"],` +
		`"a_much_longer_member_name_than_24_bytes":5,"esc\"key":1}`)
	if v, ok := r.Get("a", "b").Index(1).AsString(); !ok || v != "x" {
		t.Errorf("Get a.b[1] = %q %v", v, ok)
	}
	if v, ok := r.Get("s").AsString(); !ok || v != "hé" {
		t.Errorf("escaped string = %q %v", v, ok)
	}
	if v, ok := r.Get("n").AsInt(); !ok || v != -12 {
		t.Errorf("n = %d %v", v, ok)
	}
	if v, ok := r.Get("t").AsBool(); !ok || !v {
		t.Error("t")
	}
	if v, ok := r.Get("f").AsBool(); !ok || v {
		t.Error("f")
	}
	if v, ok := r.Get("l").AsStrings(); !ok || !reflect.DeepEqual(v, []string{"p", "q"}) {
		t.Errorf("l = %v", v)
	}
	if v, ok := r.Get("a_much_longer_member_name_than_24_bytes").AsInt(); !ok || v != 5 {
		t.Errorf("long name = %d %v", v, ok)
	}
	if r.Get("a_much_longer_member_name_than_24_byteX").Exists() {
		t.Error("a long name of the same length matched")
	}
	if v, ok := r.Get(`esc"key`).AsInt(); !ok || v != 1 {
		t.Errorf("escaped name = %d %v", v, ok)
	}
	if r.Get("missing").Exists() || r.Get("s", "x").Exists() || r.Get("a").Index(0).Exists() {
		t.Error("missing members found")
	}
	if r.Get("a", "b").Len() != 3 || r.Len() != 8 {
		t.Errorf("Len = %d, %d", r.Get("a", "b").Len(), r.Len())
	}
	var names []string
	r.Fields(func(n string, _ Raw) bool { names = append(names, n); return true })
	if len(names) != 8 || names[7] != `esc"key` {
		t.Errorf("Fields = %v", names)
	}
	if _, ok := r.Get("s").AsInt(); ok {
		t.Error("string read as int")
	}
	if r.Get("a").Kind() != KindObject || r.Get("l").Kind() != KindArray || Raw(nil).Kind() != KindInvalid {
		t.Error("Kind")
	}
}

func TestEqString(t *testing.T) {
	for _, c := range [][2]string{{"", ""}, {"a", "a"}, {"abcdefgh", "abcdefgh"}, {agentA, agentA},
		{agentA, agentB}, {"abcdefghi", "abcdefghj"}, {"xbcdefghi", "abcdefghi"}, {"short", "shorter"}} {
		if got := eqString(c[0], c[1]); got != (c[0] == c[1]) {
			t.Errorf("eqString(%q, %q) = %v", c[0], c[1], got)
		}
	}
}

// FuzzDecoders checks that no input makes a decoder panic or read out of
// bounds (run with -race, which turns on checkptr), and that accepted
// records agree with encoding/json where both accept.
func FuzzDecoders(f *testing.F) {
	f.Add([]byte(`{"op":"watch","now_ms":1,"room":{"room_id":"r"},"records":[{"seq":1,"event_id":"` + event1 + `","type":"a.b","accepted_at":2}]}`))
	f.Add([]byte(`{"records":[{"seq":12345678901234567890}]}`))
	f.Add([]byte(`{"a":"\u0000","b":[1,2,{"c":null}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeWatch(b)
		_, _ = decodeValidate(b)
		_, _ = decodeTool(b)
		_, _ = decodeName(b)
		r := Raw(b)
		_ = r.Get("a", "b").Len()
		_, _ = r.Get("records").Index(0).AsStrings()
		if end := valueEnd(b, 0); end > len(b) {
			t.Fatalf("valueEnd past the end: %d > %d", end, len(b))
		}
		for i := 0; i < len(b); i++ {
			_, _ = integer(b, i)
			_, _ = stringEnd(b, i)
		}
	})
}

func Example() {
	payload := Raw(`{"question":"Ship it?","options":["yes","no"]}`)
	q, _ := payload.Get("question").AsString()
	opts, _ := payload.Get("options").AsStrings()
	fmt.Println(q, opts)
	// Output: Ship it? [yes no]
}
