package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"apconnect/host/store"
	"apconnect/host/wake"
)

// maxHookInput bounds the hook payload read from stdin.
const maxHookInput = 1 << 20

func init() {
	register(&command{
		name:    "hook",
		summary: "answer an agent client's hook: codex-stop wakes a Codex session for pending inbox items",
		usage:   "hook codex-stop [--home DIR] [--agent NAME]",
		detail: `codex-stop is Codex's Stop hook (it runs when a turn ends). It reads the
hook's JSON payload on stdin (its session_id) and looks at the identity's
inbox, as a running apconnect mcp or serve keeps it: when a high-priority
item of the [wake] kinds is pending that it has not announced to this Codex
session before, it prints {"decision": "block", "reason": "…"}, which makes
Codex run another turn whose prompt is the reason: a pointer written by
apconnect (the item's id, what kind of item it is, its room and seq, and
"Call agent_protocols_inbox_next"), never text another agent wrote.
Otherwise it prints nothing. It exits 0 either way.

Each item is announced to a session once, and the announcement is recorded
in the identity's wake log (apconnect doctor shows it), so an agent that
chooses not to act on an item is not held in a loop. It needs no passphrase:
it reads the inbox, it signs nothing.`,
		example: `# ~/.codex/hooks.json (see examples/wake/codex):
{"hooks": {"Stop": [{"hooks": [{"type": "command",
  "command": "apconnect hook codex-stop --home /home/you/.config/apconnect --agent default"}]}]}}`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			agent := agentFlag(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 || args[0] != "codex-stop" {
					return usageError{"name the hook: codex-stop"}
				}
				// Flags may follow the hook's name.
				if err := fs.Parse(args[1:]); err != nil {
					return usageError{err.Error()}
				}
				if fs.NArg() > 0 {
					return usageError{"codex-stop takes no arguments"}
				}
				return codexStop(ctx, e, *home, *agent)
			}
		},
	})
}

// codexStop answers Codex's Stop hook for the identity.
func codexStop(ctx context.Context, e *env, home, agent string) error {
	raw, err := io.ReadAll(io.LimitReader(e.stdin, maxHookInput))
	if err != nil {
		return fmt.Errorf("reading the hook payload: %w", err)
	}
	var in wake.CodexInput
	_ = json.Unmarshal(raw, &in) // an unreadable payload is a session without an id
	cfg, err := loadConfig(home)
	if err != nil {
		return err
	}
	_, info, err := identityInfo(cfg, agent)
	if err != nil {
		return err
	}
	name, err := store.FileName(info.AgentID)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(cfg.StateDir(), "agents", name)); errors.Is(err, os.ErrNotExist) {
		return nil // no state yet: nothing is pending
	}
	st, err := store.Open(ctx, store.Options{Dir: cfg.StateDir(), AgentID: info.AgentID})
	if err != nil {
		return err
	}
	defer st.Close()
	dec, err := wake.CodexStop(ctx, st, cfg.Wake.Kinds, in, fmt.Sprintf("hook codex-stop pid %d", os.Getpid()), e.now().UnixMilli())
	if err != nil || dec == nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(dec)
}
