//! The reference Rust SDK's `LocalConnector` (agent-protocols 0.12.6)
//! pointed at a real `apconnect hub`, driven line by line from stdin.
//!
//! Usage: `sdk-connector-interop --host ORIGIN --ca CA.pem`
//!
//! Each stdin line is one JSON request:
//!   `{"agent": NAME, "tool": TOOL, "input": {...}}` calls one tool of the
//!   connector named NAME (created on first use with a fresh key, the hub
//!   as its only allowed host and profile service);
//!   `{"agent": NAME, "op": "agent_id"}` returns that connector's Agent ID;
//!   `{"agent": NAME, "op": "snapshot"}` returns its persisted state;
//!   `{"op": "verify_jwt", "token", "audience", "now"}` runs the SDK's
//!   `verify_request_jwt` (zero skew, 300 s lifetime) and returns the claims;
//!   `{"op": "verdict", "kind", "input"}` answers one differential vector
//!   case (test/interop/vectors.py) with the Rust SDK, in the verdict shape
//!   the Python side uses; kinds it does not know answer `{"skip": kind}`.
//!   The Knowledge kinds `knowledge_envelope` ({envelope}),
//!   `knowledge_record` ({record, expected?}) and `knowledge_text_matches`
//!   ({envelope, text}) run the SDK's checks of that name
//!   (test/interop/rust/test_knowledge.py).
//!
//! `sdk-connector-interop --verify-archive FILE` instead reads an archive
//! file — its manifest line, then one server record per line — the way the
//! SDK's `LocalConnector` reads an archive (each line through
//! `parse_strict_json`, then decoded), runs `verify_archive_records` on it
//! and prints `{"ok": {"records", "redacted"}}` (exit 0) or the error (exit
//! 1). `make bench` times it against `apconnect verify-archive` on the
//! same file (test/e2e BenchmarkVerifyArchive).
//!
//! `sdk-connector-interop --mail-bench ROUNDS` times the SDK's seal and open
//! of a 4 KiB letter (mail_bench.rs) for host/proto/mail's
//! BenchmarkSealOpen4KiB.
//! Each answer is one JSON line: `{"ok": RESULT}` or
//! `{"error": {"code", "message", "data"}}`. The test driving it
//! (test/interop/test_rust_connector.py) decides what is right; this
//! program only runs the SDK.

mod mail_bench;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use agent_protocols::discourse::{
    effective_open_roles, verify_archive_records, ArchiveManifest, ArchiveRecord, validate_custom_event_type_name, validate_message_create_payload,
    validate_room_policy, validate_room_visibility_policy, validate_type_declaration,
    validate_type_def, verify_pack_digest, MessageCreatePayload, RoomPolicy, TypeDeclaration,
    TypeDef, Visibility,
};
use agent_protocols::identity::{
    parse_strict_json, validate_origin, verify_request_jwt, AgentId, AgentSigner,
    ClientNonceManager, RequestAuthContext,
};
use agent_protocols::knowledge::{
    knowledge_text_matches, validate_knowledge_envelope, validate_knowledge_record,
};
use agent_protocols::local_connector::{AgentProtocolsHost, LocalConnector};
use agent_protocols::profile::{validate_profile_payload, ProfileUpdatePayload};
use agent_protocols::SdkError;
use serde_json::{json, Value};

struct Config {
    host: String,
    ca: String,
}

fn parse_args() -> Result<Config, String> {
    let mut host = None;
    let mut ca = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--host" => host = args.next(),
            "--ca" => ca = args.next(),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Config {
        host: host.ok_or("--host ORIGIN is required")?,
        ca: ca.ok_or("--ca FILE is required")?,
    })
}

fn http_client(ca: &str) -> Result<reqwest::Client, String> {
    let pem = std::fs::read(ca).map_err(|e| format!("read {ca}: {e}"))?;
    let cert = reqwest::Certificate::from_pem(&pem).map_err(|e| format!("{ca}: {e}"))?;
    // Like the connector's default client: no redirects; the hub's CA only.
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tls_certs_only([cert])
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

fn new_connector(cfg: &Config, client: &reqwest::Client) -> LocalConnector {
    let mut c = LocalConnector::new(AgentSigner::generate()).with_http_client(client.clone());
    c.add_host(AgentProtocolsHost {
        host: cfg.host.clone(),
        label: Some("apconnect hub".into()),
        allowed: true,
        features: Vec::new(),
        profile_service: Some(cfg.host.clone()),
        last_checked_at: None,
    });
    c
}

fn error_value(e: &SdkError) -> Value {
    json!({"error": {"code": e.code(), "message": e.to_string(), "data": e.data()}})
}

async fn answer(
    cfg: &Config,
    client: &reqwest::Client,
    agents: &mut BTreeMap<String, LocalConnector>,
    req: Value,
) -> Value {
    if req["op"] == "verdict" {
        return verdict(req["kind"].as_str().unwrap_or_default(), &req["input"]);
    }
    if req["op"] == "verify_jwt" {
        let ctx = RequestAuthContext {
            audience: req["audience"].as_str().unwrap_or_default().to_owned(),
            now_secs: req["now"].as_i64().unwrap_or_default(),
            max_ttl_secs: 300,
        };
        return match verify_request_jwt(req["token"].as_str().unwrap_or_default(), &ctx) {
            Ok(claims) => match serde_json::to_value(claims) {
                Ok(v) => json!({"ok": v}),
                Err(e) => json!({"error": {"code": "bad_claims", "message": e.to_string()}}),
            },
            Err(e) => error_value(&e),
        };
    }
    let Some(name) = req["agent"].as_str() else {
        return json!({"error": {"code": "bad_request", "message": "agent is required"}});
    };
    let conn = agents
        .entry(name.to_owned())
        .or_insert_with(|| new_connector(cfg, client));
    if let Some(op) = req["op"].as_str() {
        return match op {
            "agent_id" => json!({"ok": conn.agent_id()}),
            "snapshot" => match conn.snapshot() {
                Ok(v) => json!({"ok": v}),
                Err(e) => error_value(&e),
            },
            other => {
                json!({"error": {"code": "bad_request", "message": format!("unknown op {other}")}})
            }
        };
    }
    let Some(tool) = req["tool"].as_str() else {
        return json!({"error": {"code": "bad_request", "message": "tool or op is required"}});
    };
    let input = req.get("input").cloned().unwrap_or_else(|| json!({}));
    match conn.call_tool(tool, input).await {
        Ok(v) => json!({"ok": v}),
        Err(e) => error_value(&e),
    }
}

/// The code of an SDK error, "ok" for success; errors without a protocol
/// code (a JSON decode failure) are "undecodable".
fn code_of<T>(r: agent_protocols::Result<T>) -> Value {
    match r {
        Ok(_) => json!("ok"),
        Err(e) => json!(e.code().unwrap_or("undecodable")),
    }
}

fn decode<T: serde::de::DeserializeOwned>(v: &Value) -> agent_protocols::Result<T> {
    Ok(serde_json::from_value(v.clone())?)
}

/// One differential vector case, answered by the Rust SDK.
fn verdict(kind: &str, input: &Value) -> Value {
    let s = |k: &str| input[k].as_str().unwrap_or_default().to_owned();
    let v = match kind {
        "origin" => json!(validate_origin(&s("value")).is_ok()),
        "agent_id" => json!(s("value")
            .parse::<AgentId>()
            .and_then(|id| id.public_key_bytes().map(|_| ()))
            .is_ok()),
        "strict_json" => json!(parse_strict_json(&s("text")).is_ok()),
        "type_name" => json!(validate_custom_event_type_name(&s("name")).is_ok()),
        "jwt" => {
            let ctx = RequestAuthContext {
                audience: s("audience"),
                now_secs: input["now"].as_i64().unwrap_or_default(),
                max_ttl_secs: 300,
            };
            json!(if verify_request_jwt(&s("token"), &ctx).is_ok() {
                "ok"
            } else {
                "invalid_token"
            })
        }
        "max_seen_nonce" => {
            let next = input["next"].as_u64().unwrap_or_default();
            let now = input["now"].as_i64().unwrap_or_default();
            match ClientNonceManager::with_next(next).and_then(|mut m| {
                m.observe_max_nonce_header(&s("header"), now)
                    .map(|_| m.peek())
            }) {
                Ok(n) => json!({"next": n}),
                Err(_) => json!("refused"),
            }
        }
        "pattern" => {
            let def = json!({"type": "x.y", "kind": "message", "title": "t",
                             "schema": {"type": "string", "pattern": s("pattern")}});
            json!(decode::<TypeDef>(&def)
                .and_then(|d| validate_type_def(&d))
                .is_ok())
        }
        "blank" => {
            let p = json!({"content_type": s("value"), "content": "x"});
            json!(decode::<MessageCreatePayload>(&p)
                .and_then(|p| validate_message_create_payload(&p))
                .is_err())
        }
        "pack_digest" => {
            let data = base64_url(&s("data"));
            code_of(verify_pack_digest(&data, &s("digest")))
        }
        "declaration" => code_of(
            decode::<TypeDeclaration>(&input["declaration"])
                .and_then(|d| validate_type_declaration(&d)),
        ),
        "open_roles" => {
            let vis: agent_protocols::Result<Visibility> = decode(&input["visibility"]);
            let policy: agent_protocols::Result<Option<RoomPolicy>> = decode(&input["policy"]);
            match (vis, policy) {
                (Ok(vis), Ok(policy)) => {
                    let ok = validate_room_policy(policy.as_ref()).is_ok()
                        && validate_room_visibility_policy(vis, policy.as_ref()).is_ok();
                    if ok {
                        json!({"valid": true, "effective": effective_open_roles(vis, policy.as_ref())})
                    } else {
                        json!({"valid": false, "effective": null})
                    }
                }
                _ => json!({"valid": false, "effective": null}),
            }
        }
        "profile_payload" => match decode::<ProfileUpdatePayload>(&input["payload"]) {
            Err(_) => json!("undecodable"),
            Ok(p) if p.id.as_str() != s("actor") => json!("invalid_actor"),
            Ok(p) => code_of(validate_profile_payload(&p)),
        },
        "knowledge_envelope" => code_of(validate_knowledge_envelope(&input["envelope"])),
        "knowledge_record" => code_of(validate_knowledge_record(
            &input["record"],
            input["expected"].as_str(),
        )),
        "knowledge_text_matches" => match knowledge_text_matches(&input["envelope"], &s("text")) {
            Ok(m) => json!(m),
            Err(e) => json!(e.code().unwrap_or("undecodable")),
        },
        other => return json!({"skip": other}),
    };
    json!({"ok": v})
}

fn base64_url(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap_or_default()
}

/// Decodes one line as the SDK decodes a response body: strict JSON, then
/// the typed value.
fn decode_line<T: serde::de::DeserializeOwned>(line: &str) -> agent_protocols::Result<T> {
    Ok(serde_json::from_value(parse_strict_json(line)?)?)
}

/// The --verify-archive mode: see the module documentation.
fn verify_archive_file(path: &str) -> i32 {
    let run = || -> agent_protocols::Result<Value> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SdkError::InvalidPayload(format!("read {path}: {e}")))?;
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let manifest: ArchiveManifest = decode_line(lines.next().unwrap_or_default())?;
        let records: Vec<ArchiveRecord> = lines.map(decode_line).collect::<agent_protocols::Result<_>>()?;
        let redacted = verify_archive_records(&manifest, &records)?;
        Ok(json!({"records": records.len(), "redacted": redacted}))
    };
    match run() {
        Ok(v) => {
            println!("{}", json!({"ok": v}));
            0
        }
        Err(e) => {
            println!("{}", error_value(&e));
            1
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--verify-archive" {
        std::process::exit(verify_archive_file(&args[2]));
    }
    if args.len() == 3 && args[1] == "--mail-bench" {
        std::process::exit(mail_bench::run(&args[2]));
    }
    let cfg = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sdk-connector-interop: {e}");
            std::process::exit(2);
        }
    };
    let client = match http_client(&cfg.ca) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sdk-connector-interop: {e}");
            std::process::exit(2);
        }
    };
    let mut agents = BTreeMap::new();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("sdk-connector-interop: stdin: {e}");
                std::process::exit(2);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let out = match serde_json::from_str::<Value>(&line) {
            Ok(req) => answer(&cfg, &client, &mut agents, req).await,
            Err(e) => {
                json!({"error": {"code": "bad_request", "message": format!("not JSON: {e}")}})
            }
        };
        if writeln!(stdout, "{out}")
            .and_then(|_| stdout.flush())
            .is_err()
        {
            std::process::exit(2);
        }
    }
}
