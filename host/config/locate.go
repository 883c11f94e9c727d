package config

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// position is where a key or value starts in the file (1-based).
type position struct{ line, column int }

// locatedPrefixes are the field paths whose validation problems are given
// the line of what they are about: a host's grants, and the [limits],
// [mail] and [wake] tables. Other validation problems keep their field
// path only.
var locatedPrefixes = []string{"limits.", "mail.", "wake."}

// located reports whether a validation problem for field is given a line.
func located(field string) bool {
	if strings.HasPrefix(field, "hosts[") && strings.Contains(field, ".grants[") {
		return true
	}
	for _, p := range locatedPrefixes {
		if strings.HasPrefix(field, p) {
			return true
		}
	}
	return false
}

// locate gives each validation problem of e that located accepts the line
// and column of the key or array item its field names, or else of the
// nearest enclosing key or table that the file writes (the [[wake.command]]
// header of a command without argv, for instance).
func locate(e *Error, data []byte) {
	var pos map[string]position
	for i := range e.Problems {
		pr := &e.Problems[i]
		if pr.Line != 0 || !located(pr.Field) {
			continue
		}
		if pos == nil {
			pos = positions(data)
		}
		for f := pr.Field; f != ""; f = parentField(f) {
			if at, ok := pos[f]; ok {
				pr.Line, pr.Column = at.line, at.column
				break
			}
		}
	}
}

// parentField strips the last step of a field path: "a.b[2]" gives "a.b",
// "a.b" gives "a", "a" gives "".
func parentField(f string) string {
	if strings.HasSuffix(f, "]") {
		if i := strings.LastIndex(f, "["); i >= 0 {
			return f[:i]
		}
	}
	if i := strings.LastIndex(f, "."); i >= 0 {
		return f[:i]
	}
	return ""
}

// positions returns where each key, table and array item of a document
// starts, by the field path Validate uses ("hosts[1].grants[2]",
// "wake.command[0].timeout"): keys by where the key starts, array items
// by where the item starts, tables by their header. It follows [table] and
// [[array]] headers, dotted keys, inline tables and arrays of inline
// tables; what it cannot place is simply absent.
func positions(data []byte) map[string]position {
	l := &locator{out: map[string]position{}, arrays: map[string]int{}}
	l.p.Reset(data)
	table := "" // field path of the current table
	for l.p.NextExpression() {
		e := l.p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = l.resolve(keyParts(e), e.Kind == unstable.ArrayTable)
			l.mark(table, firstKey(e))
		case unstable.KeyValue:
			l.keyValue(table, e)
		}
	}
	return l.out
}

type locator struct {
	p   unstable.Parser
	out map[string]position
	// arrays counts the elements of each array of tables seen so far, by
	// its resolved field path.
	arrays map[string]int
}

// resolve turns a table header's key into a field path: each array of
// tables it passes through is indexed by its latest element, and a new
// [[array]] element is counted.
func (l *locator) resolve(parts []string, newElement bool) string {
	path := ""
	for i, part := range parts {
		path = joinField(path, part)
		n, isArray := l.arrays[path]
		switch {
		case newElement && i == len(parts)-1:
			l.arrays[path] = n + 1
			path = fmt.Sprintf("%s[%d]", path, n)
		case isArray:
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
	}
	return path
}

// keyValue records a key and, for an array or inline table value, what is
// inside it.
func (l *locator) keyValue(table string, kv *unstable.Node) {
	field := table
	for _, part := range keyParts(kv) {
		field = joinField(field, part)
	}
	l.mark(field, firstKey(kv))
	l.value(field, kv.Value())
}

// value records the items of an array and the keys of an inline table.
func (l *locator) value(field string, v *unstable.Node) {
	switch v.Kind {
	case unstable.Array:
		it := v.Children()
		for i := 0; it.Next(); {
			n := it.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			item := fmt.Sprintf("%s[%d]", field, i)
			l.mark(item, n)
			l.value(item, n)
			i++
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				l.keyValue(field, kv)
			}
		}
	}
}

// mark records where n starts as the position of field, unless n carries
// no position (an array value, whose items are recorded instead).
func (l *locator) mark(field string, n *unstable.Node) {
	if n == nil || n.Raw.Length == 0 {
		return
	}
	start := l.p.Shape(n.Raw).Start
	l.out[field] = position{start.Line, start.Column}
}

// keyParts returns the parts of a (possibly dotted) key of a key-value or
// table node.
func keyParts(n *unstable.Node) []string {
	var parts []string
	it := n.Key()
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// firstKey returns the node of the first part of n's key.
func firstKey(n *unstable.Node) *unstable.Node {
	it := n.Key()
	if !it.Next() {
		return nil
	}
	return it.Node()
}

func joinField(path, part string) string {
	if path == "" {
		return part
	}
	return path + "." + part
}
