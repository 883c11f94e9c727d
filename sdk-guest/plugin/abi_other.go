//go:build !wasip1

package plugin

import (
	"fmt"
	"os"
)

// Outside WebAssembly (unit tests of plugin code) logs go to stderr.
func writeLog(level Level, msg string) {
	fmt.Fprintf(os.Stderr, "plugin %s: %s\n", level, msg)
}
