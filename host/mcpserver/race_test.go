//go:build race

package mcpserver

// raceEnabled: the race detector slows encoding and copying a 10 MB
// message many times over, so tests that time one allow for it.
const raceEnabled = true
