//go:build race

package e2e

// raceEnabled builds the binary under test with the race detector too, when
// the tests themselves run with it: a data race in an `apconnect mcp`
// process then fails the test (the process exits with status 66).
const raceEnabled = true
