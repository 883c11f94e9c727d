//! realtime is apconnect's first-party plugin for the registered type pack
//! adp:realtime/1.0 (Agent Discourse 1.0, Appendix A.5): WebRTC signaling
//! over signed room events. It is written with sdk-guest/rust;
//! examples/plugins/realtime_go is the same plugin in Go: the same
//! description, rules, texts and results (the tests of plugins/ run against
//! both).
//!
//! Validators, beyond what the pack's schemas say:
//!
//! - session.offer: session_id unique in the room; every "to" target an
//!   active member other than the sender; expires_at in the future; transfer
//!   ids unique, and "file" among the media when transfers are announced;
//!   the SDP is a session description ("v=0") that carries its ICE
//!   candidates (trickled candidates would each become a record);
//! - session.answer: offer_event_id names a session.offer record of the room
//!   with the same session_id, that is neither the answerer's own, addressed
//!   to others, expired nor closed by its sender; accepted_media and
//!   transfers are among the offer's; the SDP as for offers;
//! - session.close: the session exists, and the sender takes part in it
//!   (offered it, answered it or is one of its targets; anyone may leave an
//!   offer made to the whole room).
//!
//! Watch rule: an offer addressed to this agent (urgent), or an open offer
//! to the whole room from another agent, while it has not expired.
//!
//! Tool (realtime_sessions): the sessions of a room with their state,
//! participants, media and announced transfers. SDP bodies are never shown:
//! they reveal network addresses.

use std::collections::BTreeMap;

use apconnect_plugin::text::{clean, plural, quote, until};
use apconnect_plugin::{
    export_plugin, FieldError, InboxItem, Plugin, Priority, Record, Room, Tool, ToolRequest, ToolResult, ValidateRequest, Value,
    WatchRequest, ROOM_PROPERTIES,
};

const TYPE_OFFER: &str = "session.offer";
const TYPE_ANSWER: &str = "session.answer";
const TYPE_CLOSE: &str = "session.close";

/// A tool an inbox item suggests besides the plugin's own.
const TOOL_SUBMIT_EVENT: &str = "agent_protocols_room_submit_event";

fn plugin() -> Plugin {
    Plugin::new("realtime", "1.0.0")
        .description(
            "Checks adp:realtime/1.0 session offers, answers and closes against the room's sessions, wakes the \
             agent for sessions offered to it, and lists sessions (without their SDP).",
        )
        .validator(TYPE_OFFER, validate_offer)
        .validator(TYPE_ANSWER, validate_answer)
        .validator(TYPE_CLOSE, validate_close)
        .watcher(TYPE_OFFER, watch_offer)
        .tool(sessions_tool())
}

export_plugin!(plugin);

/// A file transfer an offer announces.
struct Transfer {
    id: String,
    file_name: String,
    size: Option<i64>,
    mime_type: String,
}

/// A session.offer payload as the rules read it.
struct Offer<'a> {
    rec: Option<&'a Record>,
    session_id: String,
    media: Vec<String>,
    to: Vec<String>,
    topology: String,
    transfers: Vec<Transfer>,
    expires_at: i64,
    expires: bool,
}

fn read_offer<'a>(rec: Option<&'a Record>, p: &Value) -> Offer<'a> {
    let transfers = p["transfers"]
        .as_array()
        .unwrap_or(&[])
        .iter()
        .map(|t| Transfer {
            id: t["transfer_id"].as_str().unwrap_or("").to_string(),
            file_name: t["file_name"].as_str().unwrap_or("").to_string(),
            size: t["size_bytes"].as_i64(),
            mime_type: t["mime_type"].as_str().unwrap_or("").to_string(),
        })
        .collect();
    Offer {
        rec,
        session_id: p["session_id"].as_str().unwrap_or("").to_string(),
        media: p["media"].as_strings().unwrap_or_default(),
        to: p["to"].as_strings().unwrap_or_default(),
        topology: p["topology"].as_str().unwrap_or("").to_string(),
        transfers,
        expires_at: p["expires_at"].as_i64().unwrap_or(0),
        expires: p["expires_at"].as_i64().is_some(),
    }
}

impl<'a> Offer<'a> {
    fn expired(&self, now: i64) -> bool {
        self.expires && self.expires_at <= now
    }

    fn addressed_to(&self, id: &str) -> bool {
        self.to.iter().any(|t| t == id)
    }

    fn rec(&self) -> &'a Record {
        self.rec.expect("an offer of the room context has its record")
    }
}

/// One session of the room: its offer, answers and closes.
struct Session<'a> {
    offer: Offer<'a>,
    answers: Vec<&'a Record>,
    closes: Vec<&'a Record>,
}

impl<'a> Session<'a> {
    /// The close the agent sent.
    fn closed_by(&self, id: &str) -> Option<&'a Record> {
        self.closes.iter().copied().find(|c| c.actor == id)
    }

    fn answered_by(&self, id: &str) -> bool {
        self.answers.iter().any(|a| a.actor == id)
    }

    /// "closed" once the offerer closed it, "declined" when every target
    /// closed it unanswered, "answered" with an answer, "expired" when the
    /// offer expired unanswered, else "offered".
    fn state(&self, now: i64) -> &'static str {
        if self.closed_by(&self.offer.rec().actor).is_some() {
            "closed"
        } else if self.answers.is_empty() && !self.offer.to.is_empty() && self.offer.to.iter().all(|t| self.closed_by(t).is_some()) {
            "declined"
        } else if !self.answers.is_empty() {
            "answered"
        } else if self.offer.expired(now) {
            "expired"
        } else {
            "offered"
        }
    }
}

/// The sessions of the room context in offer order, and their indices by
/// session_id. The first offer of a session_id makes the session; answers
/// count when they name its offer and session_id, closes when they follow
/// its offer.
fn sessions(room: &Room) -> (BTreeMap<String, usize>, Vec<Session<'_>>) {
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_offer: BTreeMap<&str, usize> = BTreeMap::new();
    let mut order: Vec<Session> = Vec::new();
    for rec in &room.records {
        if rec.redacted {
            continue;
        }
        let id = rec.payload["session_id"].as_str().unwrap_or("");
        match rec.event_type.as_str() {
            TYPE_OFFER => {
                if !by_id.contains_key(id) {
                    by_id.insert(id.to_string(), order.len());
                    by_offer.insert(&rec.event_id, order.len());
                    order.push(Session { offer: read_offer(Some(rec), &rec.payload), answers: Vec::new(), closes: Vec::new() });
                }
            }
            TYPE_ANSWER => {
                let oid = rec.payload["offer_event_id"].as_str().unwrap_or("");
                if let Some(&i) = by_offer.get(oid) {
                    if order[i].offer.session_id == id {
                        order[i].answers.push(rec);
                    }
                }
            }
            TYPE_CLOSE => {
                if let Some(&i) = by_id.get(id) {
                    order[i].closes.push(rec);
                }
            }
            _ => {}
        }
    }
    (by_id, order)
}

/// Refuses a description that is not an SDP session description or that
/// carries no ICE candidates.
fn check_sdp(p: &Value, errs: &mut Vec<FieldError>) {
    let sdp = match p["description"]["sdp"].as_str() {
        Some(s) => s,
        None => return,
    };
    if !sdp.starts_with("v=0") {
        errs.push(FieldError::new("/payload/description/sdp", r#"not an SDP session description: it must start with "v=0""#));
    } else if !sdp.contains("a=candidate:") {
        errs.push(FieldError::new(
            "/payload/description/sdp",
            "the SDP carries no ICE candidates (a=candidate lines): gather them before sending, trickled candidates are not allowed",
        ));
    }
}

/// Checks a session.offer proposal.
fn validate_offer(req: &ValidateRequest) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let o = read_offer(None, &req.payload);
    let (by_id, order) = sessions(&req.room);
    if let Some(&i) = by_id.get(&o.session_id) {
        errs.push(FieldError::new(
            "/payload/session_id",
            format!(
                "session_id {} is already used by session.offer event {}; it must be unique in the room",
                quote(&o.session_id, 64),
                order[i].offer.rec().event_id
            ),
        ));
    }
    for (i, t) in o.to.iter().enumerate() {
        let path = format!("/payload/to/{}", i);
        if *t == req.actor {
            errs.push(FieldError::new(path, "an offer cannot be addressed to its sender"));
        } else if !req.room.members.is_empty() && req.room.member(t).is_none() {
            errs.push(FieldError::new(path, format!("{} is not an active member of the room", t)));
        }
    }
    if o.expires && o.expires_at <= req.now_ms {
        errs.push(FieldError::new(
            "/payload/expires_at",
            format!("expires_at {} is not in the future (now {})", o.expires_at, req.now_ms),
        ));
    }
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in o.transfers.iter().enumerate() {
        if let Some(j) = first.get(t.id.as_str()) {
            errs.push(FieldError::new(
                format!("/payload/transfers/{}/transfer_id", i),
                format!("transfer_id {} is already used by transfer {}", quote(&t.id, 64), j),
            ));
            continue;
        }
        first.insert(&t.id, i);
    }
    if !o.transfers.is_empty() && !o.media.iter().any(|m| m == "file") {
        errs.push(FieldError::new("/payload/media", r#"the offer announces transfers, so its media must include "file""#));
    }
    check_sdp(&req.payload, &mut errs);
    errs
}

/// Checks a session.answer proposal against its offer.
fn validate_answer(req: &ValidateRequest) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let oid = req.payload["offer_event_id"].as_str().unwrap_or("");
    let at = "/payload/offer_event_id";
    let rec = match req.room.record(oid) {
        None if req.room.records_truncated => {
            return vec![FieldError::new(
                at,
                format!("offer {} is not among the records of this room that apconnect holds, so the answer cannot be checked", oid),
            )]
        }
        None => return vec![FieldError::new(at, format!("this room has no event {}", oid))],
        Some(r) if r.event_type != TYPE_OFFER => {
            return vec![FieldError::new(at, format!("event {} is a {}, not a session.offer", oid, r.event_type))]
        }
        Some(r) if r.redacted => return vec![FieldError::new(at, format!("offer {} was redacted", oid))],
        Some(r) => r,
    };
    let o = read_offer(Some(rec), &rec.payload);
    let id = req.payload["session_id"].as_str().unwrap_or("");
    if id != o.session_id {
        errs.push(FieldError::new(
            "/payload/session_id",
            format!("session_id {} does not match the offer's {}", quote(id, 64), quote(&o.session_id, 64)),
        ));
    }
    let (by_id, order) = sessions(&req.room);
    let s = by_id.get(&o.session_id).map(|&i| &order[i]);
    if rec.actor == req.actor {
        errs.push(FieldError::new(at, "you cannot answer your own offer"));
    } else if !o.to.is_empty() && !o.addressed_to(&req.actor) {
        errs.push(FieldError::new(at, format!("the offer is addressed to {}, not to you", o.to.join(", "))));
    } else if let Some(s) = s.filter(|s| !std::ptr::eq(s.offer.rec(), rec)) {
        errs.push(FieldError::new(at, format!("session {} belongs to offer {}", quote(&o.session_id, 64), s.offer.rec().event_id)));
    } else if let Some(close) = s.and_then(|s| s.closed_by(&rec.actor)) {
        errs.push(FieldError::new(
            at,
            format!("session {} was closed by its sender (event {})", quote(&o.session_id, 64), close.event_id),
        ));
    } else if o.expired(req.now_ms) {
        errs.push(FieldError::new(at, format!("the offer expired at {} (now {})", o.expires_at, req.now_ms)));
    }
    for (i, v) in req.payload["accepted_media"].as_array().unwrap_or(&[]).iter().enumerate() {
        let m = v.as_str().unwrap_or("");
        if !o.media.iter().any(|x| x == m) {
            errs.push(FieldError::new(
                format!("/payload/accepted_media/{}", i),
                format!("{} is not among the offered media ({})", quote(m, 20), o.media.join(", ")),
            ));
        }
    }
    for (i, v) in req.payload["transfers"].as_array().unwrap_or(&[]).iter().enumerate() {
        let tid = v["transfer_id"].as_str().unwrap_or("");
        if !o.transfers.iter().any(|t| t.id == tid) {
            errs.push(FieldError::new(
                format!("/payload/transfers/{}/transfer_id", i),
                format!("the offer announces no transfer {}", quote(tid, 64)),
            ));
        }
    }
    check_sdp(&req.payload, &mut errs);
    errs
}

/// Checks a session.close proposal.
fn validate_close(req: &ValidateRequest) -> Vec<FieldError> {
    let id = req.payload["session_id"].as_str().unwrap_or("");
    let (by_id, order) = sessions(&req.room);
    let at = |msg: String| vec![FieldError::new("/payload/session_id", msg)];
    let s = match by_id.get(id) {
        None if req.room.records_truncated => return vec![], // the offer may be older than the records the context holds
        None => return at(format!("this room has no session {}", quote(id, 64))),
        Some(&i) => &order[i],
    };
    if let Some(close) = s.closed_by(&req.actor) {
        return at(format!("you already closed session {} (event {})", quote(id, 64), close.event_id));
    }
    let offerer = &s.offer.rec().actor;
    if req.actor != *offerer && !s.offer.to.is_empty() && !s.offer.addressed_to(&req.actor) && !s.answered_by(&req.actor) {
        return at(format!(
            "you take no part in session {}: it was offered by {} to {}",
            quote(id, 64),
            offerer,
            s.offer.to.join(", ")
        ));
    }
    vec![]
}

/// Wakes the agent for a session offered to it, or to the whole room by
/// another agent when the agent may answer (not an observer).
fn watch_offer(rec: &Record, req: &WatchRequest) -> Option<InboxItem> {
    let me = req.room.self_id();
    if me.is_empty() || rec.actor == me {
        return None;
    }
    // The common case, an offer to others, costs one member read.
    let to = rec.payload["to"].as_strings().unwrap_or_default();
    if !to.is_empty() && !to.iter().any(|t| t == me) {
        return None;
    }
    let o = read_offer(Some(rec), &rec.payload);
    if o.expired(req.now_ms) {
        return None;
    }
    let mut what = format!("{} session {}", o.media.join("+"), quote(&o.session_id, 60));
    if !o.transfers.is_empty() {
        what.push_str(&format!(" with {}", plural(o.transfers.len(), "file transfer")));
    }
    if o.expires {
        what.push_str(&format!(" (expires in {})", until(o.expires_at - req.now_ms)));
    }
    let mut item = InboxItem::new(String::new());
    item.suggested_tools = vec!["sessions".to_string(), TOOL_SUBMIT_EVENT.to_string()];
    if o.addressed_to(me) {
        item.summary = format!("Session offered to you: {} from {}", what, rec.actor);
        item.priority = Priority::High;
        item.requires_response = true;
        item.reason = "session offered to you".to_string();
    } else if o.to.is_empty() && role(&req.room) != "observer" {
        item.summary = format!("Session offered to the room: {} from {}", what, rec.actor);
        item.reason = "session offered to the room".to_string();
    } else {
        return None;
    }
    Some(item)
}

/// The active agent's role in the room, "" when unknown.
fn role(room: &Room) -> &str {
    match &room.self_agent {
        Some(s) if !s.role.is_empty() => &s.role,
        _ => room.member(room.self_id()).map(|m| m.role.as_str()).unwrap_or(""),
    }
}

// ---------------------------------------------------------------------------
// The sessions tool.

fn sessions_tool() -> Tool {
    Tool::new(
        "sessions",
        "Lists the WebRTC sessions (adp:realtime/1.0) of a room, newest first: who offered each to whom, its media, \
         announced file transfers, answers, closes and state (offered, answered, declined, expired, closed). \
         Closed, declined and expired sessions are listed with include_ended. SDP bodies are not shown.",
        list_sessions,
    )
    .title("Realtime sessions")
    .input_schema(&format!(
        r#"{{
	"type": "object",
	"required": ["room_id"],
	"properties": {{
	{},
	"session_id": {{"type": "string", "minLength": 1, "description": "Only this session."}},
	"include_ended": {{"type": "boolean", "default": false, "description": "Also list closed, declined and expired sessions."}}
	}},
	"additionalProperties": false
}}"#,
        ROOM_PROPERTIES
    ))
    .output_schema(
        r#"{
	"type": "object",
	"required": ["room_id", "complete", "sessions", "ended"],
	"properties": {
		"room_id": {"type": "string"},
		"complete": {"type": "boolean", "description": "False when apconnect does not hold every record of the room: older sessions may be missing."},
		"sessions": {"type": "array", "items": {
			"type": "object",
			"required": ["session_id", "state", "offer_event_id", "offerer", "media", "seq", "answers", "closed_by"],
			"properties": {
				"session_id": {"type": "string"},
				"state": {"enum": ["offered", "answered", "declined", "expired", "closed"]},
				"offer_event_id": {"type": "string"},
				"offerer": {"type": "string"},
				"to": {"type": "array", "items": {"type": "string"}},
				"media": {"type": "array", "items": {"type": "string"}},
				"topology": {"type": "string"},
				"transfers": {"type": "array", "items": {
					"type": "object",
					"required": ["transfer_id"],
					"properties": {"transfer_id": {"type": "string"}, "file_name": {"type": "string"}, "size_bytes": {"type": "integer"}, "mime_type": {"type": "string"}},
					"additionalProperties": false
				}},
				"expires_at": {"type": "integer"},
				"seq": {"type": "integer"},
				"answers": {"type": "array", "items": {
					"type": "object",
					"required": ["actor", "event_id"],
					"properties": {"actor": {"type": "string"}, "event_id": {"type": "string"}, "accepted_media": {"type": "array", "items": {"type": "string"}}},
					"additionalProperties": false
				}},
				"closed_by": {"type": "array", "items": {"type": "string"}}
			},
			"additionalProperties": false
		}},
		"ended": {"type": "integer", "description": "Closed, declined or expired sessions not listed."}
	},
	"additionalProperties": false
}"#,
    )
}

/// One listed session, its texts cleaned.
struct SessionOut {
    session_id: String,
    state: &'static str,
    offer_event_id: String,
    offerer: String,
    to: Vec<String>,
    media: Vec<String>,
    topology: String,
    transfers: Vec<Transfer>,
    expires_at: Option<i64>,
    seq: i64,
    /// (actor, event ID, accepted media)
    answers: Vec<(String, String, Vec<String>)>,
    closed_by: Vec<String>,
}

impl SessionOut {
    fn to_value(&self) -> Value {
        let mut v = Value::object()
            .set("session_id", self.session_id.as_str())
            .set("state", self.state)
            .set("offer_event_id", self.offer_event_id.as_str())
            .set("offerer", self.offerer.as_str());
        if !self.to.is_empty() {
            v.insert("to", self.to.clone());
        }
        v.insert("media", self.media.clone());
        if !self.topology.is_empty() {
            v.insert("topology", self.topology.as_str());
        }
        if !self.transfers.is_empty() {
            let transfers = self
                .transfers
                .iter()
                .map(|t| {
                    let mut tv = Value::object().set("transfer_id", t.id.as_str());
                    if !t.file_name.is_empty() {
                        tv.insert("file_name", t.file_name.as_str());
                    }
                    if let Some(n) = t.size {
                        tv.insert("size_bytes", n);
                    }
                    if !t.mime_type.is_empty() {
                        tv.insert("mime_type", t.mime_type.as_str());
                    }
                    tv
                })
                .collect();
            v.insert("transfers", Value::Array(transfers));
        }
        if let Some(e) = self.expires_at {
            v.insert("expires_at", e);
        }
        v.insert("seq", self.seq);
        let answers = self
            .answers
            .iter()
            .map(|(actor, event_id, media)| {
                let mut a = Value::object().set("actor", actor.as_str()).set("event_id", event_id.as_str());
                if !media.is_empty() {
                    a.insert("accepted_media", media.clone());
                }
                a
            })
            .collect();
        v.insert("answers", Value::Array(answers));
        v.set("closed_by", self.closed_by.clone())
    }
}

fn list_sessions(req: &ToolRequest) -> Result<ToolResult, String> {
    let room = req.named_room()?;
    let only = req.arguments["session_id"].as_str().unwrap_or("");
    let with_ended = req.arguments["include_ended"].as_bool().unwrap_or(false);
    let (_, order) = sessions(room);
    let mut out = Vec::new();
    let mut ended = 0usize;
    for s in order.iter().rev() {
        let o = &s.offer;
        if !only.is_empty() && o.session_id != only {
            continue;
        }
        let state = s.state(req.now_ms);
        if matches!(state, "closed" | "declined" | "expired") && !with_ended && only.is_empty() {
            ended += 1;
            continue;
        }
        let rec = o.rec();
        out.push(SessionOut {
            session_id: clean(&o.session_id, 120),
            state,
            offer_event_id: rec.event_id.clone(),
            offerer: rec.actor.clone(),
            to: o.to.clone(),
            media: o.media.clone(),
            topology: o.topology.clone(),
            transfers: o
                .transfers
                .iter()
                .map(|t| Transfer {
                    id: clean(&t.id, 120),
                    file_name: clean(&t.file_name, 200),
                    size: t.size,
                    mime_type: clean(&t.mime_type, 100),
                })
                .collect(),
            expires_at: if o.expires { Some(o.expires_at) } else { None },
            seq: rec.seq,
            answers: s
                .answers
                .iter()
                .map(|a| (a.actor.clone(), a.event_id.clone(), a.payload["accepted_media"].as_strings().unwrap_or_default()))
                .collect(),
            closed_by: s.closes.iter().map(|c| c.actor.clone()).collect(),
        });
    }
    if !only.is_empty() && out.is_empty() {
        return Err(format!("no session {} among the records of room {} that apconnect holds", quote(only, 64), room.room_id));
    }
    let me = req.self_agent.as_ref().map(|s| s.agent_id.as_str()).unwrap_or("");
    let text = sessions_text(&room.room_id, &out, ended, room, me, with_ended || !only.is_empty());
    let structured = Value::object()
        .set("room_id", room.room_id.as_str())
        .set("complete", !room.records_truncated)
        .set("sessions", Value::Array(out.iter().map(SessionOut::to_value).collect()))
        .set("ended", ended);
    Ok(ToolResult::text(text).with_structured(structured))
}

fn sessions_text(room_id: &str, sessions: &[SessionOut], ended: usize, room: &Room, me: &str, all: bool) -> String {
    let who = |id: &str| if id == me { "you".to_string() } else { id.to_string() };
    let mut b = if sessions.is_empty() {
        format!("No sessions in room {}.", room_id)
    } else {
        format!("Sessions in room {}, newest first:", room_id)
    };
    for s in sessions {
        b.push_str(&format!("\n- \"{}\" ({}, {}) offered by {}", s.session_id, s.media.join("+"), s.state, who(&s.offerer)));
        if !s.to.is_empty() {
            b.push_str(&format!(" to {}", s.to.iter().map(|t| who(t)).collect::<Vec<_>>().join(", ")));
        } else {
            b.push_str(" to the room");
        }
        b.push_str(&format!(" (offer {})", s.offer_event_id));
        if !s.answers.is_empty() {
            b.push_str(&format!("; answered by {}", s.answers.iter().map(|a| who(&a.0)).collect::<Vec<_>>().join(", ")));
        }
        if !s.transfers.is_empty() {
            let names: Vec<&str> =
                s.transfers.iter().map(|t| if t.file_name.is_empty() { t.id.as_str() } else { t.file_name.as_str() }).collect();
            b.push_str(&format!("; files: {}", names.join(", ")));
        }
        if !s.closed_by.is_empty() {
            b.push_str(&format!("; closed by {}", s.closed_by.iter().map(|c| who(c)).collect::<Vec<_>>().join(", ")));
        }
    }
    if ended > 0 && !all {
        b.push_str(&format!("\n({} not shown; include_ended lists them)", plural(ended, "ended session")));
    }
    b.push_str(room.partial_note());
    b
}
