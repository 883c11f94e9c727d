package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"apconnect/host/proto/adp"
	"apconnect/host/proto/delegation"
	"apconnect/host/proto/knowledge"
	"apconnect/host/proto/mail"
	"apconnect/host/proto/profile"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// protocols lists the protocol versions this build implements: Agent
// Identity and the protocol of each connector module (and hub service).
var protocols = []string{"agent-identity/1.0", profile.Protocol, adp.Protocol, mail.Protocol, knowledge.Protocol, delegation.Protocol}

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
