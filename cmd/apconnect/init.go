package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"apconnect/host/capability"
	"apconnect/host/config"
	"apconnect/host/keystore"
)

func init() {
	register(&command{
		name:    "init",
		summary: "create a home with a new (or imported) agent key and a config",
		usage:   "init [--home DIR] [--name NAME] [--unencrypted-key] [--import FILE] [--host URL [--ca FILE] [--grant CAP]...]",
		detail: `Creates the apconnect home (the config directory), an Ed25519 key for a new
agent identity and a config.toml naming it. The key file is encrypted with a
passphrase (argon2id + XChaCha20-Poly1305) taken from APCONNECT_PASSPHRASE or
asked on the terminal; --unencrypted-key writes a clearly marked plaintext key
for local development instead, and doctor warns about it every time.

When the home already has a config, init adds the new identity to it (and the
host, if it is new). It never overwrites an existing key.

--host adds an ADP host (an https origin) to the allowlist; --ca names the PEM
file of the CA that host's certificate chains to (for the local hub: its
ca.pem). --grant limits what the agent may do on that host to the named
capabilities (repeat it, or give a comma-separated list), written as the
host's grants; without --grant the host gets every capability. The
capabilities are discourse.read, discourse.write, agent.profile.read,
agent.profile.write, mail.read, mail.write, knowledge.read, knowledge.write,
delegation.read and delegation.write; a write brings its read. They apply to
that origin only (docs/SECURITY.md, "Operator grants").`,
		example: `# A development identity that talks to a local hub:
apconnect init --home ~/.config/apconnect --unencrypted-key \
    --host https://127.0.0.1:8443 --ca ~/.local/share/apconnect-hub/ca.pem
apconnect id
# An agent that may read and post in rooms and read profiles, nothing else:
apconnect init --host https://adp.example.com \
    --grant discourse.write --grant agent.profile.read`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			name := fs.String("name", "default", "name of the identity (lowercase letters, digits, - and _)")
			unencrypted := fs.Bool("unencrypted-key", false, "write the key unencrypted (local development only)")
			importFile := fs.String("import", "", "import an existing Ed25519 seed (64 hex digits or base64url) from FILE, - for stdin")
			host := fs.String("host", "", "an ADP host origin to allow, e.g. https://127.0.0.1:8443")
			ca := fs.String("ca", "", "PEM CA file for --host (replaces the system roots for that host)")
			var grants grantFlag
			fs.Var(&grants, "grant", "a capability granted on --host (repeatable, or comma-separated); default: every capability")
			return func(_ context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"init takes no arguments"}
				}
				if *ca != "" && *host == "" {
					return usageError{"--ca needs --host"}
				}
				if grants.names != nil && *host == "" {
					return usageError{"--grant needs --host"}
				}
				if err := grants.check(); err != nil {
					return err
				}
				return runInit(e, initOptions{home: *home, name: *name, unencrypted: *unencrypted, importFile: *importFile,
					host: *host, ca: *ca, grants: grants.names})
			}
		},
	})
}

type initOptions struct {
	home, name, importFile, host, ca string
	grants                           []string // nil: every capability
	unencrypted                      bool
}

// grantFlag collects --grant values: each a capability name or a
// comma-separated list of them. names stays nil when --grant is not given.
type grantFlag struct{ names []string }

func (g *grantFlag) String() string { return strings.Join(g.names, ",") }

func (g *grantFlag) Set(v string) error {
	for _, n := range strings.Split(v, ",") {
		g.names = append(g.names, strings.TrimSpace(n))
	}
	return nil
}

// check refuses an unknown or repeated capability as a usage error naming
// it.
func (g *grantFlag) check() error {
	if g.names == nil {
		return nil
	}
	if _, err := capability.Parse(g.names); err != nil {
		return usageError{"--grant: " + err.Error()}
	}
	return nil
}

func runInit(e *env, o initOptions) error {
	dir, err := config.ResolveHome(o.home)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create home %s: %w", dir, err)
	}
	caFile := ""
	if o.ca != "" {
		if caFile, err = filepath.Abs(o.ca); err != nil {
			return err
		}
		if _, err := os.Stat(caFile); err != nil {
			return fmt.Errorf("--ca: %w", err)
		}
	}

	// An existing config gains the identity; a new home gets a fresh one.
	cfg, err := config.Load(dir)
	fresh := errors.Is(err, config.ErrNotFound)
	switch {
	case fresh:
		cfg, err = config.Default(dir, config.DefaultOptions{IdentityName: o.name, HostURL: o.host, HostCAFile: caFile, HostGrants: o.grants})
		if err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if err := cfg.AddIdentity(o.name); err != nil {
			return fmt.Errorf("%w; choose another --name", err)
		}
		if o.host != "" {
			if err := cfg.AddHostGrants(o.host, caFile, o.grants); err != nil {
				return err
			}
		}
	}
	id, err := cfg.Identity(o.name)
	if err != nil {
		return err
	}
	keyPath := cfg.Resolve(id.KeyFile)
	if _, err := os.Lstat(keyPath); err == nil {
		return fmt.Errorf("a key already exists at %s; init never overwrites a key (remove it yourself, or use another --home or --name)", keyPath)
	}

	var key *keystore.Key
	if o.importFile != "" {
		text, err := readSeedText(e, o.importFile)
		if err != nil {
			return err
		}
		if key, err = keystore.Import(text); err != nil {
			return err
		}
	} else if key, err = keystore.Generate(); err != nil {
		return err
	}
	defer key.Wipe()

	if o.unencrypted {
		err = keystore.SaveUnencrypted(keyPath, key)
	} else {
		err = keystore.Save(keyPath, key, keystore.Chain(keystore.EnvPassphrase(), keystore.TerminalPrompt()))
	}
	if err != nil {
		return err
	}
	if fresh {
		err = cfg.SaveNew()
	} else {
		err = cfg.Save()
	}
	if err != nil {
		os.Remove(keyPath) // do not leave a key that no config names
		return err
	}

	printCreated(e, o, dir, cfg, keyPath, key.AgentID())
	return nil
}

// printCreated tells what init made: the identity, its key file, the
// config and each host with its grants, and the next step.
func printCreated(e *env, o initOptions, dir string, cfg *config.Config, keyPath, agentID string) {
	fmt.Fprintf(e.stdout, "Created identity %q in %s\n", o.name, dir)
	fmt.Fprintf(e.stdout, "  agent id:  %s\n", agentID)
	fmt.Fprintf(e.stdout, "  key file:  %s", keyPath)
	if o.unencrypted {
		fmt.Fprint(e.stdout, "  (UNENCRYPTED: development only)")
	}
	fmt.Fprintf(e.stdout, "\n  config:    %s\n", cfg.File())
	for _, h := range cfg.Hosts {
		grants := "every capability"
		if h.Grants != nil {
			grants = h.GrantSet().String()
		}
		fmt.Fprintf(e.stdout, "  host:      %s (%s), grants: %s\n", h.URL, h.Label, grants)
	}
	fmt.Fprint(e.stdout, "Next: `apconnect doctor")
	if o.home != "" {
		fmt.Fprintf(e.stdout, " --home %s", o.home)
	}
	fmt.Fprint(e.stdout, "` checks the setup.\n")
}

func readSeedText(e *env, name string) (string, error) {
	var r io.Reader
	if name == "-" {
		r = e.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("--import: %s does not exist", name)
			}
			return "", fmt.Errorf("--import: %w", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return "", fmt.Errorf("--import: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
