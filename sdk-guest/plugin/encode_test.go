package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The SDK's encoder must write what encoding/json.Marshal writes: the host
// and the golden tool catalogs saw encoding/json's output before.

// specialStrings exercise every escaping rule of encoding/json.
var specialStrings = []string{
	"", "plain", `quote " and \ backslash`, "\b\f\n\r\t\x00\x1f\x7f", "<tag> & more",
	"é ü 😀 \u2028 \u2029", "bad \xff utf-8 \xe2\x80", "\ud7ff\ue000", strings.Repeat("é", 40),
}

func randomJSONValue(r *rand.Rand, depth int) any {
	switch r.IntN(9) {
	case 0:
		return specialStrings[r.IntN(len(specialStrings))]
	case 1:
		return []float64{0, 1.5, -2, 1e-7, 1e21, 123456789.125, 5e-324, math.MaxFloat64, 1e20}[r.IntN(9)]
	case 2:
		if depth < 3 {
			return []string{randomString(r), specialStrings[r.IntN(len(specialStrings))]}
		}
	case 3:
		if depth < 3 {
			return map[string]string{"a": randomString(r), specialStrings[r.IntN(len(specialStrings))]: "v"}
		}
	case 4:
		return json.RawMessage(" {\"k\" : [1, \"<&>\u2028\", {\"x\":\"\\\"esc\\\"\"} ] }\n")
	case 5:
		return []any{int8(-3), uint16(7), int32(-9), uint64(1 << 63), float32(0.1), Raw(`[ 1 , 2 ]`)}
	}
	return randomValue(r, depth)
}

func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 5000; i++ {
		v := randomJSONValue(r, 0)
		if m, ok := v.(map[string]any); ok {
			m["nested"] = randomJSONValue(r, 1)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendValue(nil, v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("appendValue(%#v) = %s, %v\nencoding/json: %s", v, got, err, want)
		}
	}
	for _, s := range specialStrings {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendValueRefusals(t *testing.T) {
	type point struct{ X int }
	for _, v := range []any{point{1}, &point{2}, []int{1}, map[string]int{"a": 1}} {
		if _, err := appendValue(nil, v); !errors.Is(err, errNeedsReflection) || !strings.Contains(err.Error(), "plugin/stdlib") {
			t.Errorf("%#v: %v", v, err)
		}
	}
	for _, v := range []any{math.NaN(), math.Inf(1), []any{math.Inf(-1)}} {
		if _, err := appendValue(nil, v); err == nil {
			t.Errorf("%v encoded", v)
		}
	}
	if _, err := appendValue(nil, json.RawMessage(`{"a":`)); err == nil {
		t.Error("a truncated RawMessage encoded")
	}
	if _, err := appendValue(nil, json.RawMessage(`1 2`)); err == nil {
		t.Error("two values encoded as one")
	}
	// With an encoder installed (package stdlib), the others go to it.
	EncodeOthersWith(json.Marshal)
	defer EncodeOthersWith(nil)
	if got, err := appendValue(nil, map[string]any{"p": point{1}}); err != nil || string(got) != `{"p":{"X":1}}` {
		t.Errorf("with encoding/json installed: %s %v", got, err)
	}
}

// The output types encode as their struct tags say.
func TestOutputTypesMatchEncodingJSON(t *testing.T) {
	p := current()
	d := describe(p)
	d.Tools = append(d.Tools, toolDesc{Name: "x", Title: "<X>", Description: "é", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: map[string]any{"type": "object"}})
	d.Proposes = []string{"t.w"}
	d.Packs = append(d.Packs, Pack{Name: "t:q", Version: "2", Title: "T", Description: "D", Types: []TypeDef{{
		Type: "t.q", Kind: "message", Title: "Q", Description: "d", Schema: map[string]any{"type": "object"}, Roles: []string{"speaker"},
		Instructions: "i", Version: "1", Status: "active", RateHint: 3, MaxPayloadHint: 4096, Extra: map[string]any{"x": true},
	}}}, Pack{Name: "t:empty", Version: "1"})
	check := func(what string, got []byte, err error, v any) {
		t.Helper()
		want, werr := json.Marshal(v)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %s %v\nencoding/json: %s %v", what, got, err, want, werr)
		}
	}
	got, err := appendDescription(nil, &d)
	check("description", got, err, d)
	got, err = appendDescription(nil, &description{Name: "n", Version: "v", ABIVersion: 1})
	check("bare description", got, err, description{Name: "n", Version: "v", ABIVersion: 1})
	for i := range d.Packs {
		got, err = appendPack(nil, nil, &d.Packs[i])
		check("pack", got, err, d.Packs[i])
	}
	for _, r := range []ToolResult{
		{Content: []Content{{Type: "text", Text: "a\nb"}}},
		{Content: []Content{{Type: "text", Text: "x"}, {Type: "text", Text: ""}}, Structured: map[string]any{"n": 1.5}, IsError: true},
		{Content: []Content{}, Proposals: []Proposal{{Type: "poll.vote", Payload: map[string]any{"o": []string{"a"}}, Mentions: []string{"m"}, References: []string{"r"}},
			{Type: "t", Payload: nil}}},
		{},
	} {
		got, err = appendToolResult(nil, &r)
		check("tool result", got, err, r)
	}
}

// Escaped strings decode as encoding/json decodes them.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	cases := []string{`"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u2028\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\udc00\ud800"`,
		"\"bad \xff\"", `"\u00"`, `"\x"`, `"\'"`, "\"ctl \x01\"", `"\uZZZZ"`, `"end\"`, `"`}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		b, _ := json.Marshal(randomString(r) + specialStrings[r.IntN(len(specialStrings))])
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		var want string
		werr := json.Unmarshal([]byte(c), &want)
		got, ok := unquoteBytes([]byte(c))
		if ok != (werr == nil) || got != want {
			t.Errorf("unquote(%q) = %q %v; encoding/json %q %v", c, got, ok, want, werr)
		}
	}
}

// Errorf and Logf write what fmt.Sprintf writes for the subset, and hand
// the rest to fmt once package stdlib installed it.
func TestSprintfMatchesFmt(t *testing.T) {
	type level int
	cases := []struct {
		format string
		args   []any
	}{
		{"plain", nil},
		{"100%% sure", nil},
		{"%s and %v", []any{"a", "b"}},
		{"%q is not a calendar date", []any{"2026-13-01\n"}},
		{"%d of %d; %v", []any{3, int64(-4), int32(5)}},
		{"%v %t", []any{true, false}},
		{"err: %v / %s / %q", []any{errors.New("e"), errors.New("f"), errors.New("g\"")}},
		{"level %s", []any{LevelWarn}},
		{"%d %v", []any{uint64(1 << 63), uint32(7)}},
	}
	for _, c := range cases {
		want := fmt.Sprintf(c.format, c.args...)
		got, ok := sprintfSubset(c.format, c.args)
		if !ok || got != want {
			t.Errorf("%q: %q %v, fmt %q", c.format, got, ok, want)
		}
	}
	for _, c := range []struct {
		format string
		args   []any
		want   string
	}{
		{"%5d", []any{1}, "%!5(unsupported)d"},
		{"%x", []any{255}, "%!x(unsupported)"},
		{"%s", nil, "%!s(MISSING)"},
		{"x", []any{1}, "x%!(EXTRA)"},
		{"%v", []any{level(1)}, "%!v(unsupported)"},
		{"%", nil, "%!(NOVERB)"},
	} {
		if got := sprintf(c.format, c.args); got != c.want {
			t.Errorf("without fmt %q: %q, want %q", c.format, got, c.want)
		}
	}
	FormatOthersWith(fmt.Sprintf)
	defer FormatOthersWith(nil)
	if got := Errorf("/p", "%5d|%x|%v", 1, 255, level(2)).Message; got != "    1|ff|2" {
		t.Errorf("with fmt installed: %q", got)
	}
}
