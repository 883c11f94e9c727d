package mcpserver

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/hub/hubtest"
	"apconnect/host/toolcatalog"
)

// The Go input and result types of the tools (host/connector/io.go) restate
// the schemas of schemas/tools by hand. TestToolTypesMatchSchemas holds
// them together: for every catalog tool, the JSON names of the Go fields
// equal the schema's properties, at the top and in every nested object the
// two both describe, and every property the schema requires is a field
// without omitempty (for results: a required property is never left out).
func TestToolTypesMatchSchemas(t *testing.T) {
	t.Parallel()
	types := toolTypes(t)
	used := map[string]bool{}
	for _, name := range toolcatalog.Names() {
		io, ok := types[name]
		if !ok {
			t.Errorf("%s: no handler", name)
			continue
		}
		def, _ := toolcatalog.Lookup(name)
		for _, side := range []struct {
			what   string
			typ    reflect.Type
			schema json.RawMessage
		}{{"input", io.in, def.Input}, {"output", io.out, def.Output}} {
			var sch map[string]any
			if err := json.Unmarshal(side.schema, &sch); err != nil {
				t.Fatalf("%s %s schema: %v", name, side.what, err)
			}
			for _, d := range compareType(side.typ, sch, "") {
				d = name + " " + side.what + ": " + d
				if _, ok := typeSchemaExceptions[d]; ok {
					used[d] = true
					continue
				}
				t.Error(d)
			}
		}
	}
	for d := range typeSchemaExceptions {
		if !used[d] {
			t.Errorf("exception no longer needed: %s", d)
		}
	}
	if len(types) != len(toolcatalog.Names()) {
		t.Errorf("%d handlers for %d catalog tools", len(types), len(toolcatalog.Names()))
	}
}

// typeSchemaExceptions are the differences that are right, each with why:
// one Go result type serves tools whose schemas differ.
var typeSchemaExceptions = map[string]string{
	// WriteResult.PendingCount is set only by draft_commit's stay_silent
	// (status dropped), whose schema has pending_count.
	"agent_protocols_room_send_message output: pending_count: in the Go type discourse.WriteResult, not in the schema": "draft_commit only",
	"agent_protocols_room_submit_event output: pending_count: in the Go type discourse.WriteResult, not in the schema": "draft_commit only",
	// WriteResult.Sync is set on every path of these tools; it is nil only
	// for draft_commit's dropped, whose schema does not require it.
	"agent_protocols_room_send_message output: sync: required, but omitempty in discourse.WriteResult": "set on every path",
	"agent_protocols_room_submit_event output: sync: required, but omitempty in discourse.WriteResult": "set on every path",
}

// The comparison finds a field added on one side only, a rename, and a
// required property written with omitempty, at the top and nested.
func TestCompareTypeFindsDrift(t *testing.T) {
	t.Parallel()
	schema := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	type item struct {
		A string `json:"a"`
		B int    `json:"b,omitempty"`
	}
	type base struct {
		Room string `json:"room_id"`
	}
	type out struct {
		base
		Items []item  `json:"items"`
		Next  *string `json:"next,omitempty"`
		Skip  string  `json:"-"`
	}
	good := `{"type":"object","required":["room_id","items"],"properties":{"room_id":{},"next":{"type":["string","null"]},
		"items":{"type":"array","items":{"type":"object","required":["a"],"properties":{"a":{},"b":{}}}}}}`
	if d := compareType(reflect.TypeFor[*out](), schema(good), ""); len(d) != 0 {
		t.Fatalf("matching types: %v", d)
	}
	for _, c := range []struct{ schema, want string }{
		{strings.Replace(good, `"next":`, `"extra":{},"next":`, 1), "extra: in the schema, not in the Go type"},
		{strings.Replace(good, `"next":{"type":["string","null"]},`, ``, 1), "next: in the Go type mcpserver.out, not in the schema"},
		{strings.Replace(good, `"b":{}`, `"c":{}`, 1), "items[].b: in the Go type mcpserver.item, not in the schema"},
		{strings.Replace(good, `"required":["a"]`, `"required":["a","b"]`, 1), "items[].b: required, but omitempty"},
		{strings.Replace(good, `"required":["room_id","items"]`, `"required":["room_id","items","next"]`, 1), "next: required, but omitempty"},
	} {
		d := compareType(reflect.TypeFor[*out](), schema(c.schema), "")
		if !slices.ContainsFunc(d, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("want %q, got %v", c.want, d)
		}
	}
}

// toolTypes builds the handler table of a connector that reaches nothing
// and returns each tool's Go types.
func toolTypes(t *testing.T) map[string]toolIO {
	t.Helper()
	s := &server{conn: offlineConnector(t), toolIO: map[string]toolIO{}}
	s.handlers()
	return s.toolIO
}

// offlineConnector is a connector whose one host is never reached.
func offlineConnector(t *testing.T) *connector.Connector {
	t.Helper()
	home := t.TempDir()
	cfg, err := config.Default(home, config.DefaultOptions{HostURL: "https://hub.example", HostLabel: "hub"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connector.New(context.Background(), connector.Options{Config: cfg, Signer: hubtest.NewAgent(1).Signer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// jsonField is one field as encoding/json sees it.
type jsonField struct {
	typ       reflect.Type
	omitempty bool
}

// jsonFields lists the fields encoding/json encodes for struct type t,
// embedded structs flattened.
func jsonFields(t reflect.Type) map[string]jsonField {
	out := map[string]jsonField{}
	var named [][]int // embedded structs with a JSON name: not flattened
	for _, f := range reflect.VisibleFields(t) {
		if slices.ContainsFunc(named, func(idx []int) bool {
			return len(f.Index) > len(idx) && slices.Equal(f.Index[:len(idx)], idx)
		}) {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
			continue
		case f.Anonymous && name == "":
			continue // its fields are promoted: VisibleFields lists them
		case f.Anonymous:
			named = append(named, f.Index)
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = jsonField{typ: f.Type, omitempty: slices.Contains(strings.Split(opts, ","), "omitempty")}
	}
	return out
}

var (
	rawMessage = reflect.TypeFor[json.RawMessage]()
	marshaler  = reflect.TypeFor[json.Marshaler]()
	textMarsh  = reflect.TypeFor[encoding.TextMarshaler]()
)

// objectSchema returns the object schema of node: node itself when it has
// properties, else its one anyOf/oneOf branch that has them (the
// "object or null" shape).
func objectSchema(node map[string]any) (map[string]any, bool) {
	if _, ok := node["properties"]; ok {
		return node, true
	}
	var found map[string]any
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, _ := node[k].([]any)
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				if _, ok := bm["properties"]; ok {
					if found != nil {
						return nil, false
					}
					found = bm
				}
			}
		}
	}
	return found, found != nil
}

// itemsSchema returns the items schema of an array node (or of its one
// array branch).
func itemsSchema(node map[string]any) (map[string]any, bool) {
	if it, ok := node["items"].(map[string]any); ok {
		return it, true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, _ := node[k].([]any)
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				if it, ok := bm["items"].(map[string]any); ok {
					return it, true
				}
			}
		}
	}
	return nil, false
}

// compareType compares Go type t with schema node at path and returns the
// differences. Types that encode themselves (json.RawMessage, Marshalers,
// interfaces, maps) and schema nodes without properties are not compared:
// they are open on one side.
func compareType(t reflect.Type, node map[string]any, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) ||
		t.Implements(textMarsh) || reflect.PointerTo(t).Implements(textMarsh) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		if items, ok := itemsSchema(node); ok {
			return compareType(t.Elem(), items, path+"[]")
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	obj, ok := objectSchema(node)
	if !ok {
		return nil
	}
	props, _ := obj["properties"].(map[string]any)
	fields := jsonFields(t)
	var diffs []string
	at := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for name := range props {
		if _, ok := fields[name]; !ok {
			diffs = append(diffs, at(name)+": in the schema, not in the Go type "+t.String())
		}
	}
	for name, f := range fields {
		sub, ok := props[name].(map[string]any)
		if !ok {
			if _, listed := props[name]; !listed {
				diffs = append(diffs, at(name)+": in the Go type "+t.String()+", not in the schema")
			}
			continue
		}
		diffs = append(diffs, compareType(f.typ, sub, at(name))...)
	}
	required, _ := obj["required"].([]any)
	for _, r := range required {
		name := fmt.Sprint(r)
		if f, ok := fields[name]; ok && f.omitempty {
			diffs = append(diffs, at(name)+": required, but omitempty in "+t.String())
		}
	}
	sort.Strings(diffs)
	return diffs
}
