package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvHome is the environment variable naming the apconnect home.
const EnvHome = "APCONNECT_HOME"

// ResolveHome returns the apconnect home as an absolute path, from the first
// of:
//
//  1. flag, the --home command-line value, when not empty;
//  2. $APCONNECT_HOME, when not empty;
//  3. $XDG_CONFIG_HOME/apconnect, when XDG_CONFIG_HOME is an absolute path
//     (the XDG specification says to ignore a relative one);
//  4. ~/.config/apconnect.
//
// A leading "~/" in flag or $APCONNECT_HOME is expanded to the user's home
// directory, since MCP clients start apconnect without a shell to do it.
// Relative values are made absolute against the working directory.
func ResolveHome(flag string) (string, error) {
	if flag != "" {
		return absHome(flag, "--home")
	}
	if v := os.Getenv(EnvHome); v != "" {
		return absHome(v, EnvHome)
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(filepath.Clean(x), "apconnect"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return "", fmt.Errorf("config: cannot find the apconnect home: no user home directory (%v); pass --home or set %s", err, EnvHome)
	}
	return filepath.Join(h, ".config", "apconnect"), nil
}

func absHome(p, source string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		h, err := os.UserHomeDir()
		if err == nil && h == "" {
			err = errors.New("no user home directory")
		}
		if err != nil {
			return "", fmt.Errorf("config: %s %q: cannot expand '~': %w", source, p, err)
		}
		p = filepath.Join(h, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/"))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("config: %s %q: %w", source, p, err)
	}
	return abs, nil
}
