package config

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// position is where a value starts in the file (1-based).
type position struct{ line, column int }

// grantPositions returns where each item of each host's grants array starts
// in a decoded document, by field path ("hosts[1].grants[2]"), so that a
// problem Validate finds with a name can point at its line even inside a
// multi-line array. It understands [[hosts]] tables and the inline form
// hosts = [{...}]; an item it cannot place is simply absent.
func grantPositions(data []byte) map[string]position {
	out := map[string]position{}
	var p unstable.Parser
	p.Reset(data)
	host := -1 // index of the current [[hosts]] table
	inHost, root := false, true
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.ArrayTable:
			root = false
			inHost = keyIs(e, "hosts")
			if inHost {
				host++
			}
		case unstable.Table:
			root, inHost = false, false
		case unstable.KeyValue:
			switch {
			case inHost && keyIs(e, "grants"):
				itemPositions(&p, e.Value(), fmt.Sprintf("hosts[%d].grants", host), out)
			case root && keyIs(e, "hosts") && e.Value().Kind == unstable.Array:
				inlineHosts(&p, e.Value(), out)
			}
		}
	}
	return out
}

// inlineHosts places the grants of hosts = [{..., grants = [...]}, ...].
func inlineHosts(p *unstable.Parser, arr *unstable.Node, out map[string]position) {
	it := arr.Children()
	for i := 0; it.Next(); i++ {
		tbl := it.Node()
		if tbl.Kind != unstable.InlineTable {
			continue
		}
		kvs := tbl.Children()
		for kvs.Next() {
			if kv := kvs.Node(); kv.Kind == unstable.KeyValue && keyIs(kv, "grants") {
				itemPositions(p, kv.Value(), fmt.Sprintf("hosts[%d].grants", i), out)
			}
		}
	}
}

// itemPositions records where each item of an array value starts.
func itemPositions(p *unstable.Parser, arr *unstable.Node, field string, out map[string]position) {
	if arr.Kind != unstable.Array {
		return
	}
	it := arr.Children()
	for i := 0; it.Next(); i++ {
		n := it.Node()
		if n.Kind == unstable.Comment {
			i--
			continue
		}
		start := p.Shape(n.Raw).Start
		out[fmt.Sprintf("%s[%d]", field, i)] = position{start.Line, start.Column}
	}
}

// keyIs reports whether a key-value or table node's (possibly dotted) key
// is exactly the given parts.
func keyIs(n *unstable.Node, parts ...string) bool {
	it := n.Key()
	var got []string
	for it.Next() {
		got = append(got, string(it.Node().Data))
	}
	return strings.Join(got, "\x00") == strings.Join(parts, "\x00")
}

// locateGrants gives each grants problem of e the line and column of the
// item it names.
func locateGrants(e *Error, data []byte) {
	var pos map[string]position
	for i := range e.Problems {
		pr := &e.Problems[i]
		if pr.Line != 0 || !strings.HasPrefix(pr.Field, "hosts[") || !strings.Contains(pr.Field, ".grants[") {
			continue
		}
		if pos == nil {
			pos = grantPositions(data)
		}
		if at, ok := pos[pr.Field]; ok {
			pr.Line, pr.Column = at.line, at.column
		}
	}
}
