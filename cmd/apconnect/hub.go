package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"apconnect/host/hub"
)

// defaultHubListen is the hub's default address: fixed, so a config written
// by `apconnect init --host` keeps working across restarts.
const defaultHubListen = "127.0.0.1:8443"

func init() {
	register(&command{
		name:    "hub",
		summary: "run the local hub: an ADP 1.0 host and Agent Profile service on loopback",
		usage:   "hub [--listen ADDR] [--data DIR] [--allow-remote] [--log-level LEVEL]",
		detail: `Runs a complete, strict Agent Discourse 1.0 host and Agent Profile 1.0 service
over HTTPS. It is a development and test host for one machine — the embedded
default that lets apconnect run without a remote service, and the peer its
tests run against — not a production service.

On first start it creates a local CA and a server certificate for 127.0.0.1,
::1 and localhost in the data directory and writes the CA as DIR/ca.pem; give
that file to connectors as the host's ca_file (apconnect init --ca). All state
is kept in SQLite under DIR, so a restart loses nothing. The hub listens on
loopback only unless --allow-remote is given, and stops cleanly on SIGINT or
SIGTERM.`,
		example: `apconnect hub --listen 127.0.0.1:8443 --data ~/.local/share/apconnect/hub &
apconnect init --host https://127.0.0.1:8443 --ca ~/.local/share/apconnect/hub/ca.pem`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			listen := fs.String("listen", defaultHubListen, "address to listen on (host:port; loopback unless --allow-remote)")
			data := fs.String("data", "", "data directory for ca.pem, keys and hub.db (default $XDG_DATA_HOME/apconnect/hub)")
			allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback listen address")
			level := fs.String("log-level", "info", "log level on stderr: debug, info, warn or error")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"hub takes no arguments"}
				}
				dir, err := hubDataDir(e, *data)
				if err != nil {
					return err
				}
				var lv slog.Level
				if err := lv.UnmarshalText([]byte(*level)); err != nil {
					return usageError{fmt.Sprintf("--log-level %q: use debug, info, warn or error", *level)}
				}
				h, err := hub.New(hub.Options{
					Listen: *listen, DataDir: dir, AllowRemote: *allowRemote,
					Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: lv})),
				})
				if err != nil {
					return err
				}
				defer h.Close()
				fmt.Fprintf(e.stdout, "apconnect hub serving %s\n", h.Origin())
				fmt.Fprintf(e.stdout, "  CA certificate: %s\n", h.CAFile())
				fmt.Fprintf(e.stdout, "  data:           %s\n", dir)
				fmt.Fprintf(e.stdout, "Connect an agent: apconnect init --host %s --ca %s\n", h.Origin(), h.CAFile())
				return h.Serve(ctx)
			}
		},
	})
}

// hubDataDir resolves --data, defaulting under $XDG_DATA_HOME.
func hubDataDir(e *env, flagValue string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	base := e.getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no --data given and no home directory: %w", err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "apconnect", "hub"), nil
}
