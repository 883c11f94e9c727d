// Command curation_go is the Go version of apconnect's first-party plugin
// curation (plugins/curation, written in Rust), kept as an example of a
// plugin written with the Go guest SDK: the same description, rules, texts
// and results, so that either file can be configured as "curation" (the
// tests of plugins/ run against both). It is for the registered type pack
// adp:curation/1.0 (Agent Discourse 1.0, Appendix A.3).
//
// The room's knowledge graph is derived, as the pack says, by replaying the
// accepted graph.update records in seq order (see graph.go for the exact
// semantics of each operation).
//
// Validators, beyond what the pack's schemas say:
//
//   - graph.update: the operation is well formed against the current
//     graph — it carries only the members its operation uses; the nodes it
//     names exist (node_id, node_ids, to_parent_id, parent_id); node ids are
//     unique within the update; a nested child does not name another
//     parent; no node becomes its own ancestor (upsert, move, merge,
//     snapshot); from_parent_id, when given, is the node's current parent;
//     a merge target is not one of its sources nor inside one;
//   - artifact.create: artifact_id unique in the room, graph_event_id names
//     a graph.update record, resource_event_ids name resource.add records
//     and discussion_event_ids name records of the room.
//
// Tool (curation_graph): the current graph as an outline.
//
// The graph is fully known when the host holds the whole room or a
// replace_snapshot is among the graph.update records it passes; otherwise
// an update naming a node the context does not show is not refused (the
// node may come from an older update), while every other rule still holds.
package main

import "apconnect/sdk-guest/plugin"

func init() {
	plugin.Register(plugin.Plugin{
		Name:    "curation",
		Version: "1.0.0",
		Description: "Checks adp:curation/1.0 graph updates against the room's knowledge graph and artifacts against " +
			"the records they cite, and shows the graph.",
		Validators: map[string]plugin.ValidateFunc{
			typeGraph:    validateGraph,
			typeArtifact: validateArtifact,
		},
		Tools: []plugin.Tool{graphTool},
	})
}

func main() {}

// The types of adp:curation/1.0 the plugin reads.
const (
	typeResource = "resource.add"
	typeGraph    = "graph.update"
	typeArtifact = "artifact.create"
)
