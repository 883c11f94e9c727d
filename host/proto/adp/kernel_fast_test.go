package adp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"apconnect/host/identity"
)

// TestFastKernelMatchesSchema holds the fast validators to the embedded
// kernel schema: they are on for it, and every payload they call valid the
// schema accepts, over a combination of valid and broken members.
func TestFastKernelMatchesSchema(t *testing.T) {
	if _, err := currentKernel.compile(); err != nil {
		t.Fatal(err)
	}
	fast := currentKernel.fast["messageCreatePayload"]
	if fast == nil {
		t.Fatal("the fast path is off for the embedded kernel schema: update fastKernelDefs and fastMessageCreate with it")
	}
	sch, err := currentKernel.def("messageCreatePayload")
	if err != nil {
		t.Fatal(err)
	}
	h := func(c byte) string { return strings.Repeat(string(c), 43) }
	contentTypes := []any{nil, "text/plain", "", " ", "\u00a0\u2000", " x ", "\ufeff", "a\u3000", 5, json.Number("1"), "\xff"}
	contents := []any{nil, "hello", "", map[string]any{"a": 1}, []any{"x"}, json.Number("2"), true}
	refs := []any{nil, []any{}, []any{h('a')}, []any{h('a'), h('b')}, []any{h('a'), h('a')}, []any{h('a')[:42]},
		[]any{h('a') + "="}, []any{"é" + h('a')[:41]}, []any{5}, "x", manyRefs(17), manyRefs(16)}
	extras := []any{nil, map[string]any{}, map[string]any{"k": []any{1}}, "x", []any{}}
	others := []map[string]any{nil, {"other": 1}, {"content_types": "x"}}
	accepted, total, schemaOK := 0, 0, 0
	for _, ct := range contentTypes {
		for _, c := range contents {
			for _, r := range refs {
				for _, x := range extras {
					for _, o := range others {
						p := map[string]any{}
						set := func(k string, v any) {
							if v != nil {
								p[k] = v
							}
						}
						set("content_type", ct)
						set("content", c)
						set("references", r)
						set("extra", x)
						for k, v := range o {
							p[k] = v
						}
						total++
						if sch.Validate(p) == nil {
							schemaOK++
						}
						if !fast(p) {
							continue
						}
						accepted++
						if err := sch.Validate(p); err != nil {
							t.Fatalf("fast path accepts %#v; the schema does not: %v", p, err)
						}
					}
				}
			}
		}
	}
	for _, v := range []any{nil, "x", []any{}, map[string]string{"content_type": "a", "content": "b"}} {
		if fast(v) {
			t.Fatalf("fast path accepts %#v", v)
		}
	}
	if accepted == 0 || accepted == total {
		t.Fatalf("fast path accepted %d of %d payloads", accepted, total)
	}
	t.Logf("fast path accepted %d of %d payloads, the schema %d", accepted, total, schemaOK)
}

// TestFastKernelOffForOtherSchemas: a schema whose definitions differ from
// the text the fast validators mirror gets none.
func TestFastKernelOffForOtherSchemas(t *testing.T) {
	doc, err := identity.ParseStrict(kernelSchemaJSON)
	if err != nil {
		t.Fatal(err)
	}
	if fastValidators(doc) == nil {
		t.Fatal("no fast validators for the embedded schema")
	}
	defs := doc.(map[string]any)["$defs"].(map[string]any)
	defs["eventHash"].(map[string]any)["pattern"] = "^[A-Za-z0-9_-]{44}$"
	if fastValidators(doc) != nil {
		t.Fatal("fast validators for a changed schema")
	}
	legacy, err := identity.ParseStrict(legacyKernelSchemaJSON)
	if err != nil {
		t.Fatal(err)
	}
	if fastValidators(legacy) != nil {
		t.Fatal("fast validators for the 0f87fee schema")
	}
}

// manyRefs returns n distinct event hashes.
func manyRefs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("%043d", i)
	}
	return out
}
