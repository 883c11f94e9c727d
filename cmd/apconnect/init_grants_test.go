package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"apconnect/host/config"
)

// init --grant writes the new host's grants as given (repeated or
// comma-separated); without --grant it writes none, and the host gets every
// capability; a bad name is a usage error naming it and writes nothing.
func TestInitGrants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		args    []string
		code    int
		written []string // the host's grants in the file; nil: no grants key
		errPart string
	}{
		{name: "no --grant", args: nil, written: nil},
		{name: "repeated", args: []string{"--grant", "discourse.write", "--grant", "agent.profile.read"}, written: []string{"discourse.write", "agent.profile.read"}},
		{name: "comma-separated", args: []string{"--grant", "mail.read, mail.write,knowledge.read"}, written: []string{"mail.read", "mail.write", "knowledge.read"}},
		{name: "both forms", args: []string{"--grant", "delegation.read", "--grant=delegation.write,discourse.read"}, written: []string{"delegation.read", "delegation.write", "discourse.read"}},
		{name: "unknown", args: []string{"--grant", "discourse.read", "--grant", "rooms.write"}, code: 2, errPart: `--grant: unknown capability "rooms.write"`},
		{name: "unknown in a list", args: []string{"--grant", "mail.read,profile.write"}, code: 2, errPart: `unknown capability "profile.write" (did you mean "agent.profile.write"?)`},
		{name: "repeated name", args: []string{"--grant", "mail.read", "--grant", "mail.read"}, code: 2, errPart: `capability "mail.read" is listed twice`},
		{name: "empty", args: []string{"--grant", ""}, code: 2, errPart: `unknown capability ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			args := append([]string{"init", "--home", home, "--unencrypted-key", "--host", "https://adp.example.com"}, tc.args...)
			code, out, errOut := runCLI(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, out, errOut)
			}
			if tc.code != 0 {
				if !strings.Contains(errOut, tc.errPart) {
					t.Fatalf("stderr %q lacks %q", errOut, tc.errPart)
				}
				if _, err := os.Stat(filepath.Join(home, config.FileName)); !os.IsNotExist(err) {
					t.Fatalf("a refused init wrote a config: %v", err)
				}
				return
			}
			cfg, err := config.Load(home)
			if err != nil {
				t.Fatal(err)
			}
			h := cfg.Hosts[0]
			if (h.Grants == nil) != (tc.written == nil) || !slices.Equal(h.Grants, tc.written) {
				t.Fatalf("grants written %#v, want %#v", h.Grants, tc.written)
			}
			data, _ := os.ReadFile(cfg.File())
			if has := strings.Contains(string(data), "\ngrants = "); has != (tc.written != nil) {
				t.Fatalf("config.toml has a grants line: %v\n%s", has, data)
			}
			want := "every capability"
			if tc.written != nil {
				want = h.GrantSet().String()
			}
			if !strings.Contains(out, "grants: "+want+"\n") {
				t.Fatalf("init does not print the grants %q:\n%s", want, out)
			}
		})
	}
}

// --grant needs --host; on an existing home it grants the new host and
// refuses to change an existing host's grants.
func TestInitGrantsOnExistingHome(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key", "--grant", "mail.read"); code != 2 || !strings.Contains(errOut, "--grant needs --host") {
		t.Fatalf("--grant without --host: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "init", "--home", home, "--unencrypted-key", "--host", "https://a.example", "--grant", "mail.read"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := runCLI(t, "init", "--home", home, "--name", "two", "--unencrypted-key", "--host", "https://b.example", "--grant", "knowledge.write"); code != 0 {
		t.Fatal(errOut)
	}
	code, _, errOut := runCLI(t, "init", "--home", home, "--name", "three", "--unencrypted-key", "--host", "https://a.example", "--grant", "mail.write")
	if code != 1 || !strings.Contains(errOut, "already configured and grants mail.read, not mail.read, mail.write") {
		t.Fatalf("changing an existing host's grants: %d %s", code, errOut)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Identities) != 2 || len(cfg.Hosts) != 2 {
		t.Fatalf("identities %d hosts %d", len(cfg.Identities), len(cfg.Hosts))
	}
	if _, err := os.Stat(filepath.Join(home, "keys", "three.key")); !os.IsNotExist(err) {
		t.Fatalf("the refused init left a key: %v", err)
	}
	for url, want := range map[string][]string{"https://a.example": {"mail.read"}, "https://b.example": {"knowledge.read", "knowledge.write"}} {
		if got, ok := cfg.Grants(nil, url); !ok || !slices.Equal(got.Names(), want) {
			t.Fatalf("%s grants %v, want %v", url, got.Names(), want)
		}
	}
}
