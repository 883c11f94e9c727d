// Package plugins is the home of apconnect's first-party plugins, one per
// registered type pack of Agent Discourse 1.0 (Appendix A): reactions,
// deliberation, curation, moderation and realtime. Each subdirectory is its
// own Go module, written with apconnect/sdk-guest exactly as a third-party
// plugin would be and built for wasip1 (`make build` puts them in
// bin/plugins/). This package holds no code of its own: its tests build
// every plugin and run each validator rule, watch rule and tool under the
// real runtime against records shaped by the pack schemas.
package plugins
