package structjson_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/plugin/structjson"
)

type status string

type count struct {
	Reaction string `json:"reaction"`
	Count    int    `json:"count"`
}

type raw struct{ v string }

func (r raw) MarshalJSON() ([]byte, error) {
	if r.v == "" {
		return []byte("null"), nil
	}
	return []byte(r.v), nil
}

type ptrMarshaler struct{}

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{"n" : 1}`), nil }

type target struct {
	EventID  string          `json:"event_id"`
	Type     string          `json:"type,omitempty"`
	Seq      int64           `json:"seq,omitempty"`
	Score    *int64          `json:"score_sum,omitempty"`
	Ratio    float64         `json:"ratio,omitempty"`
	Small    float32         `json:"small"`
	Status   status          `json:"status"`
	Counts   []count         `json:"counts"`
	Ptrs     []*count        `json:"ptrs,omitempty"`
	Tags     map[string]int  `json:"tags,omitempty"`
	ByNum    map[int]string  `json:"by_num,omitempty"`
	Any      any             `json:"any"`
	Raw      raw             `json:"raw"`
	Msg      json.RawMessage `json:"msg,omitempty"`
	PR       plugin.Raw      `json:"pr,omitempty"`
	PM       ptrMarshaler    `json:"pm"`
	Arr      [2]bool         `json:"arr"`
	Skipped  string          `json:"-"`
	hidden   string          //nolint:unused // unexported fields are skipped
	Untagged uint8           //
	//lint:ignore SA5008 a tag name encoding/json refuses, on purpose: the field name is used instead
	Bad       string            `json:"bad\"name"`
	Nested    *target           `json:"nested,omitempty"`
	Strs      map[string]string `json:"strs"`
	Text      string            `json:"text"`
	Empty     []string          `json:"empty"`
	EmptyOmit []string          `json:"empty_omit,omitempty"`
}

func sample() *target {
	five := int64(-5)
	return &target{
		EventID: "ev<1>&", Seq: 7, Score: &five, Ratio: 1e-7, Small: 0.1, Status: "open",
		Counts: []count{{"👍", 2}, {"\u2028", 0}}, Ptrs: []*count{nil, {"x", 1}},
		Tags: map[string]int{"b": 2, "a": 1}, ByNum: map[int]string{10: "ten", 9: "nine"},
		Any: map[string]any{"k": []any{1.5, "s", nil, true}}, Raw: raw{` [1, 2] `}, Msg: json.RawMessage(`{"a" : "<"}`),
		PR: plugin.Raw(`[ "x" ]`), Arr: [2]bool{true, false}, Skipped: "no", hidden: "no", Untagged: 3, Bad: "b",
		Nested: &target{EventID: "inner", Counts: []count{}}, Strs: map[string]string{"z": "bad \xff"}, Text: "line\nbreak\t\"q\"",
		Empty: []string{}, EmptyOmit: []string{},
	}
}

// Marshal writes what encoding/json writes.
func TestMarshalMatchesEncodingJSON(t *testing.T) {
	for _, v := range []any{sample(), *sample(), []*target{sample(), nil}, map[string]*target{"t": sample()}, &target{},
		[]count(nil), map[string]count(nil), status("s"), [0]int{}, math.Copysign(0, -1), math.MaxInt64, uint64(math.MaxUint64)} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := structjson.Marshal(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Marshal(%T) = %s, %v\nencoding/json: %s", v, got, err, want)
		}
	}
}

// What it does not support fails with the type's name and the fix.
func TestMarshalRefusals(t *testing.T) {
	type embedded struct{ count }
	type stringOpt struct {
		N int `json:"n,string"`
	}
	type bytesField struct{ B []byte }
	for _, v := range []any{embedded{}, stringOpt{}, bytesField{B: []byte("x")}, map[bool]int{true: 1}, make(chan int), math.NaN()} {
		if _, err := structjson.Marshal(v); err == nil || (!strings.Contains(err.Error(), "plugin/stdlib") && !strings.Contains(err.Error(), "NaN")) {
			t.Errorf("%T: %v", v, err)
		}
	}
}

// Importing the package lets the SDK encode structs in tool results.
func TestToolResultWithStruct(t *testing.T) {
	out, ok := plugin.Handle(plugin.OpTool, []byte(`{"op":"tool","now_ms":1,"name":"summary","arguments":{}}`))
	if !ok || !bytes.Contains(out, []byte(`"structured":{"reaction":"r","count":3}`)) {
		t.Fatalf("%v %s", ok, out)
	}
}

func init() {
	plugin.Register(plugin.Plugin{Name: "t", Version: "1", Tools: []plugin.Tool{{Name: "summary", Description: "d",
		Handler: func(*plugin.ToolRequest) (*plugin.ToolResult, error) {
			return &plugin.ToolResult{Structured: count{"r", 3}}, nil
		}}}})
}
