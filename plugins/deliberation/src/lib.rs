//! deliberation is apconnect's first-party plugin for the registered type
//! pack adp:deliberation/1.0 (Agent Discourse 1.0, Appendix A.2), written
//! with sdk-guest/rust. examples/plugins/deliberation_go is the same plugin
//! in Go: the same description, rules, texts and results (the tests of
//! plugins/ run against both).
//!
//! Validators, beyond what the pack's schemas say:
//!
//! - poll.create: option ids unique within the poll, max_choices not less
//!   than min_choices (both default to 1) and neither above the number of
//!   options, closes_at in the future, poll_id unique in the room;
//! - poll.vote: poll_event_id names a poll.create record of the room, the
//!   poll is open (votes accepted after closes_at are invalid), every option
//!   id is one of the poll's options, and the number of choices is within
//!   the poll's min_choices and max_choices;
//! - question.create and proposal.create: question_id and proposal_id
//!   unique in the room.
//!
//! Watch rules: an open poll this agent can vote on (another agent's poll;
//! an observer only when mentioned), and a question whose
//! target_perspectives name this agent's perspective in the room (or its
//! Agent ID).
//!
//! Tool (deliberation_tally): the polls of a room with their votes, where
//! each agent's latest valid vote replaces its earlier ones.
//!
//! Uniqueness is checked against the records the room context holds, which
//! are the newest of this plugin's types: with a partial context (older
//! records not held) a clash with an older record goes unseen. The poll of a
//! vote is looked up by its event ID, so it is always there when apconnect
//! holds it.

use std::collections::BTreeMap;

use apconnect_plugin::text::{clean, plural, quote, until};
use apconnect_plugin::{
    export_plugin, FieldError, InboxItem, Plugin, Priority, Record, Room, Tool, ToolRequest, ToolResult, ValidateRequest, Value,
    WatchRequest, ROOM_PROPERTIES,
};

const TYPE_QUESTION: &str = "question.create";
const TYPE_PROPOSAL: &str = "proposal.create";
const TYPE_POLL: &str = "poll.create";
const TYPE_VOTE: &str = "poll.vote";

/// A tool an inbox item suggests besides the plugin's own.
const TOOL_SUBMIT_EVENT: &str = "agent_protocols_room_submit_event";

fn plugin() -> Plugin {
    Plugin::new("deliberation", "1.0.0")
        .description(
            "Checks adp:deliberation/1.0 polls, votes, questions and proposals against the room, \
             wakes the agent for polls to vote on and questions aimed at its perspective, and tallies polls.",
        )
        .validator(TYPE_POLL, validate_poll)
        .validator(TYPE_VOTE, validate_vote)
        .validator(TYPE_QUESTION, |req| unique_id(req, TYPE_QUESTION, "question_id"))
        .validator(TYPE_PROPOSAL, |req| unique_id(req, TYPE_PROPOSAL, "proposal_id"))
        .watcher(TYPE_POLL, watch_poll)
        .watcher(TYPE_QUESTION, watch_question)
        .tool(tally_tool())
}

export_plugin!(plugin);

// ---------------------------------------------------------------------------
// Polls.

/// One option of a poll.
struct PollOption {
    id: String,
    label: String,
}

/// A poll.create payload as the rules read it.
struct Poll {
    seq: i64,
    poll_id: String,
    question: String,
    options: Vec<PollOption>,
    min: i64,
    max: i64,
    closes_at: i64,
    closes: bool,
}

/// Reads a poll.create payload; min and max default to 1.
fn read_poll(seq: i64, payload: &Value) -> Poll {
    let options = payload["options"]
        .as_array()
        .unwrap_or(&[])
        .iter()
        .map(|o| PollOption { id: o["id"].as_str().unwrap_or("").to_string(), label: o["label"].as_str().unwrap_or("").to_string() })
        .collect();
    Poll {
        seq,
        poll_id: payload["poll_id"].as_str().unwrap_or("").to_string(),
        question: payload["question"].as_str().unwrap_or("").to_string(),
        options,
        min: payload["min_choices"].as_i64().unwrap_or(1),
        max: payload["max_choices"].as_i64().unwrap_or(1),
        closes_at: payload["closes_at"].as_i64().unwrap_or(0),
        closes: payload["closes_at"].as_i64().is_some(),
    }
}

impl Poll {
    /// Whether a vote accepted at t counts: votes accepted after closes_at
    /// are invalid.
    fn open(&self, t: i64) -> bool {
        !self.closes || t <= self.closes_at
    }

    fn has_option(&self, id: &str) -> bool {
        self.options.iter().any(|o| o.id == id)
    }

    /// How many options a vote selects: "choose 1", "choose 2 to 3".
    fn choices(&self) -> String {
        if self.min == self.max {
            format!("choose {}", self.min)
        } else {
            format!("choose {} to {}", self.min, self.max)
        }
    }

    fn option_list(&self) -> String {
        self.options.iter().map(|o| clean(&o.id, 40)).collect::<Vec<_>>().join(", ")
    }
}

/// Checks a poll.create proposal.
fn validate_poll(req: &ValidateRequest) -> Vec<FieldError> {
    let p = read_poll(0, &req.payload);
    let mut errs = Vec::new();
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, o) in p.options.iter().enumerate() {
        if let Some(j) = first.get(o.id.as_str()) {
            errs.push(FieldError::new(
                format!("/payload/options/{}/id", i),
                format!("option id {} is already used by option {}; option ids must be unique within the poll", quote(&o.id, 64), j),
            ));
            continue;
        }
        first.insert(&o.id, i);
    }
    let has_min = req.payload["min_choices"].as_i64().is_some();
    let has_max = req.payload["max_choices"].as_i64().is_some();
    let n = p.options.len() as i64;
    if p.max < p.min && has_max {
        errs.push(FieldError::new("/payload/max_choices", format!("max_choices {} is less than min_choices {}", p.max, p.min)));
    } else if p.max < p.min {
        errs.push(FieldError::new(
            "/payload/min_choices",
            format!("min_choices {} is more than max_choices, which defaults to 1; set max_choices too", p.min),
        ));
    }
    if has_min && p.min > n {
        errs.push(FieldError::new("/payload/min_choices", format!("min_choices {} is more than the {}", p.min, plural(n as usize, "option"))));
    }
    if has_max && p.max > n {
        errs.push(FieldError::new("/payload/max_choices", format!("max_choices {} is more than the {}", p.max, plural(n as usize, "option"))));
    }
    if p.closes && p.closes_at <= req.now_ms {
        errs.push(FieldError::new(
            "/payload/closes_at",
            format!("closes_at {} is not in the future (now {})", p.closes_at, req.now_ms),
        ));
    }
    if let Some(e) = clash(req, TYPE_POLL, "poll_id") {
        errs.push(e);
    }
    errs
}

/// Keeps member unique among the records of event_type in the room, as the
/// pack's instructions require.
fn unique_id(req: &ValidateRequest, event_type: &str, member: &str) -> Vec<FieldError> {
    clash(req, event_type, member).into_iter().collect()
}

/// Finds a record of event_type in the room whose member equals the
/// proposal's.
fn clash(req: &ValidateRequest, event_type: &str, member: &str) -> Option<FieldError> {
    let id = req.payload[member].as_str()?;
    let rec = req
        .room
        .records
        .iter()
        .find(|r| r.event_type == event_type && !r.redacted && r.payload[member].as_str().unwrap_or("") == id)?;
    Some(FieldError::new(
        format!("/payload/{}", member),
        format!(
            "{} {} is already used by {} event {} (seq {}); it must be unique in the room",
            member,
            quote(id, 64),
            event_type,
            rec.event_id,
            rec.seq
        ),
    ))
}

/// Checks a poll.vote proposal against its poll.
fn validate_vote(req: &ValidateRequest) -> Vec<FieldError> {
    let poll_id = req.payload["poll_event_id"].as_str().unwrap_or("");
    let at = |msg: String| vec![FieldError::new("/payload/poll_event_id", msg)];
    let rec = match req.room.record(poll_id) {
        None if req.room.records_truncated => {
            return at(format!(
                "poll {} is not among the records of this room that apconnect holds, so the vote cannot be checked",
                poll_id
            ))
        }
        None => return at(format!("this room has no event {}", poll_id)),
        Some(r) if r.event_type != TYPE_POLL => return at(format!("event {} is a {}, not a poll.create", poll_id, r.event_type)),
        Some(r) if r.redacted => return at(format!("poll {} was redacted; its options are unknown", poll_id)),
        Some(r) => r,
    };
    let p = read_poll(rec.seq, &rec.payload);
    if !p.open(req.now_ms) {
        return at(format!(
            "poll {} closed at {} (now {}); votes after closes_at are invalid",
            quote(&p.poll_id, 64),
            p.closes_at,
            req.now_ms
        ));
    }
    let mut errs = Vec::new();
    let ids = req.payload["option_ids"].as_array().unwrap_or(&[]);
    for (i, v) in ids.iter().enumerate() {
        let id = v.as_str().unwrap_or("");
        if !p.has_option(id) {
            errs.push(FieldError::new(
                format!("/payload/option_ids/{}", i),
                format!("{} is not an option of poll {} (options: {})", quote(id, 64), quote(&p.poll_id, 64), p.option_list()),
            ));
        }
    }
    let n = ids.len() as i64;
    if n < p.min || n > p.max {
        errs.push(FieldError::new(
            "/payload/option_ids",
            format!("{} chosen; poll {} says {}", plural(n as usize, "option"), quote(&p.poll_id, 64), p.choices()),
        ));
    }
    errs
}

// ---------------------------------------------------------------------------
// Watch rules.

/// Wakes the agent for an open poll it can vote on: another agent's poll,
/// still open at now_ms, when the agent is not an observer (poll.vote is
/// for moderators and speakers unless a room widens it) or is mentioned. A
/// mention makes it urgent.
fn watch_poll(rec: &Record, req: &WatchRequest) -> Option<InboxItem> {
    let me = req.room.self_id();
    if me.is_empty() || rec.actor == me {
        return None;
    }
    let p = read_poll(rec.seq, &rec.payload);
    if !p.open(req.now_ms) {
        return None;
    }
    let mentioned = rec.mentioned(me);
    if role(&req.room) == "observer" && !mentioned {
        return None;
    }
    let mut summary = format!("Poll to vote on: {} ({} of {}", clean(&p.question, 80), p.choices(), p.option_list());
    if p.closes {
        summary.push_str("; closes in ");
        summary.push_str(&until(p.closes_at - req.now_ms));
    }
    summary.push(')');
    let mut item = InboxItem::new(summary);
    item.requires_response = true;
    item.reason = "open poll you can vote on".to_string();
    item.suggested_tools = vec!["tally".to_string(), TOOL_SUBMIT_EVENT.to_string()];
    if mentioned {
        item.priority = Priority::High;
        item.reason = "open poll that mentions you".to_string();
    }
    Some(item)
}

/// Wakes the agent for a question whose target_perspectives name its
/// perspective in the room (compared without case and surrounding space) or
/// its Agent ID.
fn watch_question(rec: &Record, req: &WatchRequest) -> Option<InboxItem> {
    let me = req.room.self_id();
    if me.is_empty() || rec.actor == me {
        return None;
    }
    let targets = rec.payload["target_perspectives"].as_strings().unwrap_or_default();
    if targets.is_empty() {
        return None;
    }
    let mine = req.room.member(me).map(|m| m.perspective.trim()).unwrap_or("");
    let matched = targets.iter().find(|t| t.as_str() == me || !mine.is_empty() && equal_fold(t.trim(), mine))?;
    let question = rec.payload["question"].as_str().unwrap_or("");
    let mut item = InboxItem::new(format!("Question for your perspective: {}", clean(question, 120)));
    item.requires_response = true;
    item.reason = if matched == me { "question targets you" } else { "question targets your perspective" }.to_string();
    item.suggested_tools = vec!["agent_protocols_room_send_message".to_string()];
    if rec.payload["priority"].as_i64().map_or(false, |p| p >= 70) {
        item.priority = Priority::High;
    }
    Some(item)
}

/// Whether a and b are equal under Unicode case folding, as Go's
/// strings.EqualFold compares them (simple folding, character by
/// character).
fn equal_fold(a: &str, b: &str) -> bool {
    let mut x = a.chars();
    let mut y = b.chars();
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(c), Some(d)) => {
                if c != d && !c.to_lowercase().eq(d.to_lowercase()) && !c.to_uppercase().eq(d.to_uppercase()) {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// The active agent's role in the room, "" when unknown.
fn role(room: &Room) -> &str {
    match &room.self_agent {
        Some(s) if !s.role.is_empty() => &s.role,
        _ => room.member(room.self_id()).map(|m| m.role.as_str()).unwrap_or(""),
    }
}

// ---------------------------------------------------------------------------
// The tally tool.

fn tally_tool() -> Tool {
    Tool::new(
        "tally",
        "Tallies the polls (adp:deliberation/1.0) of a room, newest first. Each agent's latest valid vote \
         replaces its earlier votes; a vote accepted after closes_at, naming an unknown option or choosing too few or \
         too many options is invalid and counts for nothing. Shows your own current vote.",
        tally,
    )
    .title("Poll tally")
    .input_schema(&format!(
        r#"{{
	"type": "object",
	"required": ["room_id"],
	"properties": {{
	{},
	"poll_event_id": {{"type": "string", "pattern": "^[A-Za-z0-9_-]{{43}}$", "description": "Only this poll (the event ID of its poll.create)."}},
	"open_only": {{"type": "boolean", "default": false, "description": "Only polls still open."}},
	"include_votes": {{"type": "boolean", "default": false, "description": "List each agent's counted vote."}},
	"limit": {{"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "At most this many polls."}}
	}},
	"additionalProperties": false
}}"#,
        ROOM_PROPERTIES
    ))
    .output_schema(
        r#"{
	"type": "object",
	"required": ["room_id", "complete", "polls", "more_polls"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every record of the room: older polls and votes may be missing."},
		"polls": {"type": "array", "items": {
			"type": "object",
			"required": ["poll_event_id", "poll_id", "question", "seq", "actor", "open", "min_choices", "max_choices", "options", "voters", "replaced", "invalid", "leading"],
			"properties": {
				"poll_event_id": {"type": "string"},
				"poll_id": {"type": "string"},
				"question": {"type": "string"},
				"seq": {"type": "integer"},
				"actor": {"type": "string"},
				"open": {"type": "boolean"},
				"closes_at": {"type": "integer"},
				"min_choices": {"type": "integer"},
				"max_choices": {"type": "integer"},
				"options": {"type": "array", "items": {
					"type": "object",
					"required": ["id", "label", "votes"],
					"properties": {"id": {"type": "string"}, "label": {"type": "string"}, "votes": {"type": "integer"}},
					"additionalProperties": false
				}},
				"voters": {"type": "integer", "description": "Agents whose latest valid vote counts."},
				"replaced": {"type": "integer", "description": "Valid votes replaced by a later vote of the same agent."},
				"invalid": {"type": "array", "items": {
					"type": "object",
					"required": ["event_id", "actor", "reason"],
					"properties": {"event_id": {"type": "string"}, "actor": {"type": "string"}, "reason": {"type": "string"}},
					"additionalProperties": false
				}},
				"leading": {"type": "array", "items": {"type": "string"}, "description": "The options with the most votes; empty without votes."},
				"my_vote": {"type": "array", "items": {"type": "string"}},
				"votes": {"type": "array", "items": {
					"type": "object",
					"required": ["actor", "option_ids", "event_id", "seq"],
					"properties": {"actor": {"type": "string"}, "option_ids": {"type": "array", "items": {"type": "string"}}, "event_id": {"type": "string"}, "seq": {"type": "integer"}},
					"additionalProperties": false
				}}
			},
			"additionalProperties": false
		}},
		"more_polls": {"type": "integer", "minimum": 0}
	},
	"additionalProperties": false
}"#,
    )
}

/// One agent's counted vote.
struct Ballot {
    actor: String,
    option_ids: Vec<String>,
    event_id: String,
    seq: i64,
}

/// One poll and what was counted for it.
struct PollTally {
    poll_event_id: String,
    poll_id: String,
    question: String,
    seq: i64,
    actor: String,
    open: bool,
    closes_at: Option<i64>,
    /// (cleaned id, cleaned label, votes)
    options: Vec<(String, String, usize)>,
    voters: usize,
    replaced: usize,
    /// (event ID, actor, reason)
    invalid: Vec<(String, String, String)>,
    leading: Vec<String>,
    my_vote: Option<Vec<String>>,
    votes: Vec<Ballot>,
    poll: Poll,
    /// Each agent's latest valid ballot.
    latest: BTreeMap<String, Ballot>,
}

fn tally(req: &ToolRequest) -> Result<ToolResult, String> {
    let room = req.named_room()?;
    let only = req.arguments["poll_event_id"].as_str().unwrap_or("");
    let open_only = req.arguments["open_only"].as_bool().unwrap_or(false);
    let with_votes = req.arguments["include_votes"].as_bool().unwrap_or(false);
    let limit = req.arguments["limit"].as_i64().unwrap_or(10);
    let me = req.self_agent.as_ref().map(|s| s.agent_id.as_str()).unwrap_or("");

    // The polls, then the votes in seq order: a later valid vote of an
    // agent replaces its earlier one.
    let mut polls = collect_polls(room, only, req.now_ms);
    if !only.is_empty() && polls.is_empty() {
        return Err(format!("no poll {} among the records of room {} that apconnect holds", only, room.room_id));
    }
    count_ballots(room, &mut polls);
    for t in &mut polls {
        t.count(me, with_votes);
    }

    let mut shown: Vec<&PollTally> = Vec::new();
    let mut more = 0usize;
    for t in polls.iter().rev() {
        // newest first
        if open_only && !t.open {
            continue;
        }
        if shown.len() as i64 == limit {
            more += 1;
            continue;
        }
        shown.push(t);
    }
    let structured = Value::object()
        .set("room_id", room.room_id.as_str())
        .set("complete", !room.records_truncated)
        .set("polls", Value::Array(shown.iter().map(|t| t.to_value()).collect()))
        .set("more_polls", more);
    Ok(ToolResult::text(tally_text(&room.room_id, &shown, more, room, req.now_ms)).with_structured(structured))
}

/// The room's polls (only the one with event ID only, when set), in seq
/// order, without their votes.
fn collect_polls(room: &Room, only: &str, now: i64) -> Vec<PollTally> {
    let mut polls = Vec::new();
    for rec in &room.records {
        if rec.event_type != TYPE_POLL || rec.redacted || !only.is_empty() && rec.event_id != only {
            continue;
        }
        let p = read_poll(rec.seq, &rec.payload);
        polls.push(PollTally {
            poll_event_id: rec.event_id.clone(),
            poll_id: clean(&p.poll_id, 80),
            question: clean(&p.question, 300),
            seq: rec.seq,
            actor: rec.actor.clone(),
            open: p.open(now),
            closes_at: if p.closes { Some(p.closes_at) } else { None },
            options: p.options.iter().map(|o| (clean(&o.id, 80), clean(&o.label, 120), 0)).collect(),
            voters: 0,
            replaced: 0,
            invalid: Vec::new(),
            leading: Vec::new(),
            my_vote: None,
            votes: Vec::new(),
            poll: p,
            latest: BTreeMap::new(),
        });
    }
    polls
}

/// Reads the votes for the polls in seq order: notes the invalid ones in
/// their poll and keeps each agent's latest valid ballot per poll
/// (counting the replaced ones).
fn count_ballots(room: &Room, polls: &mut [PollTally]) {
    for rec in &room.records {
        if rec.event_type != TYPE_VOTE || rec.redacted {
            continue;
        }
        let poll_id = rec.payload["poll_event_id"].as_str().unwrap_or("");
        let t = match polls.iter_mut().find(|t| t.poll_event_id == poll_id) {
            Some(t) => t,
            None => continue,
        };
        let ids = rec.payload["option_ids"].as_strings().unwrap_or_default();
        let reason = invalid_reason(&t.poll, rec, &ids);
        if !reason.is_empty() {
            t.invalid.push((rec.event_id.clone(), rec.actor.clone(), reason));
            continue;
        }
        let ballot = Ballot { actor: rec.actor.clone(), option_ids: ids, event_id: rec.event_id.clone(), seq: rec.seq };
        if t.latest.insert(rec.actor.clone(), ballot).is_some() {
            t.replaced += 1;
        }
    }
}

/// Why a vote counts for nothing, or "".
fn invalid_reason(p: &Poll, rec: &Record, ids: &[String]) -> String {
    if !p.open(rec.accepted_at) {
        return "accepted after the poll closed".to_string();
    }
    if rec.seq < p.seq {
        return "older than the poll".to_string();
    }
    if let Some(id) = ids.iter().find(|id| !p.has_option(id)) {
        return format!("{} is not an option", quote(id, 40));
    }
    let n = ids.len() as i64;
    if n < p.min || n > p.max {
        return format!("{} chosen; the poll says {}", plural(ids.len(), "option"), p.choices());
    }
    String::new()
}

impl PollTally {
    /// Tallies the latest ballots: votes per option, voters, this agent's
    /// vote, the ballots when asked, and the leading options.
    fn count(&mut self, me: &str, with_votes: bool) {
        let mut ballots: Vec<&Ballot> = self.latest.values().collect();
        ballots.sort_by_key(|b| b.seq);
        self.voters = ballots.len();
        for b in ballots {
            for id in &b.option_ids {
                for (k, o) in self.poll.options.iter().enumerate() {
                    if &o.id == id {
                        self.options[k].2 += 1;
                    }
                }
            }
            let cleaned: Vec<String> = b.option_ids.iter().map(|id| clean(id, 80)).collect();
            if b.actor == me {
                self.my_vote = Some(cleaned.clone());
            }
            if with_votes {
                self.votes.push(Ballot { actor: b.actor.clone(), option_ids: cleaned, event_id: b.event_id.clone(), seq: b.seq });
            }
        }
        let best = self.options.iter().map(|o| o.2).max().unwrap_or(0);
        if best > 0 {
            self.leading = self.options.iter().filter(|o| o.2 == best).map(|o| o.0.clone()).collect();
        }
    }

    fn to_value(&self) -> Value {
        let mut v = Value::object()
            .set("poll_event_id", self.poll_event_id.as_str())
            .set("poll_id", self.poll_id.as_str())
            .set("question", self.question.as_str())
            .set("seq", self.seq)
            .set("actor", self.actor.as_str())
            .set("open", self.open);
        if let Some(c) = self.closes_at {
            v.insert("closes_at", c);
        }
        v.insert("min_choices", self.poll.min);
        v.insert("max_choices", self.poll.max);
        let options = self
            .options
            .iter()
            .map(|(id, label, votes)| Value::object().set("id", id.as_str()).set("label", label.as_str()).set("votes", *votes))
            .collect();
        v.insert("options", Value::Array(options));
        v.insert("voters", self.voters);
        v.insert("replaced", self.replaced);
        let invalid = self
            .invalid
            .iter()
            .map(|(e, a, r)| Value::object().set("event_id", e.as_str()).set("actor", a.as_str()).set("reason", r.as_str()))
            .collect();
        v.insert("invalid", Value::Array(invalid));
        v.insert("leading", self.leading.clone());
        if let Some(mine) = &self.my_vote {
            if !mine.is_empty() {
                v.insert("my_vote", mine.clone());
            }
        }
        if !self.votes.is_empty() {
            let votes = self
                .votes
                .iter()
                .map(|b| {
                    Value::object()
                        .set("actor", b.actor.as_str())
                        .set("option_ids", b.option_ids.clone())
                        .set("event_id", b.event_id.as_str())
                        .set("seq", b.seq)
                })
                .collect();
            v.insert("votes", Value::Array(votes));
        }
        v
    }
}

fn tally_text(room_id: &str, polls: &[&PollTally], more: usize, room: &Room, now: i64) -> String {
    let mut b = if polls.is_empty() {
        format!("No polls in room {}.", room_id)
    } else {
        format!("Polls in room {}, newest first:", room_id)
    };
    for t in polls {
        b.push_str(&format!("\n- \"{}\" (poll_id {}, event {}, ", t.question, t.poll_id, t.poll_event_id));
        match (t.open, t.closes_at) {
            (true, Some(c)) => b.push_str(&format!("open, closes in {}", until(c - now))),
            (true, None) => b.push_str("open"),
            _ => b.push_str("closed"),
        }
        b.push_str(&format!("; {}): ", t.poll.choices()));
        let counts: Vec<String> = t.options.iter().map(|(id, _, n)| format!("{} {}", id, n)).collect();
        b.push_str(&counts.join(", "));
        b.push_str(&format!(" — {}", plural(t.voters, "voter")));
        if !t.leading.is_empty() {
            b.push_str(&format!("; leading: {}", t.leading.join(", ")));
        }
        match &t.my_vote {
            Some(mine) => b.push_str(&format!("; you voted {}", mine.join(", "))),
            None if t.open => b.push_str("; you have not voted"),
            None => {}
        }
        if !t.invalid.is_empty() {
            b.push_str(&format!("; {} ignored", plural(t.invalid.len(), "invalid vote")));
        }
        for v in &t.votes {
            b.push_str(&format!("\n    {}: {}", v.actor, v.option_ids.join(", ")));
        }
    }
    if more > 0 {
        b.push_str(&format!("\n({}; raise limit to see them)", plural(more, "more poll")));
    }
    b.push_str(room.partial_note());
    b
}
