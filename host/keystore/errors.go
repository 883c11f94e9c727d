package keystore

import (
	"errors"
	"strings"
)

// Code is the stable, machine-readable kind of a keystore error. Callers and
// tests match on codes; messages may be reworded.
type Code string

// Stable error codes.
const (
	// CodeNotFound: the key file does not exist.
	CodeNotFound Code = "key_not_found"
	// CodePermissions: the key file (or a passphrase file) is readable or
	// writable by group or others, or is not a regular file.
	CodePermissions Code = "key_permissions"
	// CodeOwner: the key file belongs to another user (its mode may be
	// 0600, but its owner can read and replace it).
	CodeOwner Code = "key_owner"
	// CodeCorrupt: the key file is truncated, not JSON, has missing, extra
	// or malformed members, or its seed does not match its agent_id.
	CodeCorrupt Code = "key_corrupt"
	// CodeWrongPassphrase: authenticated decryption failed. With an AEAD a
	// wrong passphrase and a modified ciphertext are indistinguishable, so
	// the message says "wrong passphrase or corrupted key file".
	CodeWrongPassphrase Code = "key_wrong_passphrase"
	// CodeUnsupported: an unknown version, kind, KDF or cipher name.
	CodeUnsupported Code = "key_unsupported"
	// CodeKDFParams: KDF parameters outside the accepted bounds (a hostile
	// or broken file asking for too much memory or time).
	CodeKDFParams Code = "key_kdf_params"
	// CodeExists: saving would overwrite an existing file.
	CodeExists Code = "key_exists"
	// CodeInvalidSeed: an imported seed is not 32 bytes of hex or canonical
	// base64url.
	CodeInvalidSeed Code = "key_invalid_seed"
	// CodeIO: a read, write, sync or rename failed for another reason.
	CodeIO Code = "key_io"
	// CodePassphraseUnavailable: no passphrase source could supply one
	// (no environment variable, no passphrase file, no terminal).
	CodePassphraseUnavailable Code = "passphrase_unavailable"
	// CodePassphraseEmpty: an empty passphrase was supplied for an
	// encrypted key.
	CodePassphraseEmpty Code = "passphrase_empty"
	// CodePassphraseInvalid: the passphrase file is missing, unreadable,
	// not a regular file or too long.
	CodePassphraseInvalid Code = "passphrase_invalid"
	// CodePassphrasePermissions: the passphrase file has group or other
	// permission bits set.
	CodePassphrasePermissions Code = "passphrase_permissions"
	// CodePassphraseOwner: the passphrase file belongs to another user.
	CodePassphraseOwner Code = "passphrase_owner"
	// CodePassphraseMismatch: the confirmation typed at the prompt did not
	// match the new passphrase.
	CodePassphraseMismatch Code = "passphrase_mismatch"
)

// Error is the error type of this package. Path names the file involved
// (empty when none is). Err is an underlying cause (an *os.PathError, say); it
// never carries key material.
type Error struct {
	// Code is the stable kind of the error.
	Code Code
	// Path is the key or passphrase file involved, if any.
	Path string
	// Msg says what is wrong and, where it helps, how to fix it.
	Msg string
	// Err is the underlying cause, if any.
	Err error
}

// Sentinels for errors.Is. An *Error matches the sentinel with the same Code.
var (
	// ErrNotFound matches CodeNotFound.
	ErrNotFound = &Error{Code: CodeNotFound}
	// ErrPermissions matches CodePermissions.
	ErrPermissions = &Error{Code: CodePermissions}
	// ErrOwner matches CodeOwner.
	ErrOwner = &Error{Code: CodeOwner}
	// ErrCorrupt matches CodeCorrupt.
	ErrCorrupt = &Error{Code: CodeCorrupt}
	// ErrWrongPassphrase matches CodeWrongPassphrase.
	ErrWrongPassphrase = &Error{Code: CodeWrongPassphrase}
	// ErrUnsupported matches CodeUnsupported.
	ErrUnsupported = &Error{Code: CodeUnsupported}
	// ErrKDFParams matches CodeKDFParams.
	ErrKDFParams = &Error{Code: CodeKDFParams}
	// ErrExists matches CodeExists.
	ErrExists = &Error{Code: CodeExists}
	// ErrInvalidSeed matches CodeInvalidSeed.
	ErrInvalidSeed = &Error{Code: CodeInvalidSeed}
	// ErrIO matches CodeIO.
	ErrIO = &Error{Code: CodeIO}
	// ErrPassphraseUnavailable matches CodePassphraseUnavailable.
	ErrPassphraseUnavailable = &Error{Code: CodePassphraseUnavailable}
	// ErrPassphraseEmpty matches CodePassphraseEmpty.
	ErrPassphraseEmpty = &Error{Code: CodePassphraseEmpty}
	// ErrPassphraseInvalid matches CodePassphraseInvalid.
	ErrPassphraseInvalid = &Error{Code: CodePassphraseInvalid}
	// ErrPassphrasePermissions matches CodePassphrasePermissions.
	ErrPassphrasePermissions = &Error{Code: CodePassphrasePermissions}
	// ErrPassphraseOwner matches CodePassphraseOwner.
	ErrPassphraseOwner = &Error{Code: CodePassphraseOwner}
	// ErrPassphraseMismatch matches CodePassphraseMismatch.
	ErrPassphraseMismatch = &Error{Code: CodePassphraseMismatch}
)

// Error formats the error as "keystore: <path>: <message> [<code>]".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("keystore: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else {
		b.WriteString(string(e.Code))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	b.WriteString(" [")
	b.WriteString(string(e.Code))
	b.WriteString("]")
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code, so
// errors.Is(err, keystore.ErrWrongPassphrase) works for every error of that
// kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// CodeOf returns the Code of err when it is or wraps an *Error, and "" when it
// does not.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newErr(code Code, path, msg string, cause error) *Error {
	return &Error{Code: code, Path: path, Msg: msg, Err: cause}
}
