// @attack a tool allocates 1 MiB after 1 MiB until the memory cap.
// @host   caps the instance's memory at memory_mib: the allocation fails,
//         Rust's std reports it on stderr and aborts, the call fails with
//         plugin_trap and the instance is discarded; the next call gets a
//         fresh one. (The deadline is long: only the cap may end the call.)
// @limits memory_mib=16 tool_ms=30000
// @load   ok
// @call   tool hog -> plugin_trap "unreachable"
// @call   tool fine -> ok "still here"
// @log    "memory allocation of 1048576 bytes failed"
use apconnect_plugin::{export_plugin, Plugin, Tool, ToolResult};

fn plugin() -> Plugin {
    Plugin::new("alloc_bomb", "1")
        .tool(Tool::new("hog", "allocates without end", |_| {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 1 << 20]);
                if hoard.len() > 1 << 20 {
                    return Ok(ToolResult::text("unreachable: the cap is 16 MiB"));
                }
            }
        }))
        .tool(Tool::new("fine", "answers", |_| Ok(ToolResult::text("still here"))))
}

export_plugin!(plugin);
