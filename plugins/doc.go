// Package plugins is the home of apconnect's first-party plugins, one per
// registered type pack of Agent Discourse 1.0 (Appendix A): reactions,
// deliberation, curation, moderation and realtime. Each subdirectory is a
// Rust crate written with sdk-guest/rust exactly as a third-party plugin
// would be, built for wasm32-wasi by the SDK's script (`make build` puts
// them in bin/plugins/); each has a Go version, written with the Go guest
// SDK, in examples/plugins/<name>_go. This package holds no code of its
// own: its tests build every plugin and its Go version and run each
// validator rule, watch rule and tool of both under the real runtime
// against records shaped by the pack schemas.
package plugins
