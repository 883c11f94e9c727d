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

	"apconnect/host/config"
	"apconnect/host/keystore"
)

func init() {
	register(&command{
		name:    "init",
		summary: "create a home with a new (or imported) agent key and a config",
		usage:   "init [--home DIR] [--name NAME] [--unencrypted-key] [--import FILE] [--host URL [--ca FILE]]",
		detail: `Creates the apconnect home (the config directory), an Ed25519 key for a new
agent identity and a config.toml naming it. The key file is encrypted with a
passphrase (argon2id + XChaCha20-Poly1305) taken from APCONNECT_PASSPHRASE or
asked on the terminal; --unencrypted-key writes a clearly marked plaintext key
for local development instead, and doctor warns about it every time.

When the home already has a config, init adds the new identity to it (and the
host, if it is new). It never overwrites an existing key.

--host adds an ADP host (an https origin) to the allowlist; --ca names the PEM
file of the CA that host's certificate chains to (for the local hub: its
ca.pem).`,
		example: `# A development identity that talks to a local hub:
apconnect init --home ~/.config/apconnect --unencrypted-key \
    --host https://127.0.0.1:8443 --ca ~/.local/share/apconnect-hub/ca.pem
apconnect id`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			home := homeFlag(fs)
			name := fs.String("name", "default", "name of the identity (lowercase letters, digits, - and _)")
			unencrypted := fs.Bool("unencrypted-key", false, "write the key unencrypted (local development only)")
			importFile := fs.String("import", "", "import an existing Ed25519 seed (64 hex digits or base64url) from FILE, - for stdin")
			host := fs.String("host", "", "an ADP host origin to allow, e.g. https://127.0.0.1:8443")
			ca := fs.String("ca", "", "PEM CA file for --host (replaces the system roots for that host)")
			return func(_ context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageError{"init takes no arguments"}
				}
				if *ca != "" && *host == "" {
					return usageError{"--ca needs --host"}
				}
				return runInit(e, initOptions{home: *home, name: *name, unencrypted: *unencrypted, importFile: *importFile, host: *host, ca: *ca})
			}
		},
	})
}

type initOptions struct {
	home, name, importFile, host, ca string
	unencrypted                      bool
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
		cfg, err = config.Default(dir, config.DefaultOptions{IdentityName: o.name, HostURL: o.host, HostCAFile: caFile})
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
			if err := cfg.AddHost(o.host, caFile); err != nil {
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

	fmt.Fprintf(e.stdout, "Created identity %q in %s\n", o.name, dir)
	fmt.Fprintf(e.stdout, "  agent id:  %s\n", key.AgentID())
	fmt.Fprintf(e.stdout, "  key file:  %s", keyPath)
	if o.unencrypted {
		fmt.Fprint(e.stdout, "  (UNENCRYPTED: development only)")
	}
	fmt.Fprintf(e.stdout, "\n  config:    %s\n", cfg.File())
	for _, h := range cfg.Hosts {
		fmt.Fprintf(e.stdout, "  host:      %s (%s)\n", h.URL, h.Label)
	}
	fmt.Fprint(e.stdout, "Next: `apconnect doctor")
	if o.home != "" {
		fmt.Fprintf(e.stdout, " --home %s", o.home)
	}
	fmt.Fprint(e.stdout, "` checks the setup.\n")
	return nil
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
