package keystore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePassFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "passphrase")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func code(err error) Code { return CodeOf(err) }

func TestFilePassphrase(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
		code    Code
		inMsg   []string
	}{
		{name: "trailing newline trimmed", content: "s3cret\n", mode: 0o600, want: "s3cret"},
		{name: "CRLF trimmed", content: "s3cret\r\n", mode: 0o600, want: "s3cret"},
		{name: "no newline", content: "s3cret", mode: 0o400, want: "s3cret"},
		{name: "only one newline trimmed", content: "s3cret\n\n", mode: 0o600, want: "s3cret\n"},
		{name: "inner and leading spaces kept", content: " a b \n", mode: 0o600, want: " a b "},
		{name: "mode 0644 refused", content: "s3cret\n", mode: 0o644, code: CodePassphrasePermissions, inMsg: []string{"0644", "chmod 600"}},
		{name: "mode 0640 refused", content: "s3cret\n", mode: 0o640, code: CodePassphrasePermissions, inMsg: []string{"0640"}},
		{name: "mode 0602 refused", content: "s3cret\n", mode: 0o602, code: CodePassphrasePermissions},
		{name: "empty file", content: "", mode: 0o600, code: CodePassphraseEmpty},
		{name: "only a newline", content: "\n", mode: 0o600, code: CodePassphraseEmpty},
		{name: "too large", content: strings.Repeat("x", MaxPassphraseFileSize+1), mode: 0o600, code: CodePassphraseInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writePassFile(t, tc.content, tc.mode)
			got, err := FilePassphrase(path).Passphrase(PassphraseRequest{Path: "k"})
			if tc.code != "" {
				if code(err) != tc.code {
					t.Fatalf("got %v, want code %s", err, tc.code)
				}
				for _, s := range append(tc.inMsg, path) {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("error %q does not mention %q", err, s)
					}
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error leaks the passphrase: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}

	if _, err := FilePassphrase(filepath.Join(t.TempDir(), "missing")).Passphrase(PassphraseRequest{}); code(err) != CodePassphraseInvalid {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := FilePassphrase(t.TempDir()).Passphrase(PassphraseRequest{}); code(err) != CodePassphraseInvalid {
		t.Fatalf("directory: %v", err)
	}
	if _, err := FilePassphrase("").Passphrase(PassphraseRequest{}); code(err) != CodePassphraseUnavailable {
		t.Fatalf("unconfigured file: %v", err)
	}
}

func TestEnvPassphrase(t *testing.T) {
	t.Setenv(EnvVar, " with spaces\n")
	got, err := EnvPassphrase().Passphrase(PassphraseRequest{})
	if err != nil || string(got) != " with spaces\n" {
		t.Fatalf("got %q, %v (the value must be used as is)", got, err)
	}
	t.Setenv(EnvVar, "")
	if _, err := EnvPassphrase().Passphrase(PassphraseRequest{}); code(err) != CodePassphraseEmpty {
		t.Fatalf("empty variable: %v", err)
	}
	os.Unsetenv(EnvVar) // restored by t.Setenv's cleanup
	if _, err := EnvPassphrase().Passphrase(PassphraseRequest{}); code(err) != CodePassphraseUnavailable {
		t.Fatalf("unset variable: %v", err)
	}
}

// fakeTTY is a scripted terminal.
type fakeTTY struct {
	answers [][]byte
	out     bytes.Buffer
	closed  bool
}

func (f *fakeTTY) Write(b []byte) (int, error) { return f.out.Write(b) }
func (f *fakeTTY) Close() error                { f.closed = true; return nil }
func (f *fakeTTY) ReadPassword() ([]byte, error) {
	if len(f.answers) == 0 {
		return nil, errors.New("EOF")
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

func TestTerminalPrompt(t *testing.T) {
	req := PassphraseRequest{Path: "/h/keys/a.key", AgentID: "did:agent:AAAA"}
	newReq := req
	newReq.New = true
	tests := []struct {
		name    string
		req     PassphraseRequest
		answers []string
		want    string
		code    Code
		prompts int
	}{
		{name: "unlock", req: req, answers: []string{"pw"}, want: "pw", prompts: 1},
		{name: "new, confirmed", req: newReq, answers: []string{"pw", "pw"}, want: "pw", prompts: 2},
		{name: "new, mismatch", req: newReq, answers: []string{"pw", "pW"}, code: CodePassphraseMismatch, prompts: 2},
		{name: "new, empty", req: newReq, answers: []string{""}, code: CodePassphraseEmpty, prompts: 1},
		{name: "unlock, empty", req: req, answers: []string{""}, code: CodePassphraseEmpty, prompts: 1},
		{name: "read failure", req: req, answers: nil, code: CodePassphraseUnavailable, prompts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tty := &fakeTTY{}
			for _, a := range tc.answers {
				tty.answers = append(tty.answers, []byte(a))
			}
			p := &prompter{open: func() (terminal, error) { return tty, nil }}
			got, err := p.Passphrase(tc.req)
			if tc.code != "" {
				if code(err) != tc.code {
					t.Fatalf("got %q, %v; want code %s", got, err, tc.code)
				}
			} else if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			out := tty.out.String()
			if n := strings.Count(out, ": "); n < tc.prompts {
				t.Fatalf("%d prompts in %q, want %d", n, out, tc.prompts)
			}
			if !strings.Contains(out, tc.req.AgentID) || !strings.Contains(out, tc.req.Path) {
				t.Fatalf("prompt %q does not name the key", out)
			}
			if strings.Contains(out, "pw") {
				t.Fatalf("passphrase echoed to the terminal: %q", out)
			}
			if !tty.closed {
				t.Fatal("terminal not closed")
			}
		})
	}
	noTTY := &prompter{open: func() (terminal, error) { return nil, errors.New("no such device") }}
	if _, err := noTTY.Passphrase(req); code(err) != CodePassphraseUnavailable {
		t.Fatalf("no terminal: %v", err)
	}
}

func TestChainPrecedence(t *testing.T) {
	unavailable := PassphraseFunc(func(r PassphraseRequest) ([]byte, error) {
		return nil, newErr(CodePassphraseUnavailable, r.Path, "nothing here", nil)
	})
	called := false
	spy := PassphraseFunc(func(PassphraseRequest) ([]byte, error) { called = true; return []byte("late"), nil })

	got, err := Chain(unavailable, StaticPassphrase([]byte("first")), spy).Passphrase(PassphraseRequest{})
	if err != nil || string(got) != "first" || called {
		t.Fatalf("got %q, %v, later source called: %v", got, err, called)
	}

	// A configured but broken source stops the chain.
	bad := writePassFile(t, "pw\n", 0o644)
	_, err = Chain(unavailable, FilePassphrase(bad), spy).Passphrase(PassphraseRequest{})
	if code(err) != CodePassphrasePermissions || called {
		t.Fatalf("got %v (later source called: %v), want the permission error", err, called)
	}

	// Nothing available: one error that says how to provide a passphrase.
	_, err = Chain(unavailable, FilePassphrase("")).Passphrase(PassphraseRequest{Path: "/k"})
	if code(err) != CodePassphraseUnavailable {
		t.Fatalf("got %v", err)
	}
	for _, s := range []string{EnvVar, "passphrase_file", "terminal", "/k", "nothing here", "no passphrase_file is configured"} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not mention %q", err, s)
		}
	}

	// Non-keystore errors from a custom source stop the chain too.
	_, err = Chain(PassphraseFunc(func(PassphraseRequest) ([]byte, error) { return nil, errors.New("boom") }), spy).Passphrase(PassphraseRequest{})
	if err == nil || called {
		t.Fatalf("got %v", err)
	}
}

func TestDefaultPassphraseSourceOrder(t *testing.T) {
	file := writePassFile(t, "from-file\n", 0o600)

	t.Setenv(EnvVar, "from-env")
	got, err := DefaultPassphraseSource(file).Passphrase(PassphraseRequest{})
	if err != nil || string(got) != "from-env" {
		t.Fatalf("env must win: %q, %v", got, err)
	}

	os.Unsetenv(EnvVar)
	got, err = DefaultPassphraseSource(file).Passphrase(PassphraseRequest{})
	if err != nil || string(got) != "from-file" {
		t.Fatalf("file must come second: %q, %v", got, err)
	}

	t.Setenv(EnvVar, "")
	if _, err := DefaultPassphraseSource(file).Passphrase(PassphraseRequest{}); code(err) != CodePassphraseEmpty {
		t.Fatalf("an empty variable must not fall through: %v", err)
	}
}

func TestStaticPassphraseReturnsCopies(t *testing.T) {
	src := StaticPassphrase([]byte("pw"))
	a, _ := src.Passphrase(PassphraseRequest{})
	wipe(a)
	b, _ := src.Passphrase(PassphraseRequest{})
	if string(b) != "pw" {
		t.Fatalf("wiping one result changed the source: %q", b)
	}
}
