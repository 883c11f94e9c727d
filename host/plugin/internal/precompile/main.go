// Command precompile compiles plugin modules into an on-disk compilation
// cache exactly as host/plugin's Runtime compiles them, so that a test
// binary built with the race detector, where compiling a Go plugin takes
// over 15 s instead of about 1.5 s, finds them compiled. plugintest builds
// it without the race detector and runs it as
//
//	precompile -cache DIR FILE.wasm...
//
// wazero keys its disk cache by its own version as the binary's build
// information reports it, which differs between commands and test
// binaries, so plugintest sets the version this command reports (with
// -ldflags -X) to the one of the test binary it serves. Failures are
// reported on stderr and in the exit status; plugintest treats them as a
// cache miss. It is not part of apconnect.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tetratelabs/wazero"

	"apconnect/host/plugin"
)

func main() {
	dir := flag.String("cache", "", "compilation cache directory")
	flag.Parse()
	if *dir == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: precompile -cache DIR FILE.wasm...")
		os.Exit(2)
	}
	ctx := context.Background()
	// The test harness reads this directory as a plain wazero cache
	// (plugin.Options.Cache), not as apconnect's sealed cache.
	cache, err := wazero.NewCompilationCacheWithDir(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "precompile:", err)
		os.Exit(1)
	}
	rt, err := plugin.NewRuntime(ctx, plugin.Options{Cache: cache})
	if err != nil {
		fmt.Fprintln(os.Stderr, "precompile:", err)
		os.Exit(1)
	}
	status := 0
	for _, path := range flag.Args() {
		// Inspect compiles the module through the cache before anything
		// else; what it finds wrong later does not matter here.
		_, err := rt.Inspect(ctx, path, plugin.Limits{LoadTimeout: time.Minute})
		var pe *plugin.Error
		if err != nil && (!errors.As(err, &pe) || pe.Code == plugin.CodeUnreadable) {
			fmt.Fprintln(os.Stderr, "precompile:", err)
			status = 1
		}
	}
	rt.Close(ctx)
	cache.Close(ctx)
	os.Exit(status)
}
