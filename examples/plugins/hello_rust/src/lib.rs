//! hello_rust is examples/plugins/hello in Rust: a type pack with one
//! greeting type, a validator for it, a watch rule and a tool. It behaves
//! exactly like the Go example (the same tests run against both); only its
//! name, and so its tool's MCP name and its pack's owner, differ.

use apconnect_plugin::{export_plugin, FieldError, InboxItem, Pack, Plugin, Tool, ToolResult, TypeDef, Value};

fn plugin() -> Plugin {
    Plugin::new("hello_rust", "0.1.0")
        .pack(Pack {
            name: "hello_rust:greetings".into(),
            version: "1.0".into(),
            types: vec![TypeDef {
                event_type: "hello.greeting".into(),
                kind: "signal".into(),
                title: "Greeting".into(),
                schema: Value::parse(r#"{"type": "object", "required": ["to"], "properties": {"to": {"type": "string"}}}"#).unwrap(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .validator("hello.greeting", |req| {
            if req.payload["to"].as_str() == Some(req.actor.as_str()) {
                return vec![FieldError::new("/payload/to", "do not greet yourself")];
            }
            vec![]
        })
        .watcher("hello.greeting", |rec, w| {
            if rec.payload["to"].as_str() == Some(w.room.self_id()) {
                return Some(InboxItem { suggested_tools: vec!["wave".into()], ..InboxItem::new("Someone greeted you") });
            }
            None
        })
        .tool(Tool::new("wave", "Waves back.", |_| Ok(ToolResult::text("👋"))))
}

export_plugin!(plugin);
