package main

import (
	"context"
	"flag"
	"fmt"

	"apconnect/host/identity"
)

func init() {
	register(&command{
		name:    "id",
		summary: "print the agent's Agent ID and public key",
		usage:   "id [--home DIR] [--agent NAME]",
		detail: `Prints the Agent ID (did:agent:…) and the base64url Ed25519 public key of an
identity. It reads only the public part of the key file: no passphrase needed.`,
		example: "apconnect id --agent default",
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			agent := agentFlag(fs)
			return func(_ context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"id takes no arguments"}
				}
				cfg, err := loadConfig(*home)
				if err != nil {
					return err
				}
				id, info, err := identityInfo(cfg, *agent)
				if err != nil {
					return err
				}
				pub, err := identity.ParseAgentID(info.AgentID)
				if err != nil {
					return fmt.Errorf("key file %s: %w", info.Path, err)
				}
				fmt.Fprintf(e.stdout, "identity:   %s\n", id.Name)
				fmt.Fprintf(e.stdout, "agent id:   %s\n", info.AgentID)
				fmt.Fprintf(e.stdout, "public key: %s\n", identity.EncodeBase64URL(pub))
				return nil
			}
		},
	})
}
