package room_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"apconnect/host/room"
	"apconnect/host/room/roomtest"
)

// DecodeTimelineItem gives what json.Unmarshal gives — value and error —
// for the items a room's records make, as stored, and for hand-written
// forms that leave its fast path (escapes, null members, duplicates, other
// cases, numbers that are not integers, invalid UTF-8, trailing data).
func TestDecodeTimelineItemMatchesUnmarshal(t *testing.T) {
	c := roomtest.NewChain(t, host, "itemroom", alice, nil)
	c.Join(t, bob, "speaker")
	c.Message(t, bob, "plain text")
	c.Message(t, alice, "escapes \" \\ / \n \t \u0001 <>& \u2028 é 😀", bob.ID)
	p := proc(bob.ID)
	res := mustProcess(t, p, nil, c.Records)
	var inputs []string
	for _, a := range res.Applied {
		b, err := json.Marshal(a.Item)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(b))
		it := a.Item
		it.Record = json.RawMessage(`{"seq":1}`)
		it.Extra = map[string]any{"n": 1.5, "s": []any{"x", nil, true}}
		it.Content = map[string]any{"k": []any{1.0, "v"}}
		it.Redacted = true
		b, _ = json.Marshal(it)
		inputs = append(inputs, string(b))
	}
	inputs = append(inputs,
		`{}`, ` { "seq" : 3 , "room_id" : "r" } `, `{"seq":null,"mentions":null,"payload":null,"content":null,"extra":null}`,
		`{"seq":1,"seq":2}`, `{"Seq":4}`, `{"seq":1.0}`, `{"seq":1e3}`, `{"seq":-0}`, `{"seq":01}`, `{"seq":"1"}`,
		`{"summary":"\ud83d\ude00 \ud83d x \udc00"}`, "{\"summary\":\"\xff\"}", `{"summary":"a\qb"}`,
		`{"mentions":["a",null]}`, `{"mentions":[]}`, `{"references":["x","y"]}`, `{"content":"text"}`, `{"content":12}`,
		`{"payload":{"a":[1,2,{"b":"}"}]},"kind":"k"}`, `{"payload":[1,2}`, `{"redacted":false}`, `{"redacted":1}`,
		`{"extra":{"a":1},"extra":{"b":2}}`, `{"unknown":1}`, `{"seq":1} x`, `{"seq":1`, `[]`, `null`, ``,
		`{"received_at":9007199254740993}`, `{"accepted_at":42}`, `{"received_at":1,"accepted_at":2}`, `{"seq":-5,"created_at":123}`,
	)
	for i, in := range inputs {
		var want, got room.TimelineItem
		werr := json.Unmarshal([]byte(in), &want)
		gerr := room.DecodeTimelineItem([]byte(in), &got)
		if (werr == nil) != (gerr == nil) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("input %d %q: error %v, json.Unmarshal %v", i, in, gerr, werr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("input %d %q:\n got %#v\nwant %#v", i, in, got, want)
		}
	}
}

func BenchmarkDecodeTimelineItem(b *testing.B) {
	c := roomtest.NewChain(b, host, "itemroom", alice, nil)
	c.Join(b, bob, "speaker")
	c.Message(b, bob, "message: a realistic line of discussion text, long enough to matter for the page size.", alice.ID)
	res := proc(bob.ID).Process(nil, c.Records, room.Options{})
	data, _ := json.Marshal(res.Applied[len(res.Applied)-1].Item)
	for _, name := range []string{"json.Unmarshal", "DecodeTimelineItem"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var it room.TimelineItem
				var err error
				if name == "json.Unmarshal" {
					err = json.Unmarshal(data, &it)
				} else {
					err = room.DecodeTimelineItem(data, &it)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
