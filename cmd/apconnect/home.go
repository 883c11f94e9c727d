package main

import (
	"flag"
	"fmt"
	"path/filepath"

	"apconnect/host/config"
	"apconnect/host/keystore"
)

// homeFlag registers --home on fs.
func homeFlag(fs *flag.FlagSet) *string {
	return fs.String("home", "", "apconnect home directory (default $APCONNECT_HOME, else $XDG_CONFIG_HOME/apconnect)")
}

// agentFlag registers --agent on fs.
func agentFlag(fs *flag.FlagSet) *string {
	return fs.String("agent", "", "identity to use, by name (default: the config's default identity)")
}

// loadConfig resolves the home and loads its config.toml.
func loadConfig(home string) (*config.Config, error) {
	dir, err := config.ResolveHome(home)
	if err != nil {
		return nil, err
	}
	c, err := config.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%w\n(create one with `apconnect init --home %s`)", err, dir)
	}
	return c, nil
}

// identityInfo returns the identity and its key file's public information,
// without asking for a passphrase.
func identityInfo(c *config.Config, name string) (*config.Identity, *keystore.Info, error) {
	id, err := c.Identity(name)
	if err != nil {
		return nil, nil, err
	}
	info, err := keystore.ReadInfo(c.Resolve(id.KeyFile))
	if err != nil {
		return id, nil, err
	}
	return id, info, nil
}

// relTo shows p relative to base when it is inside it.
func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !filepath.IsAbs(r) && r != ".." && len(r) > 0 && r[0] != '.' {
		return r
	}
	return p
}
