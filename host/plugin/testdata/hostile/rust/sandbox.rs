// @attack a tool looks for a way out through WASI with Rust's std: it
//         reads /etc/passwd and the current directory, lists the
//         environment and the arguments, and reads the wall clock.
// @host   gives it nothing: every file operation fails, there are no
//         variables or arguments, and the clock is the fake one (from
//         2022-01-01, 1 ms per reading); the tool's answer says so.
// @load   ok
// @call   tool probe -> ok "passwd: denied" "cwd: denied" "env: 0" "args: 0" "year: 2022"
use apconnect_plugin::{export_plugin, Plugin, Tool, ToolResult};
use std::time::{SystemTime, UNIX_EPOCH};

fn probe() -> String {
    let passwd = match std::fs::read_to_string("/etc/passwd") {
        Ok(s) => format!("read {} bytes", s.len()),
        Err(_) => "denied".to_string(),
    };
    let cwd = match std::fs::read_dir(".") {
        Ok(d) => format!("{} entries", d.count()),
        Err(_) => "denied".to_string(),
    };
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let year = if (1_640_995_200..1_672_531_200).contains(&secs) { "2022".to_string() } else { format!("not 2022 ({})", secs) };
    format!(
        "passwd: {}; cwd: {}; env: {}; args: {}; year: {}",
        passwd,
        cwd,
        std::env::vars_os().count(),
        std::env::args_os().count(),
        year
    )
}

fn plugin() -> Plugin {
    Plugin::new("sandbox", "1").tool(Tool::new("probe", "looks around", |_| Ok(ToolResult::text(probe()))))
}

export_plugin!(plugin);
