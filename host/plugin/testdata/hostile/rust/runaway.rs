// @attack tools that run away: one spins forever, one recurses with 4 KiB
//         frames past its 1 MiB stack.
// @host   stops the spin at its deadline (plugin_timeout) and turns the
//         stack overflow into plugin_trap (rustc links wasm modules with
//         --stack-first, so the overflow leaves the bottom of memory and
//         traps instead of overwriting globals); each time the instance is
//         discarded and the next call gets a fresh one, whose globals are
//         intact.
// @limits tool_ms=1000
// @load   ok
// @call   tool spin -> plugin_timeout "did not finish within 1s"
// @call   tool deep {"depth":1000} -> plugin_trap "out of bounds memory access"
// @call   tool deep {"depth":10} -> ok "depth 10, canary 12345"
use apconnect_plugin::{export_plugin, Plugin, Tool, ToolResult};
use std::sync::atomic::{AtomicU64, Ordering};

static CANARY: AtomicU64 = AtomicU64::new(12345);
static SPINS: AtomicU64 = AtomicU64::new(0);

/// Recurses with a 4 KiB frame the optimizer cannot drop (volatile
/// accesses; std::hint::black_box is newer than Rust 1.63).
fn deep(n: i64) -> u64 {
    let mut frame = [0u8; 4096];
    // SAFETY: in-bounds accesses of a local array.
    unsafe { std::ptr::write_volatile(&mut frame[(n as usize) % 4096], n as u8) };
    if n <= 0 {
        return unsafe { std::ptr::read_volatile(&frame[0]) } as u64;
    }
    deep(n - 1) + unsafe { std::ptr::read_volatile(&frame[(n as usize * 7) % 4096]) } as u64
}

fn plugin() -> Plugin {
    Plugin::new("runaway", "1")
        .tool(Tool::new("spin", "spins", |_| loop {
            SPINS.fetch_add(1, Ordering::Relaxed);
        }))
        .tool(Tool::new("deep", "recurses", |req| {
            let depth = req.arguments["depth"].as_i64().unwrap_or(0);
            let _ = deep(depth);
            Ok(ToolResult::text(format!("depth {}, canary {}", depth, CANARY.load(Ordering::Relaxed))))
        }))
}

export_plugin!(plugin);
