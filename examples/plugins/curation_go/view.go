package main

import (
	"strings"

	"apconnect/sdk-guest/plugin"
	// The Structured result is a struct, encoded with reflection.
	_ "apconnect/sdk-guest/plugin/structjson"
	"apconnect/sdk-guest/text"
)

var graphTool = plugin.Tool{
	Name:  "graph",
	Title: "Knowledge graph",
	Description: "Shows a room's knowledge graph (adp:curation/1.0), derived by replaying its graph.update events in seq " +
		"order, as an outline: each node with its id, status, title and cited events. node_id shows one subtree.",
	InputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id"],
	"properties": {
	` + plugin.RoomProperties + `,
	"node_id": {"type": "string", "minLength": 1, "description": "Only this node and what is under it."},
	"max_depth": {"type": "integer", "minimum": 0, "maximum": 64, "description": "Leave out nodes deeper than this (0 shows the top only)."}
	},
	"additionalProperties": false
}`),
	OutputSchema: plugin.Raw(`{
	"type": "object",
	"required": ["room_id", "complete", "updates", "node_count", "nodes"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when the graph may miss updates apconnect does not hold."},
		"updates": {"type": "integer", "description": "graph.update events replayed (from the latest snapshot)."},
		"last_update": {"type": "object", "required": ["event_id", "seq"], "properties": {"event_id": {"type": "string"}, "seq": {"type": "integer"}}, "additionalProperties": false},
		"node_count": {"type": "integer", "description": "Nodes in the whole graph."},
		"nodes": {"type": "array", "description": "The nodes shown, depth first.", "items": {
			"type": "object",
			"required": ["id", "title", "status", "depth", "children"],
			"properties": {
				"id": {"type": "string"},
				"parent_id": {"type": "string"},
				"title": {"type": "string"},
				"status": {"type": "string"},
				"summary": {"type": "string"},
				"depth": {"type": "integer"},
				"children": {"type": "integer"},
				"resource_event_ids": {"type": "array", "items": {"type": "string"}},
				"discussion_event_ids": {"type": "array", "items": {"type": "string"}},
				"seq": {"type": "integer", "description": "The update that last changed the node."}
			},
			"additionalProperties": false
		}}
	},
	"additionalProperties": false
}`),
	Handler: showGraph,
}

type viewNode struct {
	ID          string   `json:"id"`
	ParentID    string   `json:"parent_id,omitempty"`
	Title       string   `json:"title"`
	Status      string   `json:"status"`
	Summary     string   `json:"summary,omitempty"`
	Depth       int      `json:"depth"`
	Children    int      `json:"children"`
	Resources   []string `json:"resource_event_ids,omitempty"`
	Discussions []string `json:"discussion_event_ids,omitempty"`
	Seq         int64    `json:"seq,omitempty"`
}

type lastUpdate struct {
	EventID string `json:"event_id"`
	Seq     int64  `json:"seq"`
}

type view struct {
	RoomID     string      `json:"room_id"`
	Complete   bool        `json:"complete"`
	Updates    int         `json:"updates"`
	LastUpdate *lastUpdate `json:"last_update,omitempty"`
	NodeCount  int         `json:"node_count"`
	Nodes      []viewNode  `json:"nodes"`
}

func showGraph(req *plugin.ToolRequest) (*plugin.ToolResult, error) {
	room, err := req.NamedRoom()
	if err != nil {
		return nil, err
	}
	g := replay(room)
	top, _ := req.Arguments.Get("node_id").AsString()
	maxDepth, limited := req.Arguments.Get("max_depth").AsInt()
	v := &view{RoomID: room.RoomID, Complete: g.known, Updates: g.updates, NodeCount: len(g.nodes), Nodes: []viewNode{}}
	if g.last != nil {
		v.LastUpdate = &lastUpdate{EventID: g.last.EventID, Seq: g.last.Seq}
	}
	kids := g.children()
	var roots []string
	if top != "" {
		if g.nodes[top] == nil {
			return nil, errString("the graph of room " + room.RoomID + " has no node " + q(top))
		}
		roots = []string{top}
	} else {
		for _, id := range g.order {
			if n := g.nodes[id]; n != nil && (n.parent == "" || g.nodes[n.parent] == nil) && !contains(roots, id) {
				roots = append(roots, id)
			}
		}
	}
	seen := map[string]bool{}
	var walk func(id string, depth int)
	walk = func(id string, depth int) {
		n := g.nodes[id]
		if n == nil || seen[id] || limited && int64(depth) > maxDepth {
			return
		}
		seen[id] = true
		v.Nodes = append(v.Nodes, viewNode{
			ID: text.Clean(id, 120), ParentID: text.Clean(n.parent, 120), Title: text.Clean(n.title, 200), Status: text.Clean(n.status, 20),
			Summary: text.Clean(n.summary, 500), Depth: depth, Children: len(kids[id]),
			Resources: n.resources, Discussions: n.discussions, Seq: n.seq,
		})
		for _, c := range kids[id] {
			walk(c, depth+1)
		}
	}
	for _, id := range roots {
		walk(id, 0)
	}
	return &plugin.ToolResult{Content: []plugin.Content{{Type: "text", Text: graphText(v)}}, Structured: v}, nil
}

func graphText(v *view) string {
	var b strings.Builder
	if v.NodeCount == 0 {
		b.WriteString("The knowledge graph of room " + v.RoomID + " is empty.")
	} else {
		b.WriteString("Knowledge graph of room " + v.RoomID + ": " + text.Plural(v.NodeCount, "node") + " from " + text.Plural(v.Updates, "update") + ".")
	}
	for _, n := range v.Nodes {
		b.WriteString("\n" + strings.Repeat("  ", n.Depth) + "- [" + n.Status + "] " + n.Title + " (" + n.ID + ")")
		if len(n.Resources) > 0 {
			b.WriteString(" — " + text.Plural(len(n.Resources), "resource"))
		}
		if len(n.Discussions) > 0 {
			b.WriteString(" — " + text.Plural(len(n.Discussions), "discussion event"))
		}
	}
	if !v.Complete {
		b.WriteString("\n(partial: the graph may miss updates apconnect does not hold)")
	}
	return b.String()
}

// errString is an error with a fixed text (no fmt inside the sandbox).
type errString string

func (e errString) Error() string { return string(e) }
