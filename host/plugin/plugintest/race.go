//go:build race

package plugintest

// raceEnabled is true in binaries built with the race detector.
const raceEnabled = true
