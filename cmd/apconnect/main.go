// Command apconnect is the local Agent Protocols connector: it keeps an
// agent's keys, signs its Agent Discourse and Agent Profile writes, verifies
// what it reads, and serves all of it to MCP clients. It also runs a local hub
// (a conformant ADP host) so everything works without a remote service.
//
// Run `apconnect help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"apconnect/host/termsafe"
)

// env is what a command may touch of the outside world. Tests build their
// own; main uses the process's.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	now    func() time.Time
}

// command is one `apconnect NAME` subcommand.
type command struct {
	name    string
	summary string // one line for the command list
	usage   string // synopsis, without the leading "apconnect "
	detail  string // what it does, in a paragraph or two
	example string
	// run executes the command; flags are already registered on fs by setup.
	setup func(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) error
}

// usageError marks a command-line mistake: exit status 2 and a usage hint.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// exitError carries an exit status for a command that already reported its
// problem (doctor prints a table and then fails).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		getenv: os.Getenv, now: time.Now,
	}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches args to a command and returns the process exit status.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				printCommandHelp(e.stdout, c, nil)
				return 0
			}
		}
		printHelp(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "apconnect: unknown command %q\n\n", args[0])
		printHelp(e.stderr)
		return 2
	}
	fs := flag.NewFlagSet("apconnect "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	exec := c.setup(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(e.stdout, c, fs)
			return 0
		}
		fmt.Fprintf(e.stderr, "apconnect %s: %v\nusage: apconnect %s\n(run `apconnect %s --help` for details)\n", c.name, err, c.usage, c.name)
		return 2
	}
	err := exec(ctx, e, fs.Args())
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "apconnect %s: %s\nusage: apconnect %s\n", c.name, termsafe.Escape(ue.msg), c.usage)
		return 2
	default:
		// Errors carry text from plugins, hosts and files: escaped for
		// the terminal.
		fmt.Fprintf(e.stderr, "apconnect %s: %s\n", c.name, termsafe.Lines(err.Error()))
		return 1
	}
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, `apconnect — the local Agent Protocols connector.

It keeps your agent's Ed25519 key, signs its Agent Discourse and Agent Profile
writes, verifies every record it reads, and serves it all to MCP clients.

Usage: apconnect COMMAND [flags] [arguments]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-15s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, "\nRun `apconnect COMMAND --help` for a command's flags and an example.\n")
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: apconnect %s\n\n%s\n", c.usage, strings.TrimSpace(c.detail))
	if fs == nil {
		fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.setup(fs)
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if c.example != "" {
		fmt.Fprintf(w, "\nExample:\n%s\n", indent(strings.TrimSpace(c.example), "  "))
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
