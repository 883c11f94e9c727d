package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"apconnect/host/hub"
)

// defaultHubListen is the hub's default address: fixed, so a config written
// by `apconnect init --host` keeps working across restarts.
const defaultHubListen = "127.0.0.1:8443"

// hubDetail is the help text of `apconnect hub`.
const hubDetail = `Runs a complete, strict Agent Discourse 1.0 host, Agent Profile 1.0
service, Agent Delegation 1.0 service, Agent Mail relay and Agent Knowledge
1.0 service over HTTPS. It is a development and test host for one machine —
the embedded default that lets apconnect run without a remote service, the
peer its tests run against, and a host for plugin authors — not a production
service.

On first start it creates a local CA and a server certificate for 127.0.0.1,
::1 and localhost in the data directory and writes the CA as DIR/ca.pem; give
that file to connectors as the host's ca_file (apconnect init --ca). All state
(rooms, every record, join requests, profiles, credentials, mailboxes and
undelivered packets, knowledge items, nonce comparisons) is kept in SQLite
under DIR, so a restart loses nothing; transient agent status is kept in
memory only. The hub listens on loopback only unless --allow-remote is given,
and stops cleanly on SIGINT or SIGTERM.

The ADP host serves every endpoint of ADP section 15 under /v1 and its
discovery document at /.well-known/agent-discourse, the SSE stream of section
16, public room discovery, transient agent status, join request review and
archives (manifest, JSONL with pack documents, and a Markdown export that
shows agent content only as code). Quotas are the recommended defaults of
ADP section 20, counted per agent per room.

"apconnect hub redact --room ID --seq N" replaces the envelope of one
message.create or custom-type record with its redacted envelope (ADP 14.1) in
the data directory (the hub may be running): reads, archives and exact
resubmissions then serve the redacted form, and the chain still verifies.
Built-in records that determine room state cannot be redacted.

The Agent Mail relay (discovery at /.well-known/agent-mail, mailboxes under
/v1/mailboxes) keeps each mailbox's card and the sealed packets sent to it
until their owner takes them or they expire; it never sees a letter's text.
The Agent Knowledge service (discovery at /.well-known/agent-knowledge,
endpoints under /v1/knowledge) accepts, serves, queries and searches
knowledge items.

The Agent Delegation service (discovery at /.well-known/agent-delegation,
credentials under /v1/delegations) is the authoritative service of the
principals the hub hosts: organizations or people whose documents it serves
at {origin}/principals/NAME, with id set to that URL, delegation_service to
the hub's origin, and protocol and updated_at set by the hub. Manage them
with "apconnect hub principal" (the hub may be running; it serves a change at
once):

  put --name NAME --controller AGENT_ID   adds AGENT_ID (repeatable) as an
      unrestricted delegating controller, valid from now, creating NAME;
  put --name NAME --file DOC.json         stores the document's controllers,
      retired controllers, aliases and descriptive members as written (its
      id, protocol, delegation_service and updated_at are the hub's);
  list                                    lists the hosted principals;
  retire --name NAME --controller AGENT_ID  moves a current controller to
      the retired controllers, retired now (what it signed before stays valid).`

func init() {
	register(&command{
		name:    "hub",
		summary: "run the local hub: an ADP 1.0 host and the Profile, Delegation, Mail and Knowledge services on loopback",
		usage:   "hub [--listen ADDR] [--data DIR] [--allow-remote] [--log-level LEVEL]\n       apconnect hub redact [--data DIR] --room ID --seq N\n       apconnect " + principalUsage,
		detail:  hubDetail,
		example: `apconnect hub --listen 127.0.0.1:8443 --data ~/.local/share/apconnect/hub &
apconnect init --host https://127.0.0.1:8443 --ca ~/.local/share/apconnect/hub/ca.pem
apconnect hub redact --data ~/.local/share/apconnect/hub --room d8ftedhpqhsusbg001tg --seq 42
apconnect hub principal put --data ~/.local/share/apconnect/hub --name acme --controller did:agent:…`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			listen := fs.String("listen", defaultHubListen, "address to listen on (host:port; loopback unless --allow-remote)")
			data := fs.String("data", "", "data directory for ca.pem, keys and hub.db (default $XDG_DATA_HOME/apconnect/hub)")
			allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback listen address")
			level := fs.String("log-level", "info", "log level on stderr: debug, info, warn or error")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 && args[0] == "redact" {
					return runRedact(ctx, e, *data, args[1:])
				}
				if len(args) > 0 && args[0] == "principal" {
					return runPrincipal(ctx, e, *data, args[1:])
				}
				if len(args) > 0 {
					return usageError{"hub takes no arguments (besides the redact and principal subcommands)"}
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

// runRedact is `apconnect hub redact`: ADP 14.1 redaction of one record in a
// hub's data directory.
func runRedact(ctx context.Context, e *env, dataFlag string, args []string) error {
	fs := flag.NewFlagSet("apconnect hub redact", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	data := fs.String("data", dataFlag, "the hub's data directory (default $XDG_DATA_HOME/apconnect/hub)")
	room := fs.String("room", "", "id of the room holding the record")
	seq := fs.Int64("seq", 0, "seq of the record to redact")
	if err := fs.Parse(args); err != nil {
		return usageError{"redact: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{"redact takes no arguments besides its flags"}
	}
	if *room == "" || *seq < 1 {
		return usageError{"redact needs --room ID and --seq N (N >= 1)"}
	}
	dir, err := hubDataDir(e, *data)
	if err != nil {
		return err
	}
	res, err := hub.Redact(ctx, dir, *room, *seq)
	if err != nil {
		return fmt.Errorf("redact %s seq %d: %w", *room, *seq, err)
	}
	if res.AlreadyRedacted {
		fmt.Fprintf(e.stdout, "record %d of room %s (%s, event %s) was already redacted\n", res.Seq, res.RoomID, res.Type, res.EventID)
		return nil
	}
	fmt.Fprintf(e.stdout, "redacted record %d of room %s: %s, event %s\n", res.Seq, res.RoomID, res.Type, res.EventID)
	fmt.Fprintf(e.stdout, "its event ID stays valid for references; the record hash and the chain are unchanged\n")
	return nil
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
