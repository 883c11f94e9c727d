package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Protocols lists the protocol versions this build implements.
var protocols = []string{"agent-identity/1.0", "agent-profile/1.0", "agent-discourse/1.0"}

func init() {
	register(&command{
		name:    "version",
		summary: "print the version and the protocols this build speaks",
		usage:   "version",
		detail:  "Prints the apconnect version, the Go toolchain it was built with, and the Agent Protocols versions it implements.",
		example: "apconnect version",
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			return func(_ context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"version takes no arguments"}
				}
				v := version
				if v == "dev" {
					if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
						v = bi.Main.Version
					}
				}
				fmt.Fprintf(e.stdout, "apconnect %s (%s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
				for _, p := range protocols {
					fmt.Fprintf(e.stdout, "  %s\n", p)
				}
				return nil
			}
		},
	})
}
