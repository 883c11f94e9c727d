package keystore

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/term"

	"apconnect/host/internal/fileowner"
)

// EnvVar is the environment variable EnvPassphrase reads.
const EnvVar = "APCONNECT_PASSPHRASE"

// MaxPassphraseFileSize bounds what FilePassphrase reads.
const MaxPassphraseFileSize = 4096

// PassphraseSource supplies the passphrase of an encrypted key file.
//
// A source that is not configured or cannot be used here (no environment
// variable, no passphrase file, no terminal) returns an error with
// CodePassphraseUnavailable, so Chain moves on to the next source. Any other
// error (an empty value, a passphrase file with wrong permissions, a
// mismatched confirmation) stops the chain: a configured source that is
// broken must be fixed, not silently skipped.
//
// The caller wipes the returned slice after use, so a source returns a fresh
// copy each time.
type PassphraseSource interface {
	Passphrase(req PassphraseRequest) ([]byte, error)
}

// PassphraseFunc adapts a function to PassphraseSource.
type PassphraseFunc func(req PassphraseRequest) ([]byte, error)

// Passphrase calls f.
func (f PassphraseFunc) Passphrase(req PassphraseRequest) ([]byte, error) { return f(req) }

// StaticPassphrase returns a source that always yields a copy of p. For
// tests and for callers that obtained the passphrase themselves.
func StaticPassphrase(p []byte) PassphraseSource {
	own := bytes.Clone(p)
	return PassphraseFunc(func(PassphraseRequest) ([]byte, error) {
		return bytes.Clone(own), nil
	})
}

// DefaultPassphraseSource is the order apconnect looks for a passphrase:
//
//  1. the environment variable APCONNECT_PASSPHRASE, when it is set;
//  2. passphraseFile (an identity's passphrase_file from config.toml), when
//     it is not empty;
//  3. an interactive prompt on the controlling terminal (/dev/tty), which
//     asks twice when a new key is created.
//
// When none applies (no variable, no file, no terminal, as under an MCP
// client) the error says how to provide one.
func DefaultPassphraseSource(passphraseFile string) PassphraseSource {
	return Chain(EnvPassphrase(), FilePassphrase(passphraseFile), TerminalPrompt())
}

// Chain tries srcs in order and returns the first passphrase. A source
// failing with CodePassphraseUnavailable is skipped; any other error is
// returned at once. When every source is unavailable the error lists why and
// how to provide a passphrase.
func Chain(srcs ...PassphraseSource) PassphraseSource {
	return PassphraseFunc(func(req PassphraseRequest) ([]byte, error) {
		var why []string
		for _, s := range srcs {
			p, err := s.Passphrase(req)
			if err == nil {
				return p, nil
			}
			var ke *Error
			if !errors.As(err, &ke) || ke.Code != CodePassphraseUnavailable {
				return nil, err
			}
			why = append(why, ke.Msg)
		}
		return nil, newErr(CodePassphraseUnavailable, req.Path,
			"no passphrase available ("+strings.Join(why, "; ")+"): set "+EnvVar+
				", set passphrase_file (mode 0600) for this identity in config.toml, or run the command in a terminal to be prompted", nil)
	})
}

// EnvPassphrase reads APCONNECT_PASSPHRASE. Unset: unavailable. Set but
// empty: CodePassphraseEmpty (an explicit empty value is a mistake, not a
// reason to fall through to another source). The value is used as is,
// without trimming.
func EnvPassphrase() PassphraseSource {
	return PassphraseFunc(func(req PassphraseRequest) ([]byte, error) {
		v, ok := os.LookupEnv(EnvVar)
		if !ok {
			return nil, newErr(CodePassphraseUnavailable, req.Path, EnvVar+" is not set", nil)
		}
		if v == "" {
			return nil, newErr(CodePassphraseEmpty, req.Path, EnvVar+" is set but empty; an encrypted key needs a non-empty passphrase", nil)
		}
		return []byte(v), nil
	})
}

// FilePassphrase reads the passphrase from the file at path. An empty path
// means "not configured" (unavailable). The file must be a regular file with
// no group or other permission bits (mode 0600 or stricter), at most
// MaxPassphraseFileSize bytes; one trailing "\n" or "\r\n" is removed, and
// the rest must not be empty.
func FilePassphrase(path string) PassphraseSource {
	return PassphraseFunc(func(req PassphraseRequest) ([]byte, error) {
		if path == "" {
			return nil, newErr(CodePassphraseUnavailable, req.Path, "no passphrase_file is configured", nil)
		}
		return readPassphraseFile(path)
	})
}

func readPassphraseFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, newErr(CodePassphraseInvalid, path, "passphrase file not found", nil)
		}
		return nil, newErr(CodePassphraseInvalid, path, "cannot open the passphrase file", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, newErr(CodePassphraseInvalid, path, "cannot stat the passphrase file", err)
	}
	if !st.Mode().IsRegular() {
		return nil, newErr(CodePassphraseInvalid, path, "passphrase file is not a regular file", nil)
	}
	if err := checkPrivateMode(st.Mode()); err != nil {
		return nil, newErr(CodePassphrasePermissions, path, fmt.Sprintf("passphrase file permissions %04o are too open: it must be readable by its owner only; fix with: chmod 600 %s", st.Mode().Perm(), path), nil)
	}
	if err := fileowner.Check(st); err != nil {
		return nil, newErr(CodePassphraseOwner, path, fmt.Sprintf("the passphrase file is %v; it must belong to the user running apconnect", err), nil)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPassphraseFileSize+1))
	if err != nil {
		wipe(data)
		return nil, newErr(CodePassphraseInvalid, path, "cannot read the passphrase file", err)
	}
	if len(data) > MaxPassphraseFileSize {
		wipe(data)
		return nil, newErr(CodePassphraseInvalid, path, fmt.Sprintf("passphrase file is larger than %d bytes", MaxPassphraseFileSize), nil)
	}
	p := data
	if bytes.HasSuffix(p, []byte("\r\n")) {
		p = p[:len(p)-2]
	} else if bytes.HasSuffix(p, []byte("\n")) {
		p = p[:len(p)-1]
	}
	if len(p) == 0 {
		return nil, newErr(CodePassphraseEmpty, path, "passphrase file is empty", nil)
	}
	return p, nil
}

// TTYPath is the controlling terminal TerminalPrompt opens.
const TTYPath = "/dev/tty"

// TerminalPrompt asks for the passphrase on the controlling terminal
// (/dev/tty, not stdin or stdout, which may carry the MCP stream), with echo
// off. When a new key is created it asks twice and fails with
// CodePassphraseMismatch if the two differ. Without a terminal it is
// unavailable.
func TerminalPrompt() PassphraseSource {
	return &prompter{open: openTTY}
}

// terminal is what prompter needs from a terminal; tests supply a fake.
type terminal interface {
	io.Writer
	ReadPassword() ([]byte, error)
	Close() error
}

type prompter struct {
	open func() (terminal, error)
}

// Passphrase implements PassphraseSource.
func (p *prompter) Passphrase(req PassphraseRequest) ([]byte, error) {
	t, err := p.open()
	if err != nil {
		return nil, newErr(CodePassphraseUnavailable, req.Path, "no terminal to prompt on", err)
	}
	defer t.Close()
	read := func(prompt string) ([]byte, error) {
		if _, err := io.WriteString(t, prompt); err != nil {
			return nil, newErr(CodePassphraseUnavailable, req.Path, "cannot write the prompt to the terminal", err)
		}
		b, err := t.ReadPassword()
		io.WriteString(t, "\n")
		if err != nil {
			return nil, newErr(CodePassphraseUnavailable, req.Path, "cannot read the passphrase from the terminal", err)
		}
		if len(b) == 0 {
			return nil, newErr(CodePassphraseEmpty, req.Path, "empty passphrase refused for an encrypted key", nil)
		}
		return b, nil
	}
	if !req.New {
		return read(fmt.Sprintf("Passphrase for %s (%s): ", req.AgentID, req.Path))
	}
	first, err := read(fmt.Sprintf("New passphrase for %s (%s): ", req.AgentID, req.Path))
	if err != nil {
		return nil, err
	}
	second, err := read("Repeat the passphrase: ")
	if err != nil {
		wipe(first)
		return nil, err
	}
	defer wipe(second)
	if subtle.ConstantTimeCompare(first, second) != 1 {
		wipe(first)
		return nil, newErr(CodePassphraseMismatch, req.Path, "the two passphrases differ", nil)
	}
	return first, nil
}

// ttyFile is the real terminal.
type ttyFile struct{ f *os.File }

func openTTY() (terminal, error) {
	f, err := os.OpenFile(TTYPath, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if !term.IsTerminal(int(f.Fd())) {
		f.Close()
		return nil, fmt.Errorf("%s is not a terminal", TTYPath)
	}
	return ttyFile{f}, nil
}

// Write writes a prompt to the terminal.
func (t ttyFile) Write(b []byte) (int, error) { return t.f.Write(b) }

// ReadPassword reads a line with echo off.
func (t ttyFile) ReadPassword() ([]byte, error) { return term.ReadPassword(int(t.f.Fd())) }

// Close closes the terminal.
func (t ttyFile) Close() error { return t.f.Close() }
