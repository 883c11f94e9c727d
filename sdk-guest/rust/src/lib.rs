//! `apconnect_plugin`: the Rust guest SDK for apconnect plugins.
//!
//! A plugin is a WebAssembly reactor (`--crate-type cdylib`, target
//! `wasm32-wasi`) that validates custom event types, turns room records
//! into inbox items, adds tools and provides type packs, inside a sandbox
//! with no files, network, environment or clock. This crate implements ABI
//! version 1 of `docs/PLUGINS.md`: it exports `apconnect_abi_version` and
//! `apconnect_call` (through [`export_plugin!`]), reads each input envelope
//! with its own strict JSON parser ([`json`]), runs the registered functions
//! and writes the output envelope with a closed encoder. It has no
//! dependencies beyond `std` and builds with Rust 1.63.
//!
//! ```ignore
//! use apconnect_plugin::*;
//!
//! fn plugin() -> Plugin {
//!     Plugin::new("hello_rust", "0.1.0")
//!         .tool(Tool::new("wave", "Waves back.", |_req| Ok(ToolResult::text("👋"))))
//! }
//!
//! export_plugin!(plugin);
//! ```
//!
//! Time comes only from the `now_ms` of each request. A panic aborts the
//! instance: the SDK writes `panic: <message>` to stderr first, which the
//! host quotes in the `plugin_trap` error, and the host starts a fresh
//! instance for the next call.

pub mod json;
pub mod text;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

pub use json::Value;

/// The plugin ABI version this SDK implements.
pub const ABI_VERSION: i32 = 1;

// Output limits of the envelope schemas (schemas/plugin); the SDK trims
// values to them so that a chatty plugin is not refused by the host.
const MAX_FIELD_ERRORS: usize = 32;
const MAX_ERROR_MESSAGE: usize = 512;
const MAX_ERROR_PATH: usize = 256;
const MAX_SUMMARY: usize = 1024;
const MAX_REASON: usize = 256;
const MAX_SUGGESTED: usize = 8;
const MAX_ENVELOPE_MESSAGE: usize = 1024;

/// The operations of ABI version 1 (the first argument of `apconnect_call`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Describe = 1,
    Validate = 2,
    Watch = 3,
    Tool = 4,
    Pack = 5,
}

// ---------------------------------------------------------------------------
// What the host sends.

/// A verified, accepted room record. A redacted record has only `seq`,
/// `event_id`, `event_type`, `accepted_at` and `redacted`.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub seq: i64,
    pub event_id: String,
    pub event_type: String,
    pub actor: String,
    pub created_at: i64,
    pub accepted_at: i64,
    pub mentions: Vec<String>,
    /// The payload object (null for a redacted record).
    pub payload: Value,
    pub redacted: bool,
}

impl Record {
    /// Whether `agent_id` is among the record's mentions.
    pub fn mentioned(&self, agent_id: &str) -> bool {
        self.mentions.iter().any(|m| m == agent_id)
    }
}

/// The connector's active agent and, inside a room, its role.
#[derive(Clone, Debug, Default)]
pub struct SelfAgent {
    pub agent_id: String,
    pub role: String,
}

/// One active member of a room.
#[derive(Clone, Debug, Default)]
pub struct Member {
    pub agent_id: String,
    /// moderator, speaker or observer
    pub role: String,
    pub perspective: String,
}

/// One entry of a room's type registry.
#[derive(Clone, Debug, Default)]
pub struct TypeInfo {
    pub event_type: String,
    /// message, signal or control
    pub kind: String,
    /// active, deprecated or disabled ("" means active)
    pub status: String,
}

/// The room head: the latest record that is not a signal.
#[derive(Clone, Debug, Default)]
pub struct Head {
    pub seq: i64,
    pub hash: String,
}

/// A read-only view of one room built by the host from verified state. The
/// host fills what the operation needs; missing parts are empty.
#[derive(Clone, Debug, Default)]
pub struct Room {
    pub room_id: String,
    pub host: String,
    /// scheduled, active, ended or cancelled
    pub status: String,
    pub creator: String,
    pub head: Option<Head>,
    pub self_agent: Option<SelfAgent>,
    pub members: Vec<Member>,
    pub types: Vec<TypeInfo>,
    /// The records of the plugin's record scope, oldest first.
    pub records: Vec<Record>,
    /// The host may not hold every record of the scope: absence proves
    /// nothing.
    pub records_truncated: bool,
}

impl Room {
    /// The active agent's ID, or "".
    pub fn self_id(&self) -> &str {
        self.self_agent.as_ref().map(|s| s.agent_id.as_str()).unwrap_or("")
    }

    /// The member with `agent_id`.
    pub fn member(&self, agent_id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.agent_id == agent_id)
    }

    /// The record of the context whose event ID is `event_id`.
    pub fn record(&self, event_id: &str) -> Option<&Record> {
        self.records.iter().find(|r| r.event_id == event_id)
    }

    /// Whether the room's type registry holds `event_type`.
    pub fn has_type(&self, event_type: &str) -> bool {
        self.types.iter().any(|t| t.event_type == event_type)
    }

    /// The line a result should carry when the context may miss records,
    /// "" otherwise.
    pub fn partial_note(&self) -> &'static str {
        if self.records_truncated {
            "\n(partial: older records of this room are not held by apconnect)"
        } else {
            ""
        }
    }
}

/// One proposed event of a type the plugin validates, before signing.
#[derive(Clone, Debug, Default)]
pub struct ValidateRequest {
    /// Host time in Unix milliseconds: the only clock there is.
    pub now_ms: i64,
    pub event_type: String,
    /// The agent that will sign it, when known.
    pub actor: String,
    pub payload: Value,
    pub mentions: Vec<String>,
    pub references: Vec<String>,
    pub room: Room,
}

/// The batch a watched record arrived in.
#[derive(Clone, Debug, Default)]
pub struct WatchRequest {
    pub now_ms: i64,
    pub room: Room,
    /// The whole batch, oldest first.
    pub records: Vec<Record>,
}

/// One call of a tool.
#[derive(Clone, Debug, Default)]
pub struct ToolRequest {
    pub now_ms: i64,
    pub name: String,
    /// Already checked by the host against the tool's input schema.
    pub arguments: Value,
    pub self_agent: Option<SelfAgent>,
    /// Set when the call names a room the host holds (room_id, host).
    pub room: Option<Room>,
}

impl ToolRequest {
    /// The context of the room the call names in its `room_id` argument,
    /// or an error the agent can act on when the host passed none (a room
    /// this agent does not follow) or another room's.
    pub fn named_room(&self) -> Result<&Room, String> {
        let id = self.arguments["room_id"].as_str().unwrap_or("");
        match &self.room {
            Some(r) if !r.room_id.is_empty() => {
                if r.room_id != id {
                    Err(format!("the context is for room {}, not {}", r.room_id, id))
                } else {
                    Ok(r)
                }
            }
            _ => Err(format!("apconnect passed no context for room {}; is it a room this agent follows?", id)),
        }
    }
}

/// The input schema members of a tool about one room: splice them into the
/// schema's "properties" (the host then passes that room's context).
pub const ROOM_PROPERTIES: &str = r#""room_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$", "description": "The room."},
	"host": {"type": "string", "pattern": "^https://[^/?#@\\s]+$", "maxLength": 2048, "description": "HTTPS origin of the room's host; only needed when the room ID is known on more than one host."}"#;

// ---------------------------------------------------------------------------
// What the plugin answers.

/// One reason a validator refuses an event: an RFC 6901 pointer into the
/// proposal (`/payload/option_ids/1`, see [`json::pointer`]) and a message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError { path: path.into(), message: message.into() }
    }
}

/// Priority of an inbox item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    Low,
    Normal,
    High,
}

impl Default for Priority {
    fn default() -> Self {
        Priority::Normal
    }
}

/// Asks the agent to look at one record. The SDK sets the kind and the seq
/// of the record it was returned for; the host fills room, event ID, actor
/// and time, cuts the summary to 160 characters and keeps only suggested
/// tools that exist (the plugin's own tools may be named by short name).
#[derive(Clone, Debug, Default)]
pub struct InboxItem {
    pub summary: String,
    pub priority: Priority,
    pub requires_response: bool,
    pub reason: String,
    pub suggested_tools: Vec<String>,
}

impl InboxItem {
    pub fn new(summary: impl Into<String>) -> InboxItem {
        InboxItem { summary: summary.into(), ..Default::default() }
    }
}

/// An event a tool asks the host to sign and submit through the normal
/// write path (needs a `propose:<type>` grant and the type in
/// [`Plugin::proposes`]).
#[derive(Clone, Debug, Default)]
pub struct Proposal {
    pub event_type: String,
    /// A JSON object.
    pub payload: Value,
    pub mentions: Vec<String>,
    pub references: Vec<String>,
}

/// What a tool returns: text (1–16 items), optional structured JSON (an
/// object, checked against the tool's output schema) and proposals.
#[derive(Clone, Debug, Default)]
pub struct ToolResult {
    pub content: Vec<String>,
    pub structured: Option<Value>,
    pub is_error: bool,
    pub proposals: Vec<Proposal>,
}

impl ToolResult {
    /// A result with one text item.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult { content: vec![text.into()], ..Default::default() }
    }

    /// Sets the structured result.
    pub fn with_structured(mut self, v: Value) -> ToolResult {
        self.structured = Some(v);
        self
    }
}

/// An ADP type definition (Agent Discourse 1.0 section 12.3).
#[derive(Clone, Debug, Default)]
pub struct TypeDef {
    pub event_type: String,
    /// message, signal or control
    pub kind: String,
    pub title: String,
    pub description: String,
    /// The payload's JSON Schema (draft 2020-12), an object.
    pub schema: Value,
    pub roles: Vec<String>,
    pub instructions: String,
    pub version: String,
    pub status: String,
    pub rate_hint: i64,
    pub max_payload_hint: i64,
    /// An object, or null.
    pub extra: Value,
}

/// A versioned set of type definitions a room imports with
/// `{"use": "<name>/<version>"}`. `name` has the form `<owner>:<pack>`.
#[derive(Clone, Debug, Default)]
pub struct Pack {
    pub name: String,
    pub version: String,
    pub title: String,
    pub description: String,
    pub types: Vec<TypeDef>,
}

// ---------------------------------------------------------------------------
// The plugin.

/// A validator: the reasons to refuse one proposed event (empty: fine).
pub type ValidateFn = Box<dyn Fn(&ValidateRequest) -> Vec<FieldError>>;
/// A watch rule: an inbox item for one record, or None.
pub type WatchFn = Box<dyn Fn(&Record, &WatchRequest) -> Option<InboxItem>>;
/// A tool handler; an Err becomes an `is_error` result carrying its text.
pub type ToolFn = Box<dyn Fn(&ToolRequest) -> Result<ToolResult, String>>;

/// One MCP tool; its MCP name is `<plugin>_<name>`.
pub struct Tool {
    pub name: String,
    pub title: String,
    pub description: String,
    /// A JSON Schema object without oneOf, anyOf or allOf.
    pub input_schema: Value,
    /// When set, the schema of [`ToolResult::structured`].
    pub output_schema: Option<Value>,
    pub handler: ToolFn,
}

impl Tool {
    /// A tool whose arguments are any object.
    pub fn new(name: &str, description: &str, handler: impl Fn(&ToolRequest) -> Result<ToolResult, String> + 'static) -> Tool {
        Tool {
            name: name.to_string(),
            title: String::new(),
            description: description.to_string(),
            input_schema: Value::object().set("type", "object"),
            output_schema: None,
            handler: Box::new(handler),
        }
    }

    pub fn title(mut self, title: &str) -> Tool {
        self.title = title.to_string();
        self
    }

    /// Sets the input schema from JSON text. Invalid JSON panics, which
    /// refuses the plugin at load with the message.
    pub fn input_schema(mut self, schema: &str) -> Tool {
        self.input_schema = parse_schema(&self.name, "input", schema);
        self
    }

    /// Sets the output schema from JSON text (panics like `input_schema`).
    pub fn output_schema(mut self, schema: &str) -> Tool {
        self.output_schema = Some(parse_schema(&self.name, "output", schema));
        self
    }
}

fn parse_schema(tool: &str, which: &str, text: &str) -> Value {
    match Value::parse(text) {
        Ok(v) => v,
        Err(e) => panic!("tool {}: the {} schema is not JSON: {}", tool, which, e),
    }
}

/// Everything a plugin provides. Build it in a function and export it with
/// [`export_plugin!`].
pub struct Plugin {
    /// `[a-z][a-z0-9_]{0,31}`; its tools appear in MCP as `<name>_<tool>`.
    pub name: String,
    pub version: String,
    pub description: String,
    validators: BTreeMap<String, ValidateFn>,
    watchers: BTreeMap<String, WatchFn>,
    tools: Vec<Tool>,
    packs: Vec<Pack>,
    proposes: Vec<String>,
}

impl Plugin {
    pub fn new(name: &str, version: &str) -> Plugin {
        Plugin {
            name: name.to_string(),
            version: version.to_string(),
            description: String::new(),
            validators: BTreeMap::new(),
            watchers: BTreeMap::new(),
            tools: Vec::new(),
            packs: Vec::new(),
            proposes: Vec::new(),
        }
    }

    pub fn description(mut self, d: &str) -> Plugin {
        self.description = d.to_string();
        self
    }

    /// Checks proposed events of `event_type` (grant "validate").
    pub fn validator(mut self, event_type: &str, f: impl Fn(&ValidateRequest) -> Vec<FieldError> + 'static) -> Plugin {
        self.validators.insert(event_type.to_string(), Box::new(f));
        self
    }

    /// Looks at verified records of `event_type` (grant "watch").
    pub fn watcher(mut self, event_type: &str, f: impl Fn(&Record, &WatchRequest) -> Option<InboxItem> + 'static) -> Plugin {
        self.watchers.insert(event_type.to_string(), Box::new(f));
        self
    }

    /// Adds a tool (grant "tools").
    pub fn tool(mut self, t: Tool) -> Plugin {
        self.tools.push(t);
        self
    }

    /// Provides a type pack (grant "packs").
    pub fn pack(mut self, p: Pack) -> Plugin {
        self.packs.push(p);
        self
    }

    /// Lets tools propose events of `event_type` (grant "propose:<type>").
    pub fn proposes(mut self, event_type: &str) -> Plugin {
        self.proposes.push(event_type.to_string());
        self
    }

    /// Runs one operation: the input envelope in, the output envelope and
    /// whether it is a result (true) or an error envelope (false) out. The
    /// WebAssembly export calls it; native tests may call it directly.
    pub fn handle(&self, op: i32, input: &[u8]) -> (String, bool) {
        let env = if op == Op::Describe as i32 {
            Value::object()
        } else {
            match Value::parse_bytes(input) {
                Ok(v @ Value::Object(_)) => v,
                Ok(_) => return error_output("bad_input", "the input envelope is not a JSON object"),
                Err(e) => return error_output("bad_input", &format!("the input envelope is not strict JSON: {}", e)),
            }
        };
        match op {
            1 => (self.describe().to_json(), true),
            2 => self.validate(&env),
            3 => self.watch(&env),
            4 => self.call_tool(&env),
            5 => self.pack_op(&env),
            _ => error_output("unknown_op", &format!("operation {} is not part of ABI version {}", op, ABI_VERSION)),
        }
    }

    fn describe(&self) -> Value {
        let mut d = Value::object()
            .set("name", self.name.as_str())
            .set("version", self.version.as_str())
            .set("abi_version", ABI_VERSION);
        if !self.description.is_empty() {
            d.insert("description", self.description.as_str());
        }
        let list = |keys: Vec<&String>| Value::Array(keys.into_iter().map(|k| Value::from(k.as_str())).collect());
        if !self.validators.is_empty() {
            d.insert("validates", list(self.validators.keys().collect()));
        }
        if !self.watchers.is_empty() {
            d.insert("watches", list(self.watchers.keys().collect()));
        }
        if !self.proposes.is_empty() {
            d.insert("proposes", list(self.proposes.iter().collect()));
        }
        if !self.tools.is_empty() {
            let tools = self
                .tools
                .iter()
                .map(|t| {
                    let mut v = Value::object().set("name", t.name.as_str());
                    if !t.title.is_empty() {
                        v.insert("title", t.title.as_str());
                    }
                    v.insert("description", t.description.as_str());
                    v.insert("input_schema", t.input_schema.clone());
                    if let Some(o) = &t.output_schema {
                        v.insert("output_schema", o.clone());
                    }
                    v
                })
                .collect::<Vec<_>>();
            d.insert("tools", Value::Array(tools));
        }
        if !self.packs.is_empty() {
            d.insert("packs", Value::Array(self.packs.iter().map(pack_value).collect()));
        }
        d
    }

    fn validate(&self, env: &Value) -> (String, bool) {
        let p = &env["proposal"];
        let req = ValidateRequest {
            now_ms: env["now_ms"].as_i64().unwrap_or(0),
            event_type: string(&p["type"]),
            actor: string(&p["actor"]),
            payload: p["payload"].clone(),
            mentions: strings(&p["mentions"]),
            references: strings(&p["references"]),
            room: room(&env["room"]),
        };
        let f = match self.validators.get(&req.event_type) {
            Some(f) => f,
            None => return error_output("unknown_type", &format!("the plugin validates no type {:?}", req.event_type)),
        };
        let mut errs = f(&req);
        errs.truncate(MAX_FIELD_ERRORS);
        let list = errs
            .into_iter()
            .map(|e| {
                let mut path = e.path;
                if !path.is_empty() && !path.starts_with('/') {
                    path.insert(0, '/');
                }
                let message = if e.message.is_empty() { "invalid".to_string() } else { e.message };
                Value::object()
                    .set("path", truncate(&path, MAX_ERROR_PATH))
                    .set("message", truncate(&message, MAX_ERROR_MESSAGE))
            })
            .collect::<Vec<_>>();
        let out = if list.is_empty() {
            Value::object().set("ok", true)
        } else {
            Value::object().set("ok", false).set("errors", Value::Array(list))
        };
        (out.to_json(), true)
    }

    fn watch(&self, env: &Value) -> (String, bool) {
        let req = WatchRequest {
            now_ms: env["now_ms"].as_i64().unwrap_or(0),
            room: room(&env["room"]),
            records: env["records"].as_array().unwrap_or(&[]).iter().map(record).collect(),
        };
        let mut items = Vec::new();
        for rec in &req.records {
            let f = match self.watchers.get(&rec.event_type) {
                Some(f) => f,
                None => continue,
            };
            let it = match f(rec, &req) {
                Some(it) => it,
                None => continue,
            };
            let summary = if it.summary.is_empty() { format!("{} record {}", rec.event_type, rec.seq) } else { it.summary };
            let mut v = Value::object()
                .set("kind", "room.event.custom")
                .set("seq", rec.seq)
                .set("summary", truncate(&summary, MAX_SUMMARY));
            match it.priority {
                Priority::Normal => {}
                Priority::Low => v.insert("priority", "low"),
                Priority::High => v.insert("priority", "high"),
            }
            if it.requires_response {
                v.insert("requires_response", true);
            }
            if !it.reason.is_empty() {
                v.insert("reason", truncate(&it.reason, MAX_REASON));
            }
            let tools = clean_tool_names(&it.suggested_tools);
            if !tools.is_empty() {
                v.insert("suggested_tools", tools);
            }
            items.push(v);
        }
        (Value::object().set("items", Value::Array(items)).to_json(), true)
    }

    fn call_tool(&self, env: &Value) -> (String, bool) {
        let ctx = &env["context"];
        let req = ToolRequest {
            now_ms: env["now_ms"].as_i64().unwrap_or(0),
            name: string(&env["name"]),
            arguments: match &env["arguments"] {
                Value::Null => Value::object(),
                v => v.clone(),
            },
            self_agent: ctx.get("self").map(self_agent),
            room: ctx.get("room").map(room),
        };
        let tool = match self.tools.iter().find(|t| t.name == req.name) {
            Some(t) => t,
            None => return error_output("unknown_tool", &format!("the plugin has no tool {:?}", req.name)),
        };
        let res = match (tool.handler)(&req) {
            Ok(r) => r,
            Err(msg) => ToolResult { content: vec![msg], is_error: true, ..Default::default() },
        };
        let mut content = res.content;
        if content.is_empty() {
            content.push(res.structured.as_ref().map(Value::to_json).unwrap_or_default());
        }
        let items = content.into_iter().map(|t| Value::object().set("type", "text").set("text", t)).collect::<Vec<_>>();
        let mut out = Value::object().set("content", Value::Array(items));
        if let Some(s) = res.structured {
            out.insert("structured", s);
        }
        if res.is_error {
            out.insert("is_error", true);
        }
        if !res.proposals.is_empty() {
            let list = res
                .proposals
                .into_iter()
                .map(|p| {
                    let mut v = Value::object().set("type", p.event_type).set("payload", p.payload);
                    if !p.mentions.is_empty() {
                        v.insert("mentions", p.mentions);
                    }
                    if !p.references.is_empty() {
                        v.insert("references", p.references);
                    }
                    v
                })
                .collect::<Vec<_>>();
            out.insert("proposals", Value::Array(list));
        }
        (out.to_json(), true)
    }

    fn pack_op(&self, env: &Value) -> (String, bool) {
        let name = string(&env["name"]);
        match self.packs.iter().find(|p| p.name == name) {
            Some(p) => (pack_value(p).to_json(), true),
            None => error_output("unknown_pack", &format!("the plugin provides no pack {:?}", name)),
        }
    }
}

fn pack_value(p: &Pack) -> Value {
    let mut v = Value::object().set("name", p.name.as_str()).set("version", p.version.as_str());
    if !p.title.is_empty() {
        v.insert("title", p.title.as_str());
    }
    if !p.description.is_empty() {
        v.insert("description", p.description.as_str());
    }
    let types = p
        .types
        .iter()
        .map(|t| {
            let mut d = Value::object()
                .set("type", t.event_type.as_str())
                .set("kind", t.kind.as_str())
                .set("title", t.title.as_str());
            let opt = |d: &mut Value, k: &str, s: &str| {
                if !s.is_empty() {
                    d.insert(k, s);
                }
            };
            opt(&mut d, "description", &t.description);
            d.insert("schema", t.schema.clone());
            if !t.roles.is_empty() {
                d.insert("roles", t.roles.clone());
            }
            opt(&mut d, "instructions", &t.instructions);
            opt(&mut d, "version", &t.version);
            opt(&mut d, "status", &t.status);
            if t.rate_hint > 0 {
                d.insert("rate_hint", t.rate_hint);
            }
            if t.max_payload_hint > 0 {
                d.insert("max_payload_hint", t.max_payload_hint);
            }
            if !t.extra.is_null() {
                d.insert("extra", t.extra.clone());
            }
            d
        })
        .collect::<Vec<_>>();
    v.insert("types", Value::Array(types));
    v
}

/// Keeps the first distinct valid tool names ([a-z0-9_]{1,64}); the host
/// would refuse the whole output otherwise.
fn clean_tool_names(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if out.len() == MAX_SUGGESTED {
            break;
        }
        let valid = !n.is_empty() && n.len() <= 64 && n.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
        if !valid {
            log(Level::Warn, &format!("suggested tool {:?} is not a valid tool name; dropped", n));
        } else if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

fn string(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_strings().unwrap_or_default()
}

fn record(v: &Value) -> Record {
    Record {
        seq: v["seq"].as_i64().unwrap_or(0),
        event_id: string(&v["event_id"]),
        event_type: string(&v["type"]),
        actor: string(&v["actor"]),
        created_at: v["created_at"].as_i64().unwrap_or(0),
        accepted_at: v["accepted_at"].as_i64().unwrap_or(0),
        mentions: strings(&v["mentions"]),
        payload: v["payload"].clone(),
        redacted: v["redacted"].as_bool().unwrap_or(false),
    }
}

fn self_agent(v: &Value) -> SelfAgent {
    SelfAgent { agent_id: string(&v["agent_id"]), role: string(&v["role"]) }
}

fn room(v: &Value) -> Room {
    let list = |k: &str| v[k].as_array().unwrap_or(&[]).to_vec();
    Room {
        room_id: string(&v["room_id"]),
        host: string(&v["host"]),
        status: string(&v["status"]),
        creator: string(&v["creator"]),
        head: v.get("head").map(|h| Head { seq: h["seq"].as_i64().unwrap_or(0), hash: string(&h["hash"]) }),
        self_agent: v.get("self").map(self_agent),
        members: list("members")
            .iter()
            .map(|m| Member { agent_id: string(&m["agent_id"]), role: string(&m["role"]), perspective: string(&m["perspective"]) })
            .collect(),
        types: list("types")
            .iter()
            .map(|t| TypeInfo { event_type: string(&t["type"]), kind: string(&t["kind"]), status: string(&t["status"]) })
            .collect(),
        records: v["records"].as_array().unwrap_or(&[]).iter().map(record).collect(),
        records_truncated: v["records_truncated"].as_bool().unwrap_or(false),
    }
}

/// Cuts s to at most n bytes without splitting a character.
fn truncate(s: &str, mut n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    while n > 0 && !s.is_char_boundary(n) {
        n -= 1;
    }
    s[..n].to_string()
}

fn error_output(code: &str, message: &str) -> (String, bool) {
    let err = Value::object().set("code", code).set("message", truncate(message, MAX_ENVELOPE_MESSAGE));
    (Value::object().set("error", err).to_json(), false)
}

// ---------------------------------------------------------------------------
// Logging.

/// Severity of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warn = 2,
    Error = 3,
}

/// Writes one line to the plugin's log on the host: a bounded ring buffer
/// that `apconnect doctor` shows (cut to 512 bytes, at most 64 lines per
/// call). Outside WebAssembly it goes to stderr. `eprintln!` reaches the
/// same log.
pub fn log(level: Level, msg: &str) {
    if msg.is_empty() {
        return;
    }
    abi::log(level as u32, msg.as_bytes());
}

// ---------------------------------------------------------------------------
// The ABI.

#[cfg(target_arch = "wasm32")]
mod abi {
    #[link(wasm_import_module = "apconnect")]
    extern "C" {
        fn input(ptr: *mut u8);
        fn output(ptr: *const u8, len: u32);
        #[link_name = "log"]
        fn host_log(level: u32, ptr: *const u8, len: u32);
    }

    pub fn read_input(len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        if len > 0 {
            // SAFETY: the host writes exactly `len` bytes at the pointer.
            unsafe { input(buf.as_mut_ptr()) };
        }
        buf
    }

    pub fn write_output(out: &[u8]) {
        // SAFETY: the host copies `len` bytes during the call.
        unsafe { output(out.as_ptr(), out.len() as u32) };
    }

    pub fn log(level: u32, msg: &[u8]) {
        // SAFETY: as for output.
        unsafe { host_log(level, msg.as_ptr(), msg.len() as u32) };
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod abi {
    pub fn read_input(len: usize) -> Vec<u8> {
        vec![0u8; len]
    }

    pub fn write_output(_out: &[u8]) {}

    pub fn log(level: u32, msg: &[u8]) {
        eprintln!("log {}: {}", level, String::from_utf8_lossy(msg));
    }
}

#[doc(hidden)]
pub mod __private {
    use super::*;

    thread_local! {
        static PLUGIN: RefCell<Option<Rc<Plugin>>> = RefCell::new(None);
    }

    /// The body of the `apconnect_call` export: builds the plugin on the
    /// instance's first call, reads the input, runs the operation and hands
    /// the output to the host.
    pub fn call(op: i32, in_len: i32, build: fn() -> Plugin) -> i32 {
        let p = PLUGIN.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                std::panic::set_hook(Box::new(|info| {
                    // The host quotes the first "panic:" line of stderr in
                    // the plugin_trap error; then the instance is replaced.
                    let msg = match info.payload().downcast_ref::<&str>() {
                        Some(s) => s.to_string(),
                        None => info.payload().downcast_ref::<String>().cloned().unwrap_or_default(),
                    };
                    let at = info.location().map(|l| format!(" ({}:{})", l.file(), l.line())).unwrap_or_default();
                    eprintln!("panic: {}{}", msg, at);
                }));
                *slot = Some(Rc::new(build()));
            }
            slot.as_ref().map(Rc::clone)
        });
        let p = match p {
            Some(p) => p,
            None => return 1,
        };
        let input = abi::read_input(in_len.max(0) as usize);
        let (out, ok) = p.handle(op, &input);
        abi::write_output(out.as_bytes());
        if ok {
            0
        } else {
            1
        }
    }
}

/// Exports a plugin: `export_plugin!(build)` with `fn build() -> Plugin`
/// defines the module's `apconnect_abi_version` and `apconnect_call`
/// exports. Use it once, in the plugin crate (a `cdylib`).
#[macro_export]
macro_rules! export_plugin {
    ($build:path) => {
        #[no_mangle]
        pub extern "C" fn apconnect_abi_version() -> i32 {
            $crate::ABI_VERSION
        }

        #[no_mangle]
        pub extern "C" fn apconnect_call(op: i32, in_len: i32) -> i32 {
            $crate::__private::call(op, in_len, $build)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello() -> Plugin {
        Plugin::new("t", "1")
            .validator("t.x", |r| if r.payload["to"].as_str() == Some(r.actor.as_str()) { vec![FieldError::new("payload/to", "")] } else { vec![] })
            .watcher("t.x", |rec, w| if rec.payload["to"].as_str() == Some(w.room.self_id()) { Some(InboxItem { suggested_tools: vec!["wave".into(), "Bad".into()], ..InboxItem::new("hi") }) } else { None })
            .tool(Tool::new("wave", "Waves.", |r| if r.arguments["fail"].as_bool() == Some(true) { Err("no".into()) } else { Ok(ToolResult::text("👋")) }))
    }

    #[test]
    fn handles_every_op() {
        let p = hello();
        let (d, ok) = p.handle(1, b"");
        assert!(ok);
        assert_eq!(d, r#"{"name":"t","version":"1","abi_version":1,"validates":["t.x"],"watches":["t.x"],"tools":[{"name":"wave","description":"Waves.","input_schema":{"type":"object"}}]}"#);
        let (v, _) = p.handle(2, br#"{"op":"validate","now_ms":1,"proposal":{"type":"t.x","actor":"a","payload":{"to":"a"}},"room":{"room_id":"r"}}"#);
        assert_eq!(v, r#"{"ok":false,"errors":[{"path":"/payload/to","message":"invalid"}]}"#);
        let (w, _) = p.handle(3, br#"{"op":"watch","now_ms":1,"room":{"room_id":"r","self":{"agent_id":"me"}},"records":[{"seq":4,"event_id":"e","type":"t.x","accepted_at":1,"payload":{"to":"me"}},{"seq":5,"event_id":"f","type":"t.x","accepted_at":1,"payload":{"to":"you"}}]}"#);
        assert_eq!(w, r#"{"items":[{"kind":"room.event.custom","seq":4,"summary":"hi","suggested_tools":["wave"]}]}"#);
        let (t, _) = p.handle(4, br#"{"op":"tool","now_ms":1,"name":"wave","arguments":{"fail":true},"context":{}}"#);
        assert_eq!(t, r#"{"content":[{"type":"text","text":"no"}],"is_error":true}"#);
        let (e, ok) = p.handle(4, br#"{"op":"tool","name":"nope"}"#);
        assert!(!ok && e.contains("unknown_tool"));
        let (e, ok) = p.handle(2, br#"{"a":1,"a":2}"#);
        assert!(!ok && e.contains("bad_input") && e.contains("duplicate"));
        let (e, ok) = p.handle(9, b"{}");
        assert!(!ok && e.contains("unknown_op"));
    }
}
