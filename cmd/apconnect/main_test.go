package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// runCLI runs apconnect in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, now: time.Now}
	code := run(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

func TestEveryCommandHasHelpWithExample(t *testing.T) {
	t.Parallel()
	if len(commands) == 0 {
		t.Fatal("no commands registered")
	}
	for name := range commands {
		code, out, _ := runCLI(t, name, "--help")
		if code != 0 {
			t.Errorf("%s --help exited %d", name, code)
		}
		if !strings.Contains(out, "usage: apconnect "+name) || !strings.Contains(out, "Example:") {
			t.Errorf("%s --help lacks usage or example:\n%s", name, out)
		}
	}
}

func TestUnknownCommandAndFlag(t *testing.T) {
	t.Parallel()
	if code, _, errOut := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "id", "--no-such-flag"); code != 2 || !strings.Contains(errOut, "usage: apconnect id") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "version")
	if code != 0 {
		t.Fatalf("code %d, out %q", code, out)
	}
	for _, p := range []string{"agent-identity/1.0", "agent-profile/1.0", "agent-discourse/1.0", "agent-mail/1.0", "agent-knowledge/1.0", "agent-delegation/1.0"} {
		if !strings.Contains(out, "\n  "+p+"\n") {
			t.Errorf("version does not list %s: %q", p, out)
		}
	}
}
