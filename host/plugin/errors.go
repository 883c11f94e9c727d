package plugin

import (
	"errors"
	"fmt"
)

// Code is a stable error code; compare codes, never messages.
type Code string

// Error codes of this package.
const (
	// Load-time refusals.
	CodeInvalidConfig      Code = "plugin_invalid_config"      // bad limits, grants or digest syntax
	CodeUnreadable         Code = "plugin_unreadable"          // the file cannot be read
	CodeDigestMismatch     Code = "plugin_digest_mismatch"     // the file is not the pinned one
	CodeInvalidModule      Code = "plugin_invalid_module"      // not a reactor module of this ABI
	CodeInvalidDescription Code = "plugin_invalid_description" // describe output breaks a rule
	CodeNotGranted         Code = "plugin_not_granted"         // a claim beyond the grants

	// Call failures. The instance is discarded after every one of these
	// except CodeGuestError, CodeInvalidArguments, CodeUnknown and
	// CodeInputTooLarge.
	CodeTimeout          Code = "plugin_timeout"           // the deadline passed; the module was closed
	CodeCanceled         Code = "plugin_canceled"          // the caller's context ended
	CodeTrap             Code = "plugin_trap"              // trap, unrecovered panic, out of memory, exit
	CodePanic            Code = "plugin_panic"             // the guest recovered a panic and reported it
	CodeInputTooLarge    Code = "plugin_input_too_large"   // the input envelope exceeds the cap
	CodeOutputTooLarge   Code = "plugin_output_too_large"  // the output exceeds the cap (refused before copying)
	CodeInvalidOutput    Code = "plugin_invalid_output"    // malformed, too deep, against its schema, or an ABI violation
	CodeRefusedContent   Code = "plugin_refused_content"   // UI, HTML, resources, _meta or credential-shaped data
	CodeGuestError       Code = "plugin_error"             // the plugin answered with an error envelope
	CodeInvalidArguments Code = "plugin_invalid_arguments" // tool arguments fail the tool's input schema
	CodeUnknown          Code = "plugin_unknown"           // no such tool, pack or validated type
	CodeClosed           Code = "plugin_closed"            // the plugin was closed
)

// Error is every error this package returns: a stable Code, the plugin and
// operation it concerns, and a message that names the offending item. It
// never contains the input envelope.
type Error struct {
	Code    Code
	Plugin  string // the plugin's name, or its path before describe
	Op      string // "load", "describe", "validate", "watch", "tool", "pack"
	Message string
	Err     error
}

// Error formats the error as "plugin <name>: <op>: <message> (<code>)".
func (e *Error) Error() string {
	s := "plugin"
	if e.Plugin != "" {
		s += " " + e.Plugin
	}
	if e.Op != "" {
		s += ": " + e.Op
	}
	return fmt.Sprintf("%s: %s (%s)", s, e.Message, e.Code)
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the Code of err when it is (or wraps) an *Error, and ""
// otherwise.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func errorf(code Code, plugin, op, format string, args ...any) *Error {
	return &Error{Code: code, Plugin: plugin, Op: op, Message: fmt.Sprintf(format, args...)}
}

// discards reports whether a call failure with this code leaves the
// instance in an unknown state, so that it must be closed.
func (c Code) discards() bool {
	switch c {
	case CodeGuestError, CodeInvalidArguments, CodeUnknown, CodeInputTooLarge:
		return false
	}
	return true
}
