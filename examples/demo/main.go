// Command demo drives the two-agent story of `make demo`: it starts two
// real `apconnect mcp` processes (one per identity of the home), talks to
// each over stdio with the go-sdk's MCP client — exactly as Claude Code,
// Cursor or Codex would — runs the scenario of package scenario (a
// delegation, a discussion, a letter and its reply, a published
// conclusion), prints its transcript, and verifies the room's archive with
// `apconnect verify-archive`.
//
//	go run ./examples/demo -bin bin/apconnect -home DIR -host https://127.0.0.1:PORT -ca HUB/ca.pem \
//	    -principal https://127.0.0.1:PORT/principals/alice-org
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/examples/demo/scenario"
)

func main() {
	bin := flag.String("bin", "bin/apconnect", "the apconnect binary")
	home := flag.String("home", "", "the apconnect home holding the identities alice and bob")
	host := flag.String("host", "", "the ADP host origin (the local hub)")
	ca := flag.String("ca", "", "the hub's ca.pem, for verify-archive")
	logs := flag.String("logs", "", "directory for the mcp processes' stderr (default: the home)")
	principal := flag.String("principal", "", "a principal the host serves whose controller is alice (default: HOST/principals/alice-org)")
	flag.Parse()
	if *home == "" || *host == "" || *ca == "" {
		fmt.Fprintln(os.Stderr, "usage: demo -bin BIN -home DIR -host ORIGIN -ca FILE [-principal URL]")
		os.Exit(2)
	}
	if *principal == "" {
		*principal = *host + "/principals/alice-org"
	}
	if *logs == "" {
		*logs = *home
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *home, *host, *ca, *principal, *logs); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// connect starts `apconnect mcp` for one identity and connects to it.
func connect(ctx context.Context, bin, home, agent, logs string) (*mcp.ClientSession, error) {
	cmd := exec.Command(bin, "mcp", "--home", home, "--agent", agent)
	logFile, err := os.Create(filepath.Join(logs, agent+".mcp.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logFile // stdout is the MCP stream; logs go to stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "apconnect-demo-" + agent, Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start apconnect mcp --agent %s: %w", agent, err)
	}
	return cs, nil
}

func run(ctx context.Context, bin, home, host, ca, principal, logs string) error {
	alice, err := connect(ctx, bin, home, "alice", logs)
	if err != nil {
		return err
	}
	defer alice.Close()
	bob, err := connect(ctx, bin, home, "bob", logs)
	if err != nil {
		return err
	}
	defer bob.Close()
	fmt.Printf("alice and bob each run `%s mcp --agent NAME` (MCP %s over stdio).\n", filepath.Base(bin), alice.InitializeResult().ProtocolVersion)

	start := time.Now()
	res, err := scenario.Run(ctx, &scenario.Scenario{
		Host:      host,
		Principal: principal,
		Alice:     &scenario.Agent{Name: "alice", Session: alice},
		Bob:       &scenario.Agent{Name: "bob", Session: bob},
		Out:       os.Stdout,
	})
	if err != nil {
		return err
	}
	fmt.Printf("\n%d tool calls in %.1f s; room %s ended with %d records; its conclusion is knowledge item %s (seq %d).\n",
		res.Calls, time.Since(start).Seconds(), res.RoomID, res.Records, res.KnowledgeID, res.KnowledgeSeq)

	fmt.Printf("\n== Verifying the room's archive: %s verify-archive %s\n", filepath.Base(bin), res.ArchiveURL)
	cmd := exec.CommandContext(ctx, bin, "verify-archive", "--ca", ca, res.ArchiveURL)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("verify-archive: %w", err)
	}
	return nil
}
