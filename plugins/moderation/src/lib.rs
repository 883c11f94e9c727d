//! moderation is apconnect's first-party plugin for the registered type
//! pack adp:moderation/1.0 (Agent Discourse 1.0, Appendix A.4), written
//! with sdk-guest/rust. examples/plugins/moderation_go is the same plugin in
//! Go: the same description, rules, texts and results (the tests of plugins/
//! run against both).
//!
//! Validators, beyond what the pack's schemas say:
//!
//! - turn.update: turn_id strictly greater than every turn_id of the room's
//!   turn.update records; expires_at after the event's creation (now_ms);
//!   the speaker an active member who may write messages (not an observer,
//!   unless it is the room's creator);
//! - claim.update: the claim's state machine (below), handoff_to only with
//!   state "handoff", never the owner itself and an active member; the owner
//!   of a "claimed" update an active member; expires_at after the event's
//!   creation; the scope of a claim never changes; a speaker (allowed by a
//!   roles override to self-claim) updates only claims it owns.
//!
//! The claim state machine, over the latest claim.update of a claim_id:
//!
//! ```text
//! (none)     → claimed
//! claimed    → claimed (the owner renews; anyone once the lease lapsed),
//!              handoff, released, completed, cancelled (by the owner)
//! handoff    → claimed (by handoff_to, or the owner taking it back;
//!              anyone once the lease lapsed), handoff, released,
//!              completed, cancelled (by the owner)
//! released   → claimed (by anyone)
//! completed, cancelled: final (a new claim_id starts over)
//! ```
//!
//! Watch rule: a claim handed to this agent (state "handoff" with
//! handoff_to = this agent), or assigned to it by another agent (state
//! "claimed" with owner = this agent). Turns are the connector's own inbox
//! kind (turn_assigned), so they are not watched here.
//!
//! Tool (moderation_active_claims): the claims whose latest state is
//! "claimed" or "handoff", with their owners and leases.
//!
//! The latest update of a claim is the latest the room context holds; with
//! a partial context (older records not held) a claim the context does not
//! show may exist, so its first update is not required to be "claimed".

use std::collections::BTreeMap;

use apconnect_plugin::text::{clean, plural, quote, until};
use apconnect_plugin::{
    export_plugin, FieldError, InboxItem, Plugin, Priority, Record, Room, Tool, ToolRequest, ToolResult, ValidateRequest, Value,
    WatchRequest, ROOM_PROPERTIES,
};

const TYPE_TURN: &str = "turn.update";
const TYPE_CLAIM: &str = "claim.update";

const STATE_CLAIMED: &str = "claimed";
const STATE_HANDOFF: &str = "handoff";
const STATE_RELEASED: &str = "released";
const STATE_COMPLETED: &str = "completed";
const STATE_CANCELLED: &str = "cancelled";

/// A tool an inbox item suggests besides the plugin's own.
const TOOL_SUBMIT_EVENT: &str = "agent_protocols_room_submit_event";

fn plugin() -> Plugin {
    Plugin::new("moderation", "1.0.0")
        .description(
            "Checks adp:moderation/1.0 turns (strictly increasing turn_id) and claims (state transitions, \
             handoffs, leases), wakes the agent for claims handed to it, and lists active claims.",
        )
        .validator(TYPE_TURN, validate_turn)
        .validator(TYPE_CLAIM, validate_claim)
        .watcher(TYPE_CLAIM, watch_claim)
        .tool(active_claims_tool())
}

export_plugin!(plugin);

/// The state of a claim after one claim.update.
struct Claim<'a> {
    rec: Option<&'a Record>,
    id: String,
    owner: String,
    state: String,
    /// "task" when absent
    scope: String,
    handoff_to: String,
    expires_at: i64,
    expires: bool,
    intent: String,
    /// claim.update records of this claim in the context
    updates: usize,
}

fn read_claim<'a>(rec: Option<&'a Record>, p: &Value) -> Claim<'a> {
    let s = |name: &str| p[name].as_str().unwrap_or("").to_string();
    Claim {
        rec,
        id: s("claim_id"),
        owner: s("owner"),
        state: s("state"),
        scope: p["scope"].as_str().unwrap_or("task").to_string(),
        handoff_to: s("handoff_to"),
        expires_at: p["expires_at"].as_i64().unwrap_or(0),
        expires: p["expires_at"].as_i64().is_some(),
        intent: s("intent"),
        updates: 0,
    }
}

impl<'a> Claim<'a> {
    /// Whether the claim is held (claimed or being handed off).
    fn active(&self) -> bool {
        self.state == STATE_CLAIMED || self.state == STATE_HANDOFF
    }

    /// Whether an active claim's lease ended at or before now.
    fn lapsed(&self, now: i64) -> bool {
        self.active() && self.expires && self.expires_at <= now
    }

    fn rec(&self) -> &'a Record {
        self.rec.expect("a claim of the room context has its record")
    }

    /// The claim's lease for messages.
    fn until(&self) -> String {
        if !self.expires {
            return String::new();
        }
        format!(" until {}", self.expires_at)
    }
}

/// The latest state of every claim in the room context, by claim_id, and
/// the claims in the order of their latest updates.
fn claims(room: &Room) -> (BTreeMap<String, Claim<'_>>, Vec<String>) {
    let mut latest: BTreeMap<String, Claim> = BTreeMap::new();
    for rec in &room.records {
        if rec.event_type != TYPE_CLAIM || rec.redacted {
            continue;
        }
        let mut c = read_claim(Some(rec), &rec.payload);
        c.updates = latest.get(&c.id).map_or(0, |prev| prev.updates) + 1;
        latest.insert(c.id.clone(), c);
    }
    let mut order = Vec::new();
    for rec in &room.records {
        if rec.event_type != TYPE_CLAIM || rec.redacted {
            continue;
        }
        let id = rec.payload["claim_id"].as_str().unwrap_or("");
        if latest.get(id).map_or(false, |c| std::ptr::eq(c.rec(), rec)) {
            order.push(id.to_string());
        }
    }
    (latest, order)
}

/// Whether a redacted claim.update follows seq.
fn redacted_claim_after(room: &Room, seq: i64) -> bool {
    room.records.iter().any(|r| r.event_type == TYPE_CLAIM && r.redacted && r.seq > seq)
}

/// The role of an active member, "" when it is not one.
fn member<'a>(room: &'a Room, id: &str) -> &'a str {
    room.member(id).map(|m| m.role.as_str()).unwrap_or("")
}

/// Checks a turn.update proposal.
fn validate_turn(req: &ValidateRequest) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let p = &req.payload;
    if let Some(id) = p["turn_id"].as_i64() {
        let mut top: Option<(&Record, i64)> = None;
        for rec in &req.room.records {
            if rec.event_type != TYPE_TURN || rec.redacted {
                continue;
            }
            if let Some(n) = rec.payload["turn_id"].as_i64() {
                if top.map_or(true, |(_, best)| n > best) {
                    top = Some((rec, n));
                }
            }
        }
        if let Some((rec, best)) = top {
            if id <= best {
                errs.push(FieldError::new(
                    "/payload/turn_id",
                    format!(
                        "turn_id {} is not greater than {}, the turn of event {}; turn ids strictly increase in a room",
                        id, best, rec.event_id
                    ),
                ));
            }
        }
    }
    if let Some(exp) = p["expires_at"].as_i64() {
        if exp <= req.now_ms {
            errs.push(lease_error(exp, req.now_ms));
        }
    }
    if let Some(speaker) = p["speaker"].as_str() {
        if !req.room.members.is_empty() && speaker != req.room.creator {
            match member(&req.room, speaker) {
                "" => errs.push(FieldError::new("/payload/speaker", format!("{} is not an active member of the room", speaker))),
                "observer" => errs.push(FieldError::new(
                    "/payload/speaker",
                    format!("{} is an observer and cannot write messages; change its role first", speaker),
                )),
                _ => {}
            }
        }
    }
    errs
}

fn lease_error(exp: i64, now: i64) -> FieldError {
    FieldError::new("/payload/expires_at", format!("expires_at {} is not after the event's creation (now {})", exp, now))
}

/// Checks a claim.update proposal: its own members, then the transition
/// from the claim's latest state.
fn validate_claim(req: &ValidateRequest) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let next = read_claim(None, &req.payload);
    let room = &req.room;
    let members = !room.members.is_empty();
    let id = quote(&next.id, 64);
    let mut add = |path: &str, msg: String| errs.push(FieldError::new(path, msg));

    let has_to = req.payload.get("handoff_to").is_some();
    if has_to && next.state != STATE_HANDOFF {
        add("/payload/handoff_to", r#"handoff_to is only used with state "handoff""#.to_string());
    } else if next.state == STATE_HANDOFF && next.handoff_to == next.owner {
        add("/payload/handoff_to", "a claim cannot be handed to its own owner".to_string());
    } else if next.state == STATE_HANDOFF && members && member(room, &next.handoff_to).is_empty() {
        add("/payload/handoff_to", format!("{} is not an active member of the room", next.handoff_to));
    }
    if next.state == STATE_CLAIMED && members && member(room, &next.owner).is_empty() {
        add("/payload/owner", format!("{} is not an active member of the room", next.owner));
    }
    if next.expires && next.expires_at <= req.now_ms {
        let e = lease_error(next.expires_at, req.now_ms);
        add(&e.path, e.message);
    }
    if !req.actor.is_empty() && req.actor != room.creator && member(room, &req.actor) == "speaker" && next.owner != req.actor {
        add("/payload/owner", format!("a speaker can only update its own claims: owner must be {}", req.actor));
    }

    let (latest, _) = claims(room);
    let cur = match latest.get(&next.id) {
        Some(cur) if redacted_claim_after(room, cur.rec().seq) => return errs, // a redacted update may be this claim's latest
        Some(cur) => cur,
        None if room.records_truncated || redacted_claim_after(room, 0) => return errs, // the claim may exist in records the context lacks
        None => {
            if next.state != STATE_CLAIMED {
                add("/payload/state", format!(r#"claim {} does not exist yet; its first update must be "claimed""#, id));
            }
            return errs;
        }
    };
    if cur.scope != next.scope {
        add("/payload/scope", format!("claim {} is a {} claim; its scope cannot change", id, cur.scope));
    }
    let at = format!(" (event {})", cur.rec().event_id);
    let lapsed = cur.lapsed(req.now_ms);
    match cur.state.as_str() {
        STATE_COMPLETED | STATE_CANCELLED => {
            add("/payload/state", format!("claim {} is {}{}; it cannot change (use a new claim_id)", id, cur.state, at));
        }
        STATE_RELEASED => {
            if next.state != STATE_CLAIMED {
                add("/payload/state", format!(r#"claim {} was released{}; only "claimed" can follow"#, id, at));
            }
        }
        STATE_CLAIMED => {
            if next.state == STATE_CLAIMED && next.owner != cur.owner && !lapsed {
                add(
                    "/payload/owner",
                    format!("claim {} is held by {}{}{}; it must be released or handed off first", id, cur.owner, at, cur.until()),
                );
            } else if next.state != STATE_CLAIMED && next.owner != cur.owner {
                add("/payload/owner", format!("claim {} is held by {}{}, not by {}", id, cur.owner, at, next.owner));
            }
        }
        STATE_HANDOFF => {
            if next.state == STATE_CLAIMED && next.owner != cur.handoff_to && next.owner != cur.owner && !lapsed {
                add(
                    "/payload/owner",
                    format!(
                        "claim {} is being handed to {}{}; only they can take it (or {} take it back)",
                        id, cur.handoff_to, at, cur.owner
                    ),
                );
            } else if next.state != STATE_CLAIMED && next.owner != cur.owner {
                add("/payload/owner", format!("claim {} is held by {}{}, not by {}", id, cur.owner, at, next.owner));
            }
        }
        _ => {}
    }
    errs
}

/// Wakes the agent for a claim another agent hands or assigns to it.
fn watch_claim(rec: &Record, req: &WatchRequest) -> Option<InboxItem> {
    let me = req.room.self_id();
    if me.is_empty() || rec.actor == me {
        return None;
    }
    // The common case, a claim of someone else, costs two member reads.
    let who = match rec.payload["state"].as_str().unwrap_or("") {
        STATE_HANDOFF => "handoff_to",
        STATE_CLAIMED => "owner",
        _ => return None,
    };
    if rec.payload[who].as_str().unwrap_or("") != me {
        return None;
    }
    let c = read_claim(Some(rec), &rec.payload);
    if c.lapsed(req.now_ms) {
        return None;
    }
    let mut what = clean(&c.id, 60);
    if !c.intent.is_empty() {
        what.push_str(": ");
        what.push_str(&clean(&c.intent, 100));
    }
    let lease = if c.expires { format!(" (lease ends in {})", until(c.expires_at - req.now_ms)) } else { String::new() };
    let suggested = vec!["active_claims".to_string(), TOOL_SUBMIT_EVENT.to_string()];
    if c.state == STATE_HANDOFF && c.handoff_to == me {
        let mut item = InboxItem::new(format!("Claim handed to you: {}{}, from {}", what, lease, c.owner));
        item.priority = Priority::High;
        item.requires_response = true;
        item.reason = "claim handed to you".to_string();
        item.suggested_tools = suggested;
        return Some(item);
    }
    if c.state == STATE_CLAIMED && c.owner == me {
        let mut item = InboxItem::new(format!("Claim assigned to you: {}{}", what, lease));
        item.requires_response = true;
        item.reason = "claim assigned to you".to_string();
        item.suggested_tools = suggested;
        return Some(item);
    }
    None
}

// ---------------------------------------------------------------------------
// The active_claims tool.

fn active_claims_tool() -> Tool {
    Tool::new(
        "active_claims",
        "Lists the claims (adp:moderation/1.0) of a room whose latest state is \"claimed\" or \"handoff\": who owns \
         each task or resource, who it is being handed to and when the lease ends. Claims whose lease has lapsed are \
         counted, and listed with include_lapsed.",
        active_claims,
    )
    .title("Active claims")
    .input_schema(&format!(
        r#"{{
	"type": "object",
	"required": ["room_id"],
	"properties": {{
	{},
	"owner": {{"type": "string", "pattern": "^did:agent:[A-Za-z0-9_-]{{43}}$", "description": "Only claims this agent owns or is being handed."}},
	"include_lapsed": {{"type": "boolean", "default": false, "description": "Also list claims whose lease has ended."}}
	}},
	"additionalProperties": false
}}"#,
        ROOM_PROPERTIES
    ))
    .output_schema(
        r#"{
	"type": "object",
	"required": ["room_id", "complete", "claims", "lapsed"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every record of the room: older claims may be missing."},
		"claims": {"type": "array", "items": {
			"type": "object",
			"required": ["claim_id", "state", "owner", "scope", "lapsed", "event_id", "seq", "updated_at", "updates"],
			"properties": {
				"claim_id": {"type": "string"},
				"state": {"enum": ["claimed", "handoff"]},
				"owner": {"type": "string"},
				"scope": {"type": "string"},
				"handoff_to": {"type": "string"},
				"expires_at": {"type": "integer"},
				"lapsed": {"type": "boolean"},
				"intent": {"type": "string"},
				"event_id": {"type": "string", "description": "The claim's latest update."},
				"seq": {"type": "integer"},
				"updated_at": {"type": "integer"},
				"updates": {"type": "integer"}
			},
			"additionalProperties": false
		}},
		"lapsed": {"type": "integer", "description": "Active claims whose lease has ended."}
	},
	"additionalProperties": false
}"#,
    )
}

/// One listed claim, its texts cleaned.
struct ClaimOut {
    claim_id: String,
    state: String,
    owner: String,
    scope: String,
    handoff_to: String,
    expires_at: Option<i64>,
    lapsed: bool,
    intent: String,
    event_id: String,
    seq: i64,
    updated_at: i64,
    updates: usize,
}

impl ClaimOut {
    fn to_value(&self) -> Value {
        let mut v = Value::object()
            .set("claim_id", self.claim_id.as_str())
            .set("state", self.state.as_str())
            .set("owner", self.owner.as_str())
            .set("scope", self.scope.as_str());
        if !self.handoff_to.is_empty() {
            v.insert("handoff_to", self.handoff_to.as_str());
        }
        if let Some(e) = self.expires_at {
            v.insert("expires_at", e);
        }
        v.insert("lapsed", self.lapsed);
        if !self.intent.is_empty() {
            v.insert("intent", self.intent.as_str());
        }
        v.set("event_id", self.event_id.as_str()).set("seq", self.seq).set("updated_at", self.updated_at).set("updates", self.updates)
    }
}

fn active_claims(req: &ToolRequest) -> Result<ToolResult, String> {
    let room = req.named_room()?;
    let owner = req.arguments["owner"].as_str().unwrap_or("");
    let with_lapsed = req.arguments["include_lapsed"].as_bool().unwrap_or(false);
    let (latest, order) = claims(room);
    let mut out = Vec::new();
    let mut lapsed_count = 0usize;
    for id in order.iter().rev() {
        // most recently updated first
        let c = &latest[id];
        if !c.active() || !owner.is_empty() && c.owner != owner && c.handoff_to != owner {
            continue;
        }
        let lapsed = c.lapsed(req.now_ms);
        if lapsed {
            lapsed_count += 1;
            if !with_lapsed {
                continue;
            }
        }
        let rec = c.rec();
        out.push(ClaimOut {
            claim_id: clean(&c.id, 120),
            state: c.state.clone(),
            owner: c.owner.clone(),
            scope: clean(&c.scope, 20),
            handoff_to: c.handoff_to.clone(),
            expires_at: if c.expires { Some(c.expires_at) } else { None },
            lapsed,
            intent: clean(&c.intent, 300),
            event_id: rec.event_id.clone(),
            seq: rec.seq,
            updated_at: rec.accepted_at,
            updates: c.updates,
        });
    }
    let me = req.self_agent.as_ref().map(|s| s.agent_id.as_str()).unwrap_or("");
    let text = claims_text(&room.room_id, &out, lapsed_count, room, me, req.now_ms, with_lapsed);
    let structured = Value::object()
        .set("room_id", room.room_id.as_str())
        .set("complete", !room.records_truncated)
        .set("claims", Value::Array(out.iter().map(ClaimOut::to_value).collect()))
        .set("lapsed", lapsed_count);
    Ok(ToolResult::text(text).with_structured(structured))
}

fn claims_text(room_id: &str, claims: &[ClaimOut], lapsed: usize, room: &Room, me: &str, now: i64, with_lapsed: bool) -> String {
    let mut b = if claims.is_empty() {
        format!("No active claims in room {}.", room_id)
    } else {
        format!("Active claims in room {}, most recently updated first:", room_id)
    };
    let who = |id: &str| if id == me { "you".to_string() } else { id.to_string() };
    for c in claims {
        b.push_str(&format!("\n- \"{}\" ({}) ", c.claim_id, c.scope));
        if c.state == STATE_HANDOFF {
            b.push_str(&format!("held by {}, being handed to {}", who(&c.owner), who(&c.handoff_to)));
        } else {
            b.push_str(&format!("claimed by {}", who(&c.owner)));
        }
        if c.lapsed {
            b.push_str("; lease lapsed");
        } else if let Some(e) = c.expires_at {
            b.push_str(&format!("; lease ends in {}", until(e - now)));
        }
        if !c.intent.is_empty() {
            b.push_str(&format!(": {}", c.intent));
        }
        b.push_str(&format!(" (event {})", c.event_id));
    }
    if lapsed > 0 && !with_lapsed {
        b.push_str(&format!("\n({} with a lapsed lease not shown; include_lapsed lists them)", plural(lapsed, "claim")));
    }
    b.push_str(room.partial_note());
    b
}
