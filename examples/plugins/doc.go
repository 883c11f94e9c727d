// Package plugins is the home of the example plugins: hello, the smallest
// useful plugin, in Go (hello), Rust (hello_rust, with sdk-guest/rust) and
// C (hello_c, with sdk-guest/c), and standup, a third-party plugin with its
// own type pack, validator, watch rule and tool; and the Go versions of the
// five first-party plugins (reactions_go, deliberation_go, curation_go,
// moderation_go, realtime_go), which plugins/ tests against the Rust
// plugins. The Go examples are their
// own Go modules built for wasip1, the others are built by the SDKs' build
// scripts (`make build` puts them all in bin/plugins/); this package holds
// no code, only the tests that build them and run them under the real
// runtime: one behavioural test for the three hello plugins, and standup's.
package plugins
