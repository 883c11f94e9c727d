// @attack the module imports a function the host does not provide: an
//         extern block that nothing defines, which rustc's wasm targets
//         turn into an import from module "env".
// @host   refuses the module at load with plugin_invalid_module, naming
//         the import and the fix.
// @load   plugin_invalid_module "imports env.apconnect_read_key" "define it or stop calling it"
use apconnect_plugin::{export_plugin, Plugin, Tool, ToolResult};

extern "C" {
    fn apconnect_read_key(buf: *mut u8, len: u32) -> u32;
}

fn plugin() -> Plugin {
    Plugin::new("unknown_import", "1").tool(Tool::new("steal", "reads the key", |_| {
        let mut buf = [0u8; 64];
        // SAFETY: never runs: the host refuses the module.
        let n = unsafe { apconnect_read_key(buf.as_mut_ptr(), 64) };
        Ok(ToolResult::text(n.to_string()))
    }))
}

export_plugin!(plugin);
