package plugins_test

import (
	"strings"
	"testing"

	"apconnect/host/plugin"
)

const curationDir = "curation"

func gnode(id, title string, extra ...any) obj {
	return with(obj{"id": id, "title": title}, extra...)
}

// graphRoom is a room whose graph.update records build
//
//	n1 Caching
//	  n2 Eviction (resolved)
//	  n3 Invalidation
//	  n5 Benchmarks
//	    n4 TTL (moved from n3)
//	    n7 Load test (merged in from n6)
func graphRoom() (*room, map[string]string) {
	r := newRoom()
	ev := map[string]string{}
	ev["resource"] = r.add("resource.add", "bob", obj{"resource_type": "paper", "uri": "https://example.com/caching.pdf", "title": "Caching at scale"})
	ev["message"] = r.add("message.create", "alice", obj{"text": "We should look at eviction first."})
	ev["upsert"] = r.add("graph.update", "alice", obj{"operation": "upsert_node", "node": gnode("n1", "Caching", "children", []obj{
		gnode("n2", "Eviction", "resource_event_ids", []string{ev["resource"]}),
		gnode("n3", "Invalidation", "children", []obj{gnode("n4", "TTL")}),
	})})
	r.add("graph.update", "alice", obj{"operation": "upsert_node", "node": gnode("n5", "Benchmarks", "parent_id", "n1")})
	r.add("graph.update", "alice", obj{"operation": "mark_resolved", "node_id": "n2"})
	r.add("graph.update", "alice", obj{"operation": "move_node", "node_id": "n4", "from_parent_id": "n3", "to_parent_id": "n5"})
	r.add("graph.update", "alice", obj{"operation": "upsert_node", "node": gnode("n6", "Scratch", "parent_id", nil,
		"discussion_event_ids", []string{ev["message"]}, "children", []obj{gnode("n7", "Load test")})})
	ev["merge"] = r.add("graph.update", "alice", obj{"operation": "merge_nodes", "node_ids": []string{"n6"}, "node_id": "n5"})
	r.add("graph.update", "alice", obj{"operation": "upsert_node", "node": gnode("n8", "Doomed", "parent_id", "n3")})
	r.add("graph.update", "alice", obj{"operation": "delete_node", "node_id": "n8"})
	return r, ev
}

func TestCurationGraphUpdate(t *testing.T) {
	t.Parallel()
	forBuilds(t, curationDir, func(t *testing.T, p *plugin.Plugin) {
		r, _ := graphRoom()
		v := func(what string, payload obj, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "graph.update", "alice", payload), want...)
		}
		upsert := func(n obj) obj { return obj{"operation": "upsert_node", "node": n} }

		// upsert_node
		v("a new node", upsert(gnode("n9", "Sharding", "parent_id", "n3", "children", []obj{gnode("n10", "Hash ring", "parent_id", "n9")})))
		v("an update keeping its parent", upsert(gnode("n4", "TTL and jitter", "status", "open")))
		v("a new root", upsert(gnode("r2", "Security", "parent_id", nil)))
		v("a member the operation does not use", with(upsert(gnode("n9", "x")), "node_id", "n1", "to_parent_id", "n2"),
			refusal{"/payload/node_id", "node_id is not used by upsert_node"},
			refusal{"/payload/to_parent_id", "to_parent_id is not used by upsert_node"})
		v("an unknown parent", upsert(gnode("n9", "x", "parent_id", "nx")),
			refusal{"/payload/node/parent_id", `no node "nx" in the graph`})
		v("its own parent", upsert(gnode("n9", "x", "parent_id", "n9")),
			refusal{"/payload/node/parent_id", "a node cannot be its own parent"})
		v("duplicate ids in the update", upsert(gnode("n9", "x", "children", []obj{gnode("n10", "a"), gnode("n10", "b"), gnode("n9", "c")})),
			refusal{"/payload/node/children/1/id", `node id "n10" appears twice in this update (first at /payload/node/children/0)`},
			refusal{"/payload/node/children/2/id", `node id "n9" appears twice in this update (first at /payload/node)`})
		v("a child naming another parent", upsert(gnode("n9", "x", "children", []obj{gnode("n10", "a", "parent_id", "n1"), gnode("n11", "b", "parent_id", nil)})),
			refusal{"/payload/node/children/0/parent_id", `a child of "n9" cannot name another parent`},
			refusal{"/payload/node/children/1/parent_id", `a child of "n9" cannot name another parent`})
		v("a node under its own descendant", upsert(gnode("n1", "Caching", "parent_id", "n4")),
			refusal{"/payload/node/parent_id", `putting "n1" under "n4" would make a cycle: "n4" would be inside "n1"`})
		v("an ancestor pulled in as a child", upsert(gnode("n5", "Benchmarks", "children", []obj{gnode("n1", "Caching")})),
			refusal{"/payload/node/children/0/id", `putting "n1" under "n5" would make a cycle: "n5" would be inside "n1"`})
		v("a parent inside the update", upsert(gnode("n9", "x", "parent_id", "n10", "children", []obj{gnode("n10", "y")})),
			refusal{"/payload/node/parent_id", `putting "n9" under "n10" would make a cycle`})

		// delete_node, mark_resolved
		v("delete a node", obj{"operation": "delete_node", "node_id": "n3"})
		v("delete a deleted node", obj{"operation": "delete_node", "node_id": "n8"},
			refusal{"/payload/node_id", `no node "n8" in the graph`})
		v("resolve a merged-away node", obj{"operation": "mark_resolved", "node_id": "n6"},
			refusal{"/payload/node_id", `no node "n6" in the graph`})
		v("resolve a node", obj{"operation": "mark_resolved", "node_id": "n7"})

		// move_node
		v("a move", obj{"operation": "move_node", "node_id": "n4", "from_parent_id": "n5", "to_parent_id": "n3"})
		v("a stale move", obj{"operation": "move_node", "node_id": "n4", "from_parent_id": "n3", "to_parent_id": "n2"},
			refusal{"/payload/from_parent_id", `node "n4" is under "n5", not "n3"`})
		v("a root moved with a parent claimed", obj{"operation": "move_node", "node_id": "n1", "from_parent_id": "n9", "to_parent_id": "n2"},
			refusal{"/payload/to_parent_id", `"n2" is inside "n1"; moving "n1" under it would make a cycle`},
			refusal{"/payload/from_parent_id", `node "n1" is under the root, not "n9"`})
		v("under itself", obj{"operation": "move_node", "node_id": "n2", "to_parent_id": "n2"},
			refusal{"/payload/to_parent_id", "a node cannot be moved under itself"})
		v("unknown nodes", obj{"operation": "move_node", "node_id": "nx", "to_parent_id": "ny", "node": gnode("z", "z")},
			refusal{"/payload/node", "node is not used by move_node"},
			refusal{"/payload/node_id", `no node "nx" in the graph`},
			refusal{"/payload/to_parent_id", `no node "ny" in the graph`})

		// merge_nodes
		v("a merge", obj{"operation": "merge_nodes", "node_ids": []string{"n3", "n2"}, "node_id": "n5"})
		v("the target among the sources", obj{"operation": "merge_nodes", "node_ids": []string{"n2", "n5"}, "node_id": "n5"},
			refusal{"/payload/node_ids/1", `the surviving node "n5" cannot also be merged away`})
		v("a target inside a source", obj{"operation": "merge_nodes", "node_ids": []string{"n1"}, "node_id": "n4"},
			refusal{"/payload/node_id", `"n4" is inside "n1", which this update merges away`})
		v("unknown nodes in a merge", obj{"operation": "merge_nodes", "node_ids": []string{"n2", "nx"}, "node_id": "ny"},
			refusal{"/payload/node_ids/1", `no node "nx" in the graph`},
			refusal{"/payload/node_id", `no node "ny" in the graph`})

		// replace_snapshot
		snap := func(nodes ...obj) obj { return obj{"operation": "replace_snapshot", "nodes": nodes} }
		v("a snapshot", snap(gnode("s1", "A", "children", []obj{gnode("s2", "B")}), gnode("s3", "C", "parent_id", "s2")))
		v("duplicates across a snapshot", snap(gnode("s1", "A", "children", []obj{gnode("s2", "B")}), gnode("s2", "C")),
			refusal{"/payload/nodes/1/id", `node id "s2" appears twice in this update (first at /payload/nodes/0/children/0)`})
		v("a parent outside the snapshot", snap(gnode("s1", "A", "parent_id", "n1")),
			refusal{"/payload/nodes/0/parent_id", `no node "n1" in this snapshot`})
		v("a cycle in a snapshot", snap(gnode("s1", "A", "parent_id", "s2"), gnode("s2", "B", "parent_id", "s1"), gnode("s3", "C", "parent_id", "s3")),
			refusal{"/payload/nodes/2/parent_id", "a node cannot be its own parent"},
			refusal{"/payload/nodes/0/parent_id", `putting "s1" under "s2" would make a cycle`})
	})
}

func TestCurationPartialGraph(t *testing.T) {
	t.Parallel()
	forBuilds(t, curationDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := graphRoom()
		r.whole = false
		// Without the start of the room, unknown nodes may be older: not refused.
		wantErrs(t, "unknown node, partial room", validate(t, p, r, "graph.update", "alice", obj{"operation": "delete_node", "node_id": "n0"}))
		// Every other rule still holds.
		wantErrs(t, "cycle, partial room", validate(t, p, r, "graph.update", "alice", obj{"operation": "move_node", "node_id": "n1", "to_parent_id": "n7"}),
			refusal{"/payload/to_parent_id", `"n7" is inside "n1"`})
		// A snapshot the context holds makes the graph known again.
		r.add("graph.update", "alice", obj{"operation": "replace_snapshot", "nodes": []obj{gnode("s1", "Fresh start")}})
		wantErrs(t, "unknown node after a snapshot", validate(t, p, r, "graph.update", "alice", obj{"operation": "delete_node", "node_id": "n1"}),
			refusal{"/payload/node_id", `no node "n1" in the graph`})
		// A redacted update after it hides what it did.
		last := r.add("graph.update", "alice", obj{"operation": "upsert_node", "node": gnode("s2", "Hidden")})
		r.redact(last)
		wantErrs(t, "unknown node after a redacted update", validate(t, p, r, "graph.update", "alice", obj{"operation": "delete_node", "node_id": "s2"}))
		_ = ev
	})
}

func TestCurationArtifact(t *testing.T) {
	t.Parallel()
	forBuilds(t, curationDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := graphRoom()
		r.add("artifact.create", "alice", obj{"artifact_id": "report-1", "format": "markdown", "title": "Caching report"})
		art := func(id string, extra ...any) obj {
			return with(obj{"artifact_id": id, "format": "markdown", "title": "Caching report v2"}, extra...)
		}
		missing := id43("event", "never")
		wantErrs(t, "an artifact", validate(t, p, r, "artifact.create", "alice", art("report-2",
			"graph_event_id", ev["merge"], "resource_event_ids", []string{ev["resource"]}, "discussion_event_ids", []string{ev["message"], ev["upsert"]})))
		wantErrs(t, "bad citations", validate(t, p, r, "artifact.create", "alice", art("report-1",
			"graph_event_id", ev["message"], "resource_event_ids", []string{ev["upsert"]}, "discussion_event_ids", []string{ev["message"], missing})),
			refusal{"/payload/artifact_id", `artifact_id "report-1" is already used by artifact.create event`},
			refusal{"/payload/graph_event_id", "event " + ev["message"] + " is a message.create, not a graph.update"},
			refusal{"/payload/resource_event_ids/0", "event " + ev["upsert"] + " is a graph.update, not a resource.add"},
			refusal{"/payload/discussion_event_ids/1", "this room has no event " + missing})
		r.whole = false
		wantErrs(t, "an unheld citation", validate(t, p, r, "artifact.create", "alice", art("report-3", "discussion_event_ids", []string{missing})),
			refusal{"/payload/discussion_event_ids/0", "is not among the records of this room that apconnect holds"})
	})
}

type graphOut struct {
	RoomID     string `json:"room_id"`
	Complete   bool   `json:"complete"`
	Updates    int    `json:"updates"`
	LastUpdate *struct {
		EventID string `json:"event_id"`
		Seq     int64  `json:"seq"`
	} `json:"last_update"`
	NodeCount int `json:"node_count"`
	Nodes     []struct {
		ID          string   `json:"id"`
		ParentID    string   `json:"parent_id"`
		Title       string   `json:"title"`
		Status      string   `json:"status"`
		Depth       int      `json:"depth"`
		Children    int      `json:"children"`
		Resources   []string `json:"resource_event_ids"`
		Discussions []string `json:"discussion_event_ids"`
	} `json:"nodes"`
}

func TestCurationGraphTool(t *testing.T) {
	t.Parallel()
	forBuilds(t, curationDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := graphRoom()
		var g graphOut
		text := call(t, p, r, "graph", nil, &g)
		var outline []string
		for _, n := range g.Nodes {
			outline = append(outline, strings.Repeat(".", n.Depth)+n.ID+":"+n.Status)
		}
		if got := strings.Join(outline, " "); got != "n1:open .n2:resolved .n3:open .n5:open ..n4:open ..n7:open" {
			t.Errorf("outline %s", got)
		}
		if !g.Complete || g.Updates != 8 || g.NodeCount != 6 || g.LastUpdate == nil || g.LastUpdate.Seq != r.lastSeq() {
			t.Errorf("graph %+v", g)
		}
		n5 := g.Nodes[3]
		if n5.ParentID != "n1" || n5.Children != 2 || strings.Join(n5.Discussions, ",") != ev["message"] || g.Nodes[1].Resources[0] != ev["resource"] {
			t.Errorf("n5 %+v, n2 %+v", n5, g.Nodes[1])
		}
		for _, want := range []string{
			"Knowledge graph of room " + roomID + ": 6 nodes from 8 updates.",
			"\n- [open] Caching (n1)\n  - [resolved] Eviction (n2) — 1 resource\n  - [open] Invalidation (n3)\n  - [open] Benchmarks (n5) — 1 discussion event\n    - [open] TTL (n4)\n    - [open] Load test (n7)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}

		call(t, p, r, "graph", obj{"node_id": "n5", "max_depth": 0}, &g)
		if len(g.Nodes) != 1 || g.Nodes[0].ID != "n5" || g.Nodes[0].Children != 2 {
			t.Errorf("subtree %+v", g.Nodes)
		}
		if got := callError(t, p, "graph", obj{"room_id": roomID, "node_id": "n6"}, toolContext(t, p, "graph", r)); !strings.Contains(got, `has no node "n6"`) {
			t.Errorf("unknown node: %q", got)
		}
		r.whole = false
		text = call(t, p, r, "graph", nil, &g)
		if g.Complete || !strings.Contains(text, "(partial: the graph may miss updates apconnect does not hold)") {
			t.Errorf("partial %+v", g)
		}
	})
}
