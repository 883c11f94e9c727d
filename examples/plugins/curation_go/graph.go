package main

import "apconnect/sdk-guest/plugin"

// The graph a sequence of graph.update records builds. Replay is lenient
// (the validator refuses what it skips): for each operation,
//
//   - upsert_node creates the node or updates it: the members present
//     replace the old ones, status defaults to "open" for a new node,
//     parent_id null makes it a root and an absent parent_id keeps its
//     parent (a new node is a root); nested children are upserted under it;
//   - delete_node removes the node and everything under it;
//   - mark_resolved sets the node's status to "resolved";
//   - move_node puts the node under to_parent_id;
//   - merge_nodes moves the children of every source (node_ids) under the
//     surviving target (node_id), adds the sources' resource and discussion
//     event IDs to the target's, and removes the sources;
//   - replace_snapshot replaces the whole graph by its nodes.
//
// A node whose parent is not in the graph is shown as a root.

type node struct {
	id, parent, title, summary, status string
	resources, discussions             []string
	seq                                int64 // last changed by the update at this seq
}

type graph struct {
	nodes   map[string]*node
	order   []string // ids in creation order (may hold removed ids)
	known   bool     // every update since the start of the graph is known
	updates int      // updates replayed
	last    *plugin.Record
}

// replay builds the graph from the graph.update records of the room
// context, starting at the latest replace_snapshot it holds.
func replay(room *plugin.Room) *graph {
	var recs []*plugin.Record
	for i := range room.Records {
		if room.Records[i].Type == typeGraph {
			recs = append(recs, &room.Records[i])
		}
	}
	start, snapshot := 0, false
	for i := len(recs) - 1; i >= 0; i-- {
		if op, _ := recs[i].Payload.Get("operation").AsString(); !recs[i].Redacted && op == "replace_snapshot" {
			start, snapshot = i, true
			break
		}
	}
	g := &graph{nodes: map[string]*node{}, known: snapshot || !room.RecordsTruncated}
	for _, rec := range recs[start:] {
		if rec.Redacted {
			g.known = false // its operation is lost
			continue
		}
		g.apply(rec.Payload, rec.Seq)
		g.updates++
		g.last = rec
	}
	return g
}

func (g *graph) apply(p plugin.Raw, seq int64) {
	op, _ := p.Get("operation").AsString()
	id, _ := p.Get("node_id").AsString()
	switch op {
	case "upsert_node":
		g.upsert(p.Get("node"), "", false, seq)
	case "replace_snapshot":
		g.nodes, g.order = map[string]*node{}, nil
		p.Get("nodes").Each(func(_ int, n plugin.Raw) bool {
			g.upsert(n, "", false, seq)
			return true
		})
	case "delete_node":
		for _, d := range g.subtree(id) {
			delete(g.nodes, d)
		}
	case "mark_resolved":
		if n := g.nodes[id]; n != nil {
			n.status, n.seq = "resolved", seq
		}
	case "move_node":
		to, _ := p.Get("to_parent_id").AsString()
		if n := g.nodes[id]; n != nil {
			n.parent, n.seq = to, seq
		}
	case "merge_nodes":
		target := g.nodes[id]
		if target == nil {
			return
		}
		sources, _ := p.Get("node_ids").AsStrings()
		for _, s := range sources {
			src := g.nodes[s]
			if src == nil || s == id {
				continue
			}
			for _, c := range g.nodes {
				if c.parent == s {
					c.parent = id
				}
			}
			target.resources = union(target.resources, src.resources)
			target.discussions = union(target.discussions, src.discussions)
			delete(g.nodes, s)
		}
		target.seq = seq
	}
}

// upsert applies one node of an upsert or a snapshot and its children;
// nested is true for a child, whose parent is enclosing.
func (g *graph) upsert(r plugin.Raw, enclosing string, nested bool, seq int64) {
	id, ok := r.Get("id").AsString()
	if !ok {
		return
	}
	n := g.nodes[id]
	if n == nil {
		n = &node{id: id, status: "open"}
		g.nodes[id] = n
		g.order = append(g.order, id)
	}
	n.seq = seq
	pid := r.Get("parent_id")
	switch {
	case nested:
		n.parent = enclosing
	case pid.Kind() == plugin.KindNull:
		n.parent = ""
	case pid.Exists():
		n.parent, _ = pid.AsString()
	}
	if s, ok := r.Get("title").AsString(); ok {
		n.title = s
	}
	if s, ok := r.Get("summary").AsString(); ok {
		n.summary = s
	}
	if s, ok := r.Get("status").AsString(); ok {
		n.status = s
	}
	if l, ok := r.Get("resource_event_ids").AsStrings(); ok {
		n.resources = l
	}
	if l, ok := r.Get("discussion_event_ids").AsStrings(); ok {
		n.discussions = l
	}
	r.Get("children").Each(func(_ int, c plugin.Raw) bool {
		g.upsert(c, id, true, seq)
		return true
	})
}

// children returns the ids under each node, in creation order.
func (g *graph) children() map[string][]string {
	kids := map[string][]string{}
	for _, id := range g.order {
		if n := g.nodes[id]; n != nil && n.parent != "" {
			kids[n.parent] = append(kids[n.parent], id)
		}
	}
	return kids
}

// subtree returns id and every node under it (none when id is unknown).
func (g *graph) subtree(id string) []string {
	if g.nodes[id] == nil {
		return nil
	}
	kids := g.children()
	out := []string{id}
	seen := map[string]bool{id: true}
	for i := 0; i < len(out); i++ {
		for _, c := range kids[out[i]] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// inside reports whether a is b or under b, following parent links (a
// lookup that may differ from the graph's) at most limit steps: a longer
// chain is a cycle, which counts as inside.
func inside(a, b string, parent func(string) (string, bool), limit int) bool {
	for steps := 0; steps <= limit; steps++ {
		if a == b {
			return true
		}
		p, ok := parent(a)
		if !ok || p == "" {
			return false
		}
		a = p
	}
	return true
}

// parentOf is the graph's parent lookup.
func (g *graph) parentOf(id string) (string, bool) {
	n := g.nodes[id]
	if n == nil {
		return "", false
	}
	return n.parent, true
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		found := false
		for _, t := range out {
			if t == s {
				found = true
				break
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}
