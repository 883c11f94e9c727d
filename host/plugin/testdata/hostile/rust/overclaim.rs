// @attack the plugin describes a validator, but the operator granted it
//         only tools.
// @host   refuses it at load with plugin_not_granted, naming the claim.
// @grants tools
// @load   plugin_not_granted "validates demo.vote" "is not granted \"validate\""
use apconnect_plugin::{export_plugin, Plugin, Tool, ToolResult};

fn plugin() -> Plugin {
    Plugin::new("overclaim", "1")
        .validator("demo.vote", |_| vec![])
        .tool(Tool::new("fine", "answers", |_| Ok(ToolResult::text("ok"))))
}

export_plugin!(plugin);
