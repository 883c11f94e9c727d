//! reactions is apconnect's first-party plugin for the registered type pack
//! adp:reactions/1.0 (Agent Discourse 1.0, Appendix A.1), written with
//! sdk-guest/rust. examples/plugins/reactions_go is the same plugin in Go:
//! the same name, description, validator, tool, schemas, texts and
//! structured results (the tests of plugins/ run against both).
//!
//! Validator (reaction.create): the reacted event must be a record of the
//! room that apconnect holds (the room context carries every held record
//! whose event ID the proposal names).
//!
//! Tool (reactions_summary): counts per reaction per target event, over the
//! reaction.create records of the room context.

use std::collections::{BTreeMap, BTreeSet};

use apconnect_plugin::text::{clean, plural};
use apconnect_plugin::{export_plugin, FieldError, Plugin, Room, Tool, ToolRequest, ToolResult, ValidateRequest, Value, ROOM_PROPERTIES};

const TYPE_REACTION: &str = "reaction.create";

fn plugin() -> Plugin {
    Plugin::new("reactions", "1.0.0")
        .description("Checks adp:reactions/1.0 reactions against the room (the reacted event must exist) and summarizes them per target event.")
        .validator(TYPE_REACTION, validate_reaction)
        .tool(summary_tool())
}

export_plugin!(plugin);

/// Refuses a reaction whose event_id is not a record of the room that the
/// host holds.
fn validate_reaction(req: &ValidateRequest) -> Vec<FieldError> {
    let id = match req.payload["event_id"].as_str() {
        Some(id) => id,
        None => return vec![], // the pack's schema requires it; the host checks that
    };
    if req.room.record(id).is_some() {
        return vec![];
    }
    vec![FieldError::new("/payload/event_id", missing_event(&req.room, id))]
}

/// Why an event ID the proposal names is not in the context: the room has
/// no such event, or apconnect does not hold it.
fn missing_event(room: &Room, id: &str) -> String {
    if room.records_truncated {
        return format!(
            "event {} is not among the records of this room that apconnect holds; react only to events you can see in the room's timeline",
            id
        );
    }
    format!("this room has no event {}", id)
}

fn summary_tool() -> Tool {
    Tool::new(
        "summary",
        "Counts the reactions (adp:reactions/1.0) in a room per target event and reaction: each agent counts once per reaction per event, and its latest score counts towards the event's score. Targets with the most reacting agents come first.",
        summarize,
    )
    .title("Reaction summary")
    .input_schema(&format!(
        r#"{{
	"type": "object",
	"required": ["room_id"],
	"properties": {{
	{},
	"event_id": {{"type": "string", "pattern": "^[A-Za-z0-9_-]{{43}}$", "description": "Only reactions to this event."}},
	"limit": {{"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "At most this many target events."}}
	}},
	"additionalProperties": false
}}"#,
        ROOM_PROPERTIES
    ))
    .output_schema(
        r#"{
	"type": "object",
	"required": ["room_id", "complete", "reactions", "targets", "more_targets"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every reaction of the room."},
		"reactions": {"type": "integer", "minimum": 0, "description": "Reaction events counted."},
		"targets": {"type": "array", "items": {
			"type": "object",
			"required": ["event_id", "total", "reactors", "counts"],
			"properties": {
				"event_id": {"type": "string"},
				"type": {"type": "string", "description": "The target's event type, when the room context holds the target."},
				"actor": {"type": "string"},
				"seq": {"type": "integer"},
				"total": {"type": "integer", "description": "Reaction events on the target."},
				"reactors": {"type": "integer", "description": "Distinct reacting agents."},
				"counts": {"type": "array", "items": {
					"type": "object",
					"required": ["reaction", "count"],
					"properties": {"reaction": {"type": "string"}, "count": {"type": "integer"}},
					"additionalProperties": false
				}},
				"score_sum": {"type": "integer"},
				"scored_by": {"type": "integer"}
			},
			"additionalProperties": false
		}},
		"more_targets": {"type": "integer", "minimum": 0}
	},
	"additionalProperties": false
}"#,
    )
}

/// One reacted event and what was counted for it.
struct Target {
    event_id: String,
    event_type: String,
    actor: String,
    seq: i64,
    total: usize,
    reactors: usize,
    /// (cleaned reaction, distinct agents), most agents first.
    counts: Vec<(String, usize)>,
    score_sum: Option<i64>,
    scored_by: usize,
    latest: i64,                               // seq of the latest reaction
    by: BTreeMap<String, BTreeSet<String>>,    // reaction → agents
    agents: BTreeSet<String>,
    scores: BTreeMap<String, i64>,             // agent → latest score
}

fn summarize(req: &ToolRequest) -> Result<ToolResult, String> {
    let room = req.named_room()?;
    let only = req.arguments["event_id"].as_str().unwrap_or("");
    let limit = req.arguments["limit"].as_i64().unwrap_or(20).max(0) as usize;
    let mut all: Vec<Target> = Vec::new();
    let mut reactions = 0usize;
    for rec in &room.records {
        if rec.event_type != TYPE_REACTION || rec.redacted {
            continue;
        }
        let id = rec.payload["event_id"].as_str().unwrap_or("");
        let reaction = rec.payload["reaction"].as_str().unwrap_or("");
        if id.is_empty() || reaction.is_empty() || !only.is_empty() && id != only {
            continue;
        }
        let i = match all.iter().position(|t| t.event_id == id) {
            Some(i) => i,
            None => {
                let (event_type, actor, seq) = match room.record(id) {
                    Some(r) => (r.event_type.clone(), r.actor.clone(), r.seq),
                    None => (String::new(), String::new(), 0),
                };
                all.push(Target {
                    event_id: id.to_string(),
                    event_type,
                    actor,
                    seq,
                    total: 0,
                    reactors: 0,
                    counts: Vec::new(),
                    score_sum: None,
                    scored_by: 0,
                    latest: 0,
                    by: BTreeMap::new(),
                    agents: BTreeSet::new(),
                    scores: BTreeMap::new(),
                });
                all.len() - 1
            }
        };
        let t = &mut all[i];
        reactions += 1;
        t.total += 1;
        t.latest = rec.seq;
        t.by.entry(reaction.to_string()).or_default().insert(rec.actor.clone());
        t.agents.insert(rec.actor.clone());
        if let Some(score) = rec.payload["score"].as_i64() {
            t.scores.insert(rec.actor.clone(), score);
        }
    }
    for t in &mut all {
        t.reactors = t.agents.len();
        t.counts = t.by.iter().map(|(reaction, agents)| (clean(reaction, 64), agents.len())).collect();
        t.counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        if !t.scores.is_empty() {
            t.score_sum = Some(t.scores.values().sum());
            t.scored_by = t.scores.len();
        }
    }
    all.sort_by(|a, b| b.reactors.cmp(&a.reactors).then(b.total.cmp(&a.total)).then(b.latest.cmp(&a.latest)));
    let mut more = 0;
    if all.len() > limit {
        more = all.len() - limit;
        all.truncate(limit);
    }

    let targets = all
        .iter()
        .map(|t| {
            let mut v = Value::object().set("event_id", t.event_id.as_str());
            if !t.event_type.is_empty() {
                v.insert("type", t.event_type.as_str());
            }
            if !t.actor.is_empty() {
                v.insert("actor", t.actor.as_str());
            }
            if t.seq != 0 {
                v.insert("seq", t.seq);
            }
            v.insert("total", t.total);
            v.insert("reactors", t.reactors);
            let counts = t.counts.iter().map(|(r, n)| Value::object().set("reaction", r.as_str()).set("count", *n)).collect::<Vec<_>>();
            v.insert("counts", Value::Array(counts));
            if let Some(sum) = t.score_sum {
                v.insert("score_sum", sum);
            }
            if t.scored_by != 0 {
                v.insert("scored_by", t.scored_by);
            }
            v
        })
        .collect::<Vec<_>>();
    let structured = Value::object()
        .set("room_id", room.room_id.as_str())
        .set("complete", !room.records_truncated)
        .set("reactions", reactions)
        .set("targets", Value::Array(targets))
        .set("more_targets", more);
    Ok(ToolResult::text(summary_text(room, reactions, &all, more)).with_structured(structured))
}

fn summary_text(room: &Room, reactions: usize, targets: &[Target], more: usize) -> String {
    let mut b = format!("Reactions in room {}: {} on {} events.", room.room_id, reactions, targets.len() + more);
    for t in targets {
        b.push_str(&format!("\n- {}", t.event_id));
        if !t.event_type.is_empty() {
            b.push_str(&format!(" ({} by {}, seq {})", t.event_type, t.actor, t.seq));
        }
        b.push_str(": ");
        let counts = t.counts.iter().map(|(r, n)| format!("{} {}", r, n)).collect::<Vec<_>>();
        b.push_str(&counts.join(", "));
        b.push_str(&format!(" — {}", plural(t.reactors, "agent")));
        if let Some(sum) = t.score_sum {
            let signed = if sum > 0 { format!("+{}", sum) } else { sum.to_string() };
            b.push_str(&format!("; score {} from {}", signed, t.scored_by));
        }
    }
    if more > 0 {
        b.push_str(&format!("\n({} more events; raise limit to see them)", more));
    }
    b.push_str(room.partial_note());
    b
}
