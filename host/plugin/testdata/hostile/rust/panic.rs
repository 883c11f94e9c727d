// @attack a tool panics (an index out of range) in the middle of a call;
//         Rust on wasm32-wasi cannot unwind, so the instance aborts.
// @host   reports plugin_trap quoting the SDK's "panic:" line from the
//         guest's stderr, discards the instance and answers the next call
//         from a fresh one.
// @load   ok
// @call   tool boom -> plugin_trap "guest stderr: panic: index out of bounds"
// @call   tool fine -> ok "still here"
// @log    "panic: index out of bounds: the len is 3 but the index is 7"
use apconnect_plugin::{export_plugin, Plugin, Tool, ToolResult};

fn plugin() -> Plugin {
    Plugin::new("panic", "1")
        .tool(Tool::new("boom", "panics", |req| {
            let v = vec![1, 2, 3];
            let i = req.arguments["i"].as_i64().unwrap_or(7) as usize;
            Ok(ToolResult::text(v[i].to_string()))
        }))
        .tool(Tool::new("fine", "answers", |_| Ok(ToolResult::text("still here"))))
}

export_plugin!(plugin);
