package schemaerr

import (
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compile(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLeavesAreSortedAndPointAtTheValue(t *testing.T) {
	s := compile(t, `{"type":"object","properties":{"b":{"type":"string"},"a~/x":{"type":"integer","minimum":3}},"required":["c"]}`)
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"b":1,"a~/x":1}`))
	leaves := Leaves(s.Validate(doc))
	var got []string
	for _, l := range leaves {
		got = append(got, l.Pointer+" "+l.Keyword)
	}
	want := []string{" required", "/a~0~1x minimum", "/b type"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("leaves = %q, want %q", got, want)
	}
	for _, l := range leaves {
		if l.Message == "" || l.Kind == nil {
			t.Errorf("leaf %+v has no message or kind", l)
		}
	}
	// The order does not depend on the library's: a second run is identical.
	again := Leaves(s.Validate(doc))
	for i := range leaves {
		if leaves[i].Message != again[i].Message {
			t.Fatalf("run 2 differs at %d: %q vs %q", i, leaves[i].Message, again[i].Message)
		}
	}
}

func TestLeavesOfAnOtherErrorIsItsText(t *testing.T) {
	got := Leaves(errors.New("boom"))
	if len(got) != 1 || got[0].Message != "boom" || got[0].Pointer != "" {
		t.Fatalf("Leaves(plain) = %+v", got)
	}
}
