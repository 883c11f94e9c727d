package main

import (
	"apconnect/sdk-guest/plugin"
	"apconnect/sdk-guest/text"
)

// opMembers are the payload members each operation uses.
var opMembers = map[string][]string{
	"upsert_node":      {"node"},
	"replace_snapshot": {"nodes"},
	"delete_node":      {"node_id"},
	"mark_resolved":    {"node_id"},
	"move_node":        {"node_id", "to_parent_id", "from_parent_id"},
	"merge_nodes":      {"node_ids", "node_id"},
}

// opFields are the operation-specific members of graph.update.
var opFields = []string{"node", "nodes", "node_id", "node_ids", "from_parent_id", "to_parent_id"}

// check collects the refusals of one graph.update against a graph.
type check struct {
	g    *graph
	errs []plugin.FieldError
	dups bool // the update repeats a node id: its tree is ill-defined
}

func (c *check) add(path, msg string) {
	c.errs = append(c.errs, plugin.FieldError{Path: path, Message: msg})
}

// need refuses a node id the graph does not have, when the graph is known.
func (c *check) need(id, path string) {
	if c.g.nodes[id] == nil && c.g.known {
		c.add(path, "no node "+q(id)+" in the graph")
	}
}

func (c *check) limit() int { return len(c.g.nodes) + 2 }

func q(id string) string { return text.Quote(id, 64) }

// validateGraph checks a graph.update proposal against the current graph.
func validateGraph(req *plugin.ValidateRequest) []plugin.FieldError {
	p := req.Payload
	op, _ := p.Get("operation").AsString()
	used, ok := opMembers[op]
	if !ok {
		return nil // the pack's schema lists the operations
	}
	c := &check{g: replay(req.Room)}
	for _, f := range opFields {
		if p.Get(f).Exists() && !contains(used, f) {
			c.add("/payload/"+f, f+" is not used by "+op)
		}
	}
	id, _ := p.Get("node_id").AsString()
	switch op {
	case "upsert_node":
		c.upsert(p.Get("node"))
	case "replace_snapshot":
		c.snapshot(p.Get("nodes"))
	case "delete_node", "mark_resolved":
		c.need(id, "/payload/node_id")
	case "move_node":
		c.move(p, id)
	case "merge_nodes":
		c.merge(p, id)
	}
	return c.errs
}

// flat is one node of an update's tree.
type flat struct {
	id       string
	path     string // JSON pointer of the node object
	parent   string // its parent after the update ("" for a root)
	placed   bool   // the update sets its parent (nested, or parent_id given)
	explicit bool   // parent_id given as a string at the top level
}

// flatten lists the nodes of a tree in document order, refusing
// duplicate ids and nested children that name another parent.
func (c *check) flatten(r plugin.Raw, path, enclosing string, nested bool, out *[]flat, first map[string]string) {
	id, ok := r.Get("id").AsString()
	if !ok {
		return
	}
	if at, dup := first[id]; dup {
		c.add(path+"/id", "node id "+q(id)+" appears twice in this update (first at "+at+")")
		c.dups = true
	} else {
		first[id] = path
	}
	f := flat{id: id, path: path}
	pid := r.Get("parent_id")
	parent, isString := pid.AsString()
	switch {
	case nested:
		f.parent, f.placed = enclosing, true
		if pid.Exists() && (!isString || parent != enclosing) {
			c.add(path+"/parent_id", "a child of "+q(enclosing)+" cannot name another parent; leave parent_id out or set it to "+q(enclosing))
		}
	case pid.Kind() == plugin.KindNull:
		f.placed = true
	case isString:
		f.parent, f.placed, f.explicit = parent, true, true
	}
	*out = append(*out, f)
	r.Get("children").Each(func(i int, ch plugin.Raw) bool {
		c.flatten(ch, path+"/children/"+text.Int(int64(i)), id, true, out, first)
		return true
	})
}

// cycles refuses the first node the update places inside itself; parent
// resolves nodes the update does not place.
func (c *check) cycles(nodes []flat, parent func(string) (string, bool), limit int) {
	if c.dups {
		return
	}
	placed := map[string]string{}
	for _, f := range nodes {
		if f.placed {
			placed[f.id] = f.parent
		}
	}
	after := func(id string) (string, bool) {
		if p, ok := placed[id]; ok {
			return p, true
		}
		return parent(id)
	}
	for _, f := range nodes {
		p := f.parent
		if !f.placed || p == "" || p == f.id || !inside(p, f.id, after, limit) {
			continue
		}
		path := f.path + "/id"
		if f.explicit {
			path = f.path + "/parent_id"
		}
		c.add(path, "putting "+q(f.id)+" under "+q(p)+" would make a cycle: "+q(p)+" would be inside "+q(f.id))
		return
	}
}

func (c *check) upsert(r plugin.Raw) {
	var nodes []flat
	c.flatten(r, "/payload/node", "", false, &nodes, map[string]string{})
	if len(nodes) == 0 {
		return
	}
	root := nodes[0]
	if root.explicit {
		inUpdate := false
		for _, f := range nodes {
			inUpdate = inUpdate || f.id == root.parent
		}
		switch {
		case root.parent == root.id:
			c.add(root.path+"/parent_id", "a node cannot be its own parent")
			return
		case !inUpdate:
			c.need(root.parent, root.path+"/parent_id")
		}
	}
	c.cycles(nodes, c.g.parentOf, c.limit()+len(nodes))
}

func (c *check) snapshot(list plugin.Raw) {
	var nodes []flat
	first := map[string]string{}
	list.Each(func(i int, n plugin.Raw) bool {
		c.flatten(n, "/payload/nodes/"+text.Int(int64(i)), "", false, &nodes, first)
		return true
	})
	for _, f := range nodes {
		switch {
		case !f.explicit:
		case f.parent == f.id:
			c.add(f.path+"/parent_id", "a node cannot be its own parent")
		case first[f.parent] == "":
			c.add(f.path+"/parent_id", "no node "+q(f.parent)+" in this snapshot")
		}
	}
	none := func(string) (string, bool) { return "", false } // the snapshot replaces the graph
	c.cycles(nodes, none, len(nodes)+2)
}

func (c *check) move(p plugin.Raw, id string) {
	to, _ := p.Get("to_parent_id").AsString()
	c.need(id, "/payload/node_id")
	if to == id {
		c.add("/payload/to_parent_id", "a node cannot be moved under itself")
		return
	}
	c.need(to, "/payload/to_parent_id")
	n := c.g.nodes[id]
	if n != nil && c.g.nodes[to] != nil && inside(to, id, c.g.parentOf, c.limit()) {
		c.add("/payload/to_parent_id", q(to)+" is inside "+q(id)+"; moving "+q(id)+" under it would make a cycle")
	}
	if from, ok := p.Get("from_parent_id").AsString(); ok && n != nil && n.parent != from {
		c.add("/payload/from_parent_id", "node "+q(id)+" is under "+where(n.parent)+", not "+where(from))
	}
}

func (c *check) merge(p plugin.Raw, target string) {
	sources, _ := p.Get("node_ids").AsStrings()
	for i, s := range sources {
		if s == target {
			c.add("/payload/node_ids/"+text.Int(int64(i)), "the surviving node "+q(target)+" cannot also be merged away")
			continue
		}
		c.need(s, "/payload/node_ids/"+text.Int(int64(i)))
	}
	c.need(target, "/payload/node_id")
	if c.g.nodes[target] == nil {
		return
	}
	for _, s := range sources {
		if s != target && c.g.nodes[s] != nil && inside(target, s, c.g.parentOf, c.limit()) {
			c.add("/payload/node_id", q(target)+" is inside "+q(s)+", which this update merges away")
			return
		}
	}
}

// where names a parent for messages.
func where(parent string) string {
	if parent == "" {
		return "the root"
	}
	return q(parent)
}

func contains(list []string, s string) bool {
	for _, t := range list {
		if t == s {
			return true
		}
	}
	return false
}

// validateArtifact checks an artifact.create proposal: a unique
// artifact_id, and citations that name records of the right types.
func validateArtifact(req *plugin.ValidateRequest) []plugin.FieldError {
	var errs []plugin.FieldError
	p := req.Payload
	if id, ok := p.Get("artifact_id").AsString(); ok {
		for i := range req.Room.Records {
			rec := &req.Room.Records[i]
			if rec.Type != typeArtifact || rec.Redacted {
				continue
			}
			if other, _ := rec.Payload.Get("artifact_id").AsString(); other == id {
				errs = append(errs, plugin.FieldError{Path: "/payload/artifact_id",
					Message: "artifact_id " + q(id) + " is already used by artifact.create event " + rec.EventID + " (seq " + text.Int(rec.Seq) + "); it must be unique in the room"})
				break
			}
		}
	}
	cite := func(path, id, typ string) {
		rec, found := req.Room.Record(id)
		switch {
		case !found && req.Room.RecordsTruncated:
			errs = append(errs, plugin.FieldError{Path: path, Message: "event " + id + " is not among the records of this room that apconnect holds"})
		case !found:
			errs = append(errs, plugin.FieldError{Path: path, Message: "this room has no event " + id})
		case typ != "" && rec.Type != typ:
			errs = append(errs, plugin.FieldError{Path: path, Message: "event " + id + " is a " + rec.Type + ", not a " + typ})
		}
	}
	if id, ok := p.Get("graph_event_id").AsString(); ok {
		cite("/payload/graph_event_id", id, typeGraph)
	}
	p.Get("resource_event_ids").Each(func(i int, v plugin.Raw) bool {
		id, _ := v.AsString()
		cite("/payload/resource_event_ids/"+text.Int(int64(i)), id, typeResource)
		return true
	})
	p.Get("discussion_event_ids").Each(func(i int, v plugin.Raw) bool {
		id, _ := v.AsString()
		cite("/payload/discussion_event_ids/"+text.Int(int64(i)), id, "")
		return true
	})
	return errs
}
