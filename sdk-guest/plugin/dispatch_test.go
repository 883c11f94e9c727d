package plugin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func init() {
	Register(Plugin{
		Name:    "t",
		Version: "1",
		Validators: map[string]ValidateFunc{
			"t.ok":  func(*ValidateRequest) []FieldError { return nil },
			"t.bad": func(r *ValidateRequest) []FieldError { return []FieldError{{Path: "payload/x", Message: ""}} },
			"t.boom": func(*ValidateRequest) []FieldError {
				panic("boom")
			},
		},
		Watchers: map[string]WatchFunc{
			"t.w": func(rec *Record, w *WatchRequest) *InboxItem {
				if !rec.Mentioned(w.Room.SelfID()) {
					return nil
				}
				return &InboxItem{Summary: strings.Repeat("é", 600), Reason: "mentioned \"you\"", Priority: "urgent",
					SuggestedTools: []string{"a", "b", "a", "Bad-Name"}}
			},
		},
		Tools: []Tool{
			{Name: "ok", Description: "d", Handler: func(r *ToolRequest) (*ToolResult, error) {
				return &ToolResult{Structured: map[string]any{"n": r.NowMS}}, nil
			}},
			{Name: "err", Description: "d", Handler: func(*ToolRequest) (*ToolResult, error) { return nil, errors.New("nope") }},
		},
		Packs: []Pack{{Name: "t:p", Version: "1.0", Types: []TypeDef{{Type: "t.w", Kind: "signal", Title: "W", Schema: map[string]any{"type": "object"}}}}},
	})
}

func handle(t *testing.T, op Op, in string) (map[string]any, bool) {
	t.Helper()
	out, ok := Handle(op, []byte(in))
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("op %d: output is not JSON: %s", op, out)
	}
	return v, ok
}

func TestHandle(t *testing.T) {
	d, ok := handle(t, OpDescribe, `{"op":"describe","now_ms":1,"abi_version":1}`)
	if !ok || d["name"] != "t" || d["abi_version"] != float64(1) || len(d["validates"].([]any)) != 3 || d["tools"].([]any)[0].(map[string]any)["input_schema"] == nil {
		t.Fatalf("describe = %v", d)
	}

	v, ok := handle(t, OpValidate, `{"op":"validate","now_ms":1,"proposal":{"type":"t.ok","payload":{}},"room":{"room_id":"r"}}`)
	if !ok || v["ok"] != true {
		t.Errorf("validate ok = %v", v)
	}
	v, ok = handle(t, OpValidate, `{"op":"validate","now_ms":1,"proposal":{"type":"t.bad","payload":{}},"room":{"room_id":"r"}}`)
	errs := v["errors"].([]any)
	if !ok || v["ok"] != false || errs[0].(map[string]any)["path"] != "/payload/x" || errs[0].(map[string]any)["message"] != "invalid" {
		t.Errorf("validate bad = %v", v)
	}
	v, ok = handle(t, OpValidate, `{"op":"validate","now_ms":1,"proposal":{"type":"t.boom","payload":{}},"room":{"room_id":"r"}}`)
	if ok || v["error"].(map[string]any)["code"] != "panic" {
		t.Errorf("panicking validator = %v", v)
	}
	v, ok = handle(t, OpValidate, `{"op":"validate","now_ms":1,"proposal":{"type":"t.none","payload":{}},"room":{"room_id":"r"}}`)
	if ok || v["error"].(map[string]any)["code"] != "unknown_type" {
		t.Errorf("unknown type = %v", v)
	}

	w, ok := handle(t, OpWatch, `{"op":"watch","now_ms":1,"room":{"room_id":"r","self":{"agent_id":"`+agentA+`"}},"records":[`+
		`{"seq":5,"event_id":"`+event1+`","type":"t.w","accepted_at":1,"mentions":["`+agentA+`"]},`+
		`{"seq":6,"event_id":"`+event1+`","type":"t.w","accepted_at":1},`+
		`{"seq":7,"event_id":"`+event1+`","type":"t.other","accepted_at":1,"mentions":["`+agentA+`"]}]}`)
	items := w["items"].([]any)
	if !ok || len(items) != 1 {
		t.Fatalf("watch = %v", w)
	}
	it := items[0].(map[string]any)
	if it["seq"] != float64(5) || it["kind"] != "room.event.custom" || len(it["summary"].(string)) > maxSummary ||
		it["reason"] != `mentioned "you"` || it["priority"] != "normal" || len(it["suggested_tools"].([]any)) != 2 {
		t.Errorf("item = %v", it)
	}

	r, ok := handle(t, OpTool, `{"op":"tool","now_ms":77,"name":"ok","arguments":{},"context":{}}`)
	if !ok || r["structured"].(map[string]any)["n"] != float64(77) || r["content"].([]any)[0].(map[string]any)["text"] != `{"n":77}` {
		t.Errorf("tool ok = %v", r)
	}
	r, ok = handle(t, OpTool, `{"op":"tool","now_ms":1,"name":"err","arguments":{},"context":{}}`)
	if !ok || r["is_error"] != true || r["content"].([]any)[0].(map[string]any)["text"] != "nope" {
		t.Errorf("tool err = %v", r)
	}
	r, ok = handle(t, OpTool, `{"op":"tool","now_ms":1,"name":"zzz","arguments":{},"context":{}}`)
	if ok || r["error"].(map[string]any)["code"] != "unknown_tool" {
		t.Errorf("unknown tool = %v", r)
	}

	p, ok := handle(t, OpPack, `{"op":"pack","now_ms":1,"name":"t:p"}`)
	if !ok || p["version"] != "1.0" || len(p["types"].([]any)) != 1 {
		t.Errorf("pack = %v", p)
	}
	e, ok := handle(t, Op(99), `{}`)
	if ok || e["error"].(map[string]any)["code"] != "unknown_op" {
		t.Errorf("unknown op = %v", e)
	}
	e, ok = handle(t, OpWatch, `{"records":[{"seq":`)
	if ok || e["error"].(map[string]any)["code"] != "bad_input" {
		t.Errorf("bad input = %v", e)
	}
}
