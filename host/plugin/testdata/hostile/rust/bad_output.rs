// @attack tools answer with what the host must not pass on: 300 KB of
//         text (over the 256 KiB output cap), HTML that runs script, and a
//         JWT-shaped string. The SDK's encoder only writes valid JSON, so
//         these reach the host as well-formed envelopes.
// @host   refuses the first before copying it (plugin_output_too_large)
//         and the others by its content policy (plugin_refused_content);
//         the same text defused with the SDK's text::clean passes.
// @load   ok
// @call   tool huge -> plugin_output_too_large "exceeds the cap"
// @call   tool script -> plugin_refused_content "script"
// @call   tool jwt -> plugin_refused_content "JWT"
// @call   tool cleaned -> ok "‹script›alert(1)‹/script›"
use apconnect_plugin::text::clean;
use apconnect_plugin::{export_plugin, Plugin, Tool, ToolResult};

const SCRIPT: &str = "<script>alert(1)</script>";

fn plugin() -> Plugin {
    Plugin::new("bad_output", "1")
        .tool(Tool::new("huge", "too much", |_| Ok(ToolResult::text("x".repeat(300_000)))))
        .tool(Tool::new("script", "active content", |_| Ok(ToolResult::text(SCRIPT))))
        .tool(Tool::new("jwt", "a credential", |_| {
            Ok(ToolResult::text("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"))
        }))
        .tool(Tool::new("cleaned", "defused", |_| Ok(ToolResult::text(clean(SCRIPT, 64)))))
}

export_plugin!(plugin);
