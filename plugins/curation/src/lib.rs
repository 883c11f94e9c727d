//! curation is apconnect's first-party plugin for the registered type pack
//! adp:curation/1.0 (Agent Discourse 1.0, Appendix A.3), written with
//! sdk-guest/rust. examples/plugins/curation_go is the same plugin in Go:
//! the same description, rules, texts and results (the tests of plugins/ run
//! against both).
//!
//! The room's knowledge graph is derived, as the pack says, by replaying the
//! accepted graph.update records in seq order (see [`Graph`] for the exact
//! semantics of each operation).
//!
//! Validators, beyond what the pack's schemas say:
//!
//! - graph.update: the operation is well formed against the current graph —
//!   it carries only the members its operation uses; the nodes it names
//!   exist (node_id, node_ids, to_parent_id, parent_id); node ids are unique
//!   within the update; a nested child does not name another parent; no
//!   node becomes its own ancestor (upsert, move, merge, snapshot);
//!   from_parent_id, when given, is the node's current parent; a merge
//!   target is not one of its sources nor inside one;
//! - artifact.create: artifact_id unique in the room, graph_event_id names a
//!   graph.update record, resource_event_ids name resource.add records and
//!   discussion_event_ids name records of the room.
//!
//! Tool (curation_graph): the current graph as an outline.
//!
//! The graph is fully known when the host holds the whole room or a
//! replace_snapshot is among the graph.update records it passes; otherwise
//! an update naming a node the context does not show is not refused (the
//! node may come from an older update), while every other rule still holds.

use std::collections::{BTreeMap, BTreeSet};

use apconnect_plugin::text::{clean, plural, quote};
use apconnect_plugin::{export_plugin, FieldError, Plugin, Record, Room, Tool, ToolRequest, ToolResult, ValidateRequest, Value, ROOM_PROPERTIES};

const TYPE_RESOURCE: &str = "resource.add";
const TYPE_GRAPH: &str = "graph.update";
const TYPE_ARTIFACT: &str = "artifact.create";

fn plugin() -> Plugin {
    Plugin::new("curation", "1.0.0")
        .description(
            "Checks adp:curation/1.0 graph updates against the room's knowledge graph and artifacts against \
             the records they cite, and shows the graph.",
        )
        .validator(TYPE_GRAPH, validate_graph)
        .validator(TYPE_ARTIFACT, validate_artifact)
        .tool(graph_tool())
}

export_plugin!(plugin);

fn q(id: &str) -> String {
    quote(id, 64)
}

// ---------------------------------------------------------------------------
// The graph.

/// One node of the graph.
#[derive(Clone)]
struct Node {
    parent: String,
    title: String,
    summary: String,
    status: String,
    resources: Vec<String>,
    discussions: Vec<String>,
    /// last changed by the update at this seq
    seq: i64,
}

/// The graph a sequence of graph.update records builds. Replay is lenient
/// (the validator refuses what it skips): for each operation,
///
/// - upsert_node creates the node or updates it: the members present
///   replace the old ones, status defaults to "open" for a new node,
///   parent_id null makes it a root and an absent parent_id keeps its parent
///   (a new node is a root); nested children are upserted under it;
/// - delete_node removes the node and everything under it;
/// - mark_resolved sets the node's status to "resolved";
/// - move_node puts the node under to_parent_id;
/// - merge_nodes moves the children of every source (node_ids) under the
///   surviving target (node_id), adds the sources' resource and discussion
///   event IDs to the target's, and removes the sources;
/// - replace_snapshot replaces the whole graph by its nodes.
///
/// A node whose parent is not in the graph is shown as a root.
struct Graph<'a> {
    nodes: BTreeMap<String, Node>,
    /// ids in creation order (may hold removed ids, and an id again after
    /// it was removed and created anew)
    order: Vec<String>,
    /// every update since the start of the graph is known
    known: bool,
    /// updates replayed
    updates: usize,
    last: Option<&'a Record>,
}

/// Builds the graph from the graph.update records of the room context,
/// starting at the latest replace_snapshot it holds.
fn replay(room: &Room) -> Graph<'_> {
    let recs: Vec<&Record> = room.records.iter().filter(|r| r.event_type == TYPE_GRAPH).collect();
    let snapshot = recs.iter().rposition(|r| !r.redacted && r.payload["operation"].as_str() == Some("replace_snapshot"));
    let mut g = Graph { nodes: BTreeMap::new(), order: Vec::new(), known: snapshot.is_some() || !room.records_truncated, updates: 0, last: None };
    for rec in &recs[snapshot.unwrap_or(0)..] {
        if rec.redacted {
            g.known = false; // its operation is lost
            continue;
        }
        g.apply(&rec.payload, rec.seq);
        g.updates += 1;
        g.last = Some(rec);
    }
    g
}

impl<'a> Graph<'a> {
    fn apply(&mut self, p: &Value, seq: i64) {
        let id = p["node_id"].as_str().unwrap_or("");
        match p["operation"].as_str().unwrap_or("") {
            "upsert_node" => self.upsert(&p["node"], "", false, seq),
            "replace_snapshot" => {
                self.nodes.clear();
                self.order.clear();
                for n in p["nodes"].as_array().unwrap_or(&[]) {
                    self.upsert(n, "", false, seq);
                }
            }
            "delete_node" => {
                for d in self.subtree(id) {
                    self.nodes.remove(&d);
                }
            }
            "mark_resolved" => {
                if let Some(n) = self.nodes.get_mut(id) {
                    n.status = "resolved".to_string();
                    n.seq = seq;
                }
            }
            "move_node" => {
                let to = p["to_parent_id"].as_str().unwrap_or("");
                if let Some(n) = self.nodes.get_mut(id) {
                    n.parent = to.to_string();
                    n.seq = seq;
                }
            }
            "merge_nodes" => self.merge(p, id, seq),
            _ => {}
        }
    }

    fn merge(&mut self, p: &Value, id: &str, seq: i64) {
        if !self.nodes.contains_key(id) {
            return;
        }
        for s in p["node_ids"].as_strings().unwrap_or_default() {
            if s == id {
                continue;
            }
            let src = match self.nodes.remove(&s) {
                Some(src) => src,
                None => continue,
            };
            for c in self.nodes.values_mut() {
                if c.parent == s {
                    c.parent = id.to_string();
                }
            }
            let target = self.nodes.get_mut(id).expect("the target is in the graph");
            target.resources = union(&target.resources, &src.resources);
            target.discussions = union(&target.discussions, &src.discussions);
        }
        if let Some(target) = self.nodes.get_mut(id) {
            target.seq = seq;
        }
    }

    /// Applies one node of an upsert or a snapshot and its children; nested
    /// is true for a child, whose parent is enclosing.
    fn upsert(&mut self, r: &Value, enclosing: &str, nested: bool, seq: i64) {
        let id = match r["id"].as_str() {
            Some(id) => id.to_string(),
            None => return,
        };
        if !self.nodes.contains_key(&id) {
            self.order.push(id.clone());
        }
        let n = self.nodes.entry(id.clone()).or_insert_with(|| Node {
            parent: String::new(),
            title: String::new(),
            summary: String::new(),
            status: "open".to_string(),
            resources: Vec::new(),
            discussions: Vec::new(),
            seq: 0,
        });
        n.seq = seq;
        match r.get("parent_id") {
            _ if nested => n.parent = enclosing.to_string(),
            Some(Value::Null) => n.parent = String::new(),
            Some(v) => n.parent = v.as_str().unwrap_or("").to_string(),
            None => {}
        }
        if let Some(s) = r["title"].as_str() {
            n.title = s.to_string();
        }
        if let Some(s) = r["summary"].as_str() {
            n.summary = s.to_string();
        }
        if let Some(s) = r["status"].as_str() {
            n.status = s.to_string();
        }
        if let Some(l) = r["resource_event_ids"].as_strings() {
            n.resources = l;
        }
        if let Some(l) = r["discussion_event_ids"].as_strings() {
            n.discussions = l;
        }
        for c in r["children"].as_array().unwrap_or(&[]) {
            self.upsert(c, &id, true, seq);
        }
    }

    /// The ids under each node, in creation order.
    fn children(&self) -> BTreeMap<String, Vec<String>> {
        let mut kids: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for id in &self.order {
            if let Some(n) = self.nodes.get(id) {
                if !n.parent.is_empty() {
                    kids.entry(n.parent.clone()).or_default().push(id.clone());
                }
            }
        }
        kids
    }

    /// id and every node under it (none when id is unknown).
    fn subtree(&self, id: &str) -> Vec<String> {
        if !self.nodes.contains_key(id) {
            return Vec::new();
        }
        let kids = self.children();
        let mut out = vec![id.to_string()];
        let mut seen: BTreeSet<String> = BTreeSet::new();
        seen.insert(id.to_string());
        let mut i = 0;
        while i < out.len() {
            if let Some(cs) = kids.get(&out[i]) {
                for c in cs {
                    if seen.insert(c.clone()) {
                        out.push(c.clone());
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// The graph's parent lookup.
    fn parent_of(&self, id: &str) -> Option<String> {
        self.nodes.get(id).map(|n| n.parent.clone())
    }
}

/// Whether a is b or under b, following parent links (a lookup that may
/// differ from the graph's) at most limit steps: a longer chain is a cycle,
/// which counts as inside.
fn inside(a: &str, b: &str, parent: &dyn Fn(&str) -> Option<String>, limit: usize) -> bool {
    let mut a = a.to_string();
    for _ in 0..=limit {
        if a == b {
            return true;
        }
        match parent(&a) {
            Some(p) if !p.is_empty() => a = p,
            _ => return false,
        }
    }
    true
}

fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = a.to_vec();
    for s in b {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The graph.update validator.

/// The payload members each operation uses.
fn op_members(op: &str) -> Option<&'static [&'static str]> {
    Some(match op {
        "upsert_node" => &["node"],
        "replace_snapshot" => &["nodes"],
        "delete_node" | "mark_resolved" => &["node_id"],
        "move_node" => &["node_id", "to_parent_id", "from_parent_id"],
        "merge_nodes" => &["node_ids", "node_id"],
        _ => return None,
    })
}

/// The operation-specific members of graph.update.
const OP_FIELDS: &[&str] = &["node", "nodes", "node_id", "node_ids", "from_parent_id", "to_parent_id"];

/// Collects the refusals of one graph.update against a graph.
struct Check<'a> {
    g: Graph<'a>,
    errs: Vec<FieldError>,
    /// the update repeats a node id: its tree is ill-defined
    dups: bool,
}

/// One node of an update's tree.
struct Flat {
    id: String,
    /// JSON pointer of the node object
    path: String,
    /// its parent after the update ("" for a root)
    parent: String,
    /// the update sets its parent (nested, or parent_id given)
    placed: bool,
    /// parent_id given as a string at the top level
    explicit: bool,
}

/// Checks a graph.update proposal against the current graph.
fn validate_graph(req: &ValidateRequest) -> Vec<FieldError> {
    let p = &req.payload;
    let op = p["operation"].as_str().unwrap_or("");
    let used = match op_members(op) {
        Some(used) => used,
        None => return vec![], // the pack's schema lists the operations
    };
    let mut c = Check { g: replay(&req.room), errs: Vec::new(), dups: false };
    for f in OP_FIELDS {
        if p.get(f).is_some() && !used.contains(f) {
            c.add(&format!("/payload/{}", f), format!("{} is not used by {}", f, op));
        }
    }
    let id = p["node_id"].as_str().unwrap_or("");
    match op {
        "upsert_node" => c.upsert(&p["node"]),
        "replace_snapshot" => c.snapshot(&p["nodes"]),
        "delete_node" | "mark_resolved" => c.need(id, "/payload/node_id"),
        "move_node" => c.move_node(p, id),
        "merge_nodes" => c.merge(p, id),
        _ => {}
    }
    c.errs
}

impl<'a> Check<'a> {
    fn add(&mut self, path: &str, msg: String) {
        self.errs.push(FieldError::new(path, msg));
    }

    /// Refuses a node id the graph does not have, when the graph is known.
    fn need(&mut self, id: &str, path: &str) {
        if !self.g.nodes.contains_key(id) && self.g.known {
            self.add(path, format!("no node {} in the graph", q(id)));
        }
    }

    fn limit(&self) -> usize {
        self.g.nodes.len() + 2
    }

    /// Lists the nodes of a tree in document order, refusing duplicate ids
    /// and nested children that name another parent.
    fn flatten(&mut self, r: &Value, path: &str, enclosing: &str, nested: bool, out: &mut Vec<Flat>, first: &mut BTreeMap<String, String>) {
        let id = match r["id"].as_str() {
            Some(id) => id,
            None => return,
        };
        if let Some(at) = first.get(id) {
            let msg = format!("node id {} appears twice in this update (first at {})", q(id), at);
            self.add(&format!("{}/id", path), msg);
            self.dups = true;
        } else {
            first.insert(id.to_string(), path.to_string());
        }
        let mut f = Flat { id: id.to_string(), path: path.to_string(), parent: String::new(), placed: false, explicit: false };
        let pid = r.get("parent_id");
        let parent = pid.and_then(Value::as_str);
        if nested {
            f.parent = enclosing.to_string();
            f.placed = true;
            if pid.is_some() && parent != Some(enclosing) {
                self.add(
                    &format!("{}/parent_id", path),
                    format!("a child of {} cannot name another parent; leave parent_id out or set it to {}", q(enclosing), q(enclosing)),
                );
            }
        } else if let Some(Value::Null) = pid {
            f.placed = true;
        } else if let Some(parent) = parent {
            f.parent = parent.to_string();
            f.placed = true;
            f.explicit = true;
        }
        out.push(f);
        for (i, ch) in r["children"].as_array().unwrap_or(&[]).iter().enumerate() {
            self.flatten(ch, &format!("{}/children/{}", path, i), id, true, out, first);
        }
    }

    fn upsert(&mut self, r: &Value) {
        let mut nodes = Vec::new();
        self.flatten(r, "/payload/node", "", false, &mut nodes, &mut BTreeMap::new());
        if nodes.is_empty() {
            return;
        }
        let root = &nodes[0];
        if root.explicit {
            if root.parent == root.id {
                let path = format!("{}/parent_id", root.path);
                self.add(&path, "a node cannot be its own parent".to_string());
                return;
            }
            if !nodes.iter().any(|f| f.id == root.parent) {
                let (parent, path) = (root.parent.clone(), format!("{}/parent_id", root.path));
                self.need(&parent, &path);
            }
        }
        let limit = self.limit() + nodes.len();
        let err = cycles(self.dups, &nodes, &|id: &str| self.g.parent_of(id), limit);
        self.errs.extend(err);
    }

    fn snapshot(&mut self, list: &Value) {
        let mut nodes = Vec::new();
        let mut first = BTreeMap::new();
        for (i, n) in list.as_array().unwrap_or(&[]).iter().enumerate() {
            self.flatten(n, &format!("/payload/nodes/{}", i), "", false, &mut nodes, &mut first);
        }
        for f in &nodes {
            if !f.explicit {
                continue;
            }
            if f.parent == f.id {
                self.add(&format!("{}/parent_id", f.path), "a node cannot be its own parent".to_string());
            } else if !first.contains_key(&f.parent) {
                self.add(&format!("{}/parent_id", f.path), format!("no node {} in this snapshot", q(&f.parent)));
            }
        }
        // The snapshot replaces the graph: no other parents.
        let err = cycles(self.dups, &nodes, &|_: &str| None, nodes.len() + 2);
        self.errs.extend(err);
    }

    fn move_node(&mut self, p: &Value, id: &str) {
        let to = p["to_parent_id"].as_str().unwrap_or("");
        self.need(id, "/payload/node_id");
        if to == id {
            self.add("/payload/to_parent_id", "a node cannot be moved under itself".to_string());
            return;
        }
        self.need(to, "/payload/to_parent_id");
        let current = self.g.nodes.get(id).map(|n| n.parent.clone());
        if current.is_some() && self.g.nodes.contains_key(to) && inside(to, id, &|x: &str| self.g.parent_of(x), self.limit()) {
            self.add("/payload/to_parent_id", format!("{} is inside {}; moving {} under it would make a cycle", q(to), q(id), q(id)));
        }
        if let (Some(from), Some(current)) = (p["from_parent_id"].as_str(), current) {
            if current != from {
                self.add("/payload/from_parent_id", format!("node {} is under {}, not {}", q(id), place(&current), place(from)));
            }
        }
    }

    fn merge(&mut self, p: &Value, target: &str) {
        let sources = p["node_ids"].as_strings().unwrap_or_default();
        for (i, s) in sources.iter().enumerate() {
            let path = format!("/payload/node_ids/{}", i);
            if s == target {
                self.add(&path, format!("the surviving node {} cannot also be merged away", q(target)));
                continue;
            }
            self.need(s, &path);
        }
        self.need(target, "/payload/node_id");
        if !self.g.nodes.contains_key(target) {
            return;
        }
        for s in &sources {
            if s != target && self.g.nodes.contains_key(s) && inside(target, s, &|x: &str| self.g.parent_of(x), self.limit()) {
                self.add("/payload/node_id", format!("{} is inside {}, which this update merges away", q(target), q(s)));
                return;
            }
        }
    }
}

/// The refusal of the first node an update places inside itself, unless the
/// update repeats a node id (dups); parent resolves nodes the update does
/// not place.
fn cycles(dups: bool, nodes: &[Flat], parent: &dyn Fn(&str) -> Option<String>, limit: usize) -> Option<FieldError> {
    if dups {
        return None;
    }
    let placed: BTreeMap<&str, &str> = nodes.iter().filter(|f| f.placed).map(|f| (f.id.as_str(), f.parent.as_str())).collect();
    let after = |id: &str| match placed.get(id) {
        Some(p) => Some(p.to_string()),
        None => parent(id),
    };
    let f = nodes.iter().find(|f| f.placed && !f.parent.is_empty() && f.parent != f.id && inside(&f.parent, &f.id, &after, limit))?;
    let path = if f.explicit { format!("{}/parent_id", f.path) } else { format!("{}/id", f.path) };
    let p = &f.parent;
    Some(FieldError::new(path, format!("putting {} under {} would make a cycle: {} would be inside {}", q(&f.id), q(p), q(p), q(&f.id))))
}

/// Names a parent for messages.
fn place(parent: &str) -> String {
    if parent.is_empty() {
        "the root".to_string()
    } else {
        q(parent)
    }
}

// ---------------------------------------------------------------------------
// The artifact.create validator.

/// Checks an artifact.create proposal: a unique artifact_id, and citations
/// that name records of the right types.
fn validate_artifact(req: &ValidateRequest) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let p = &req.payload;
    if let Some(id) = p["artifact_id"].as_str() {
        if let Some(rec) = req
            .room
            .records
            .iter()
            .find(|r| r.event_type == TYPE_ARTIFACT && !r.redacted && r.payload["artifact_id"].as_str().unwrap_or("") == id)
        {
            errs.push(FieldError::new(
                "/payload/artifact_id",
                format!(
                    "artifact_id {} is already used by artifact.create event {} (seq {}); it must be unique in the room",
                    q(id),
                    rec.event_id,
                    rec.seq
                ),
            ));
        }
    }
    let mut cite = |path: String, id: &str, want: &str| match req.room.record(id) {
        None if req.room.records_truncated => {
            errs.push(FieldError::new(path, format!("event {} is not among the records of this room that apconnect holds", id)))
        }
        None => errs.push(FieldError::new(path, format!("this room has no event {}", id))),
        Some(rec) if !want.is_empty() && rec.event_type != want => {
            errs.push(FieldError::new(path, format!("event {} is a {}, not a {}", id, rec.event_type, want)))
        }
        Some(_) => {}
    };
    if let Some(id) = p["graph_event_id"].as_str() {
        cite("/payload/graph_event_id".to_string(), id, TYPE_GRAPH);
    }
    for (i, v) in p["resource_event_ids"].as_array().unwrap_or(&[]).iter().enumerate() {
        cite(format!("/payload/resource_event_ids/{}", i), v.as_str().unwrap_or(""), TYPE_RESOURCE);
    }
    for (i, v) in p["discussion_event_ids"].as_array().unwrap_or(&[]).iter().enumerate() {
        cite(format!("/payload/discussion_event_ids/{}", i), v.as_str().unwrap_or(""), "");
    }
    errs
}

// ---------------------------------------------------------------------------
// The graph tool.

fn graph_tool() -> Tool {
    Tool::new(
        "graph",
        "Shows a room's knowledge graph (adp:curation/1.0), derived by replaying its graph.update events in seq \
         order, as an outline: each node with its id, status, title and cited events. node_id shows one subtree.",
        show_graph,
    )
    .title("Knowledge graph")
    .input_schema(&format!(
        r#"{{
	"type": "object",
	"required": ["room_id"],
	"properties": {{
	{},
	"node_id": {{"type": "string", "minLength": 1, "description": "Only this node and what is under it."}},
	"max_depth": {{"type": "integer", "minimum": 0, "maximum": 64, "description": "Leave out nodes deeper than this (0 shows the top only)."}}
	}},
	"additionalProperties": false
}}"#,
        ROOM_PROPERTIES
    ))
    .output_schema(
        r#"{
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
}"#,
    )
}

/// One node as the tool shows it, its texts cleaned.
struct ViewNode {
    id: String,
    parent_id: String,
    title: String,
    status: String,
    summary: String,
    depth: usize,
    children: usize,
    resources: Vec<String>,
    discussions: Vec<String>,
    seq: i64,
}

impl ViewNode {
    fn to_value(&self) -> Value {
        let mut v = Value::object().set("id", self.id.as_str());
        if !self.parent_id.is_empty() {
            v.insert("parent_id", self.parent_id.as_str());
        }
        v.insert("title", self.title.as_str());
        v.insert("status", self.status.as_str());
        if !self.summary.is_empty() {
            v.insert("summary", self.summary.as_str());
        }
        v.insert("depth", self.depth);
        v.insert("children", self.children);
        if !self.resources.is_empty() {
            v.insert("resource_event_ids", self.resources.clone());
        }
        if !self.discussions.is_empty() {
            v.insert("discussion_event_ids", self.discussions.clone());
        }
        if self.seq != 0 {
            v.insert("seq", self.seq);
        }
        v
    }
}

fn show_graph(req: &ToolRequest) -> Result<ToolResult, String> {
    let room = req.named_room()?;
    let g = replay(room);
    let top = req.arguments["node_id"].as_str().unwrap_or("");
    let max_depth = req.arguments["max_depth"].as_i64();
    let kids = g.children();
    let mut roots: Vec<String> = Vec::new();
    if !top.is_empty() {
        if !g.nodes.contains_key(top) {
            return Err(format!("the graph of room {} has no node {}", room.room_id, q(top)));
        }
        roots.push(top.to_string());
    } else {
        for id in &g.order {
            if let Some(n) = g.nodes.get(id) {
                if (n.parent.is_empty() || !g.nodes.contains_key(&n.parent)) && !roots.contains(id) {
                    roots.push(id.clone());
                }
            }
        }
    }
    let mut shown = Vec::new();
    let mut seen = BTreeSet::new();
    for id in &roots {
        walk(&g, &kids, id, 0, max_depth, &mut seen, &mut shown);
    }
    let mut structured = Value::object()
        .set("room_id", room.room_id.as_str())
        .set("complete", g.known)
        .set("updates", g.updates);
    if let Some(last) = g.last {
        structured.insert("last_update", Value::object().set("event_id", last.event_id.as_str()).set("seq", last.seq));
    }
    let structured = structured
        .set("node_count", g.nodes.len())
        .set("nodes", Value::Array(shown.iter().map(ViewNode::to_value).collect()));
    Ok(ToolResult::text(graph_text(&room.room_id, &g, &shown)).with_structured(structured))
}

/// Lists id and, depth first, what is under it, each node once and none
/// deeper than max_depth.
fn walk(
    g: &Graph,
    kids: &BTreeMap<String, Vec<String>>,
    id: &str,
    depth: usize,
    max_depth: Option<i64>,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<ViewNode>,
) {
    let n = match g.nodes.get(id) {
        Some(n) => n,
        None => return,
    };
    if seen.contains(id) || max_depth.map_or(false, |m| depth as i64 > m) {
        return;
    }
    seen.insert(id.to_string());
    let children = kids.get(id).map_or(&[][..], |c| &c[..]);
    out.push(ViewNode {
        id: clean(id, 120),
        parent_id: clean(&n.parent, 120),
        title: clean(&n.title, 200),
        status: clean(&n.status, 20),
        summary: clean(&n.summary, 500),
        depth,
        children: children.len(),
        resources: n.resources.clone(),
        discussions: n.discussions.clone(),
        seq: n.seq,
    });
    for c in children {
        walk(g, kids, c, depth + 1, max_depth, seen, out);
    }
}

fn graph_text(room_id: &str, g: &Graph, nodes: &[ViewNode]) -> String {
    let mut b = if g.nodes.is_empty() {
        format!("The knowledge graph of room {} is empty.", room_id)
    } else {
        format!("Knowledge graph of room {}: {} from {}.", room_id, plural(g.nodes.len(), "node"), plural(g.updates, "update"))
    };
    for n in nodes {
        b.push_str(&format!("\n{}- [{}] {} ({})", "  ".repeat(n.depth), n.status, n.title, n.id));
        if !n.resources.is_empty() {
            b.push_str(&format!(" — {}", plural(n.resources.len(), "resource")));
        }
        if !n.discussions.is_empty() {
            b.push_str(&format!(" — {}", plural(n.discussions.len(), "discussion event")));
        }
    }
    if !g.known {
        b.push_str("\n(partial: the graph may miss updates apconnect does not hold)");
    }
    b
}
