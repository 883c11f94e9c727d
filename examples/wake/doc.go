// Package wake holds the example configurations for waking an agent
// (README.md): an apconnect home whose [wake] table turns on Claude Code
// channel mode and runs resume commands, the Claude Code and Codex client
// files, the resume wrappers, and a systemd user unit and a launchd agent
// that keep `apconnect serve` running. It holds no code, only the test
// that loads every file as its program would (config.Load for the
// apconnect config) and runs the wrappers.
package wake
