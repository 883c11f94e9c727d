package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"apconnect/host/text"
)

// MailReceivedKind is the inbox kind of a letter received by Agent Mail.
const MailReceivedKind = "mail.received"

// wakeKinds are the inbox kinds [wake] may name, as data: the ten room.*
// kinds of host/room InboxKinds, in its order, then MailReceivedKind. A
// test keeps the list equal to room.InboxKinds() and "mail.received"
// (host/config does not import host/room).
var wakeKinds = []string{
	"room.message.new",
	"room.mention",
	"room.turn.assigned",
	"room.steer",
	"room.join.requested",
	"room.join.approved",
	"room.role.changed",
	"room.member.removed",
	"room.state.changed",
	"room.event.custom",
	MailReceivedKind,
}

// defaultWakeKinds are the kinds that wake the agent when [wake] has no
// kinds key.
var defaultWakeKinds = []string{
	"room.mention",
	"room.turn.assigned",
	"room.join.requested",
	"room.join.approved",
	"room.steer",
}

// WakeKinds returns every inbox kind [wake] may name (a fresh copy).
func WakeKinds() []string { return slices.Clone(wakeKinds) }

// DefaultWakeKinds returns the kinds that wake the agent by default (a
// fresh copy).
func DefaultWakeKinds() []string { return slices.Clone(defaultWakeKinds) }

// Bounds and default of a [[wake.command]] timeout.
const (
	// DefaultWakeTimeout is how long a wake command may run by default.
	DefaultWakeTimeout = 10 * time.Minute
	// MinWakeTimeout is the shortest accepted timeout.
	MinWakeTimeout = time.Second
	// MaxWakeTimeout is the longest accepted timeout.
	MaxWakeTimeout = 24 * time.Hour
)

// ProgramPattern is the syntax of argv[0] of a wake command: an absolute
// path, or a bare program name (no '/') that is looked up in PATH when the
// command runs; never a relative path with a '/', never starting with '~'
// (not expanded), never a NUL byte. "." and ".." are refused as well.
// Shared with schemas/config.schema.json.
const ProgramPattern = `^(/[^\x00]*|[^/~\x00][^/\x00]*)$`

// ArgPattern is the syntax of every other argv element: not empty, no NUL
// byte (an exec argument cannot hold one).
const ArgPattern = `^[^\x00]+$`

var (
	programRE = regexp.MustCompile(ProgramPattern)
	argRE     = regexp.MustCompile(ArgPattern)
)

// Wake configures how the agent is woken when inbox items arrive
// ([wake]). Load fills in the defaults, so the fields hold effective
// values.
type Wake struct {
	// ClaudeChannel turns on notifications through the Claude Code
	// channel. Default false.
	ClaudeChannel bool `toml:"claude_channel"`
	// Kinds are the inbox kinds that wake the agent: at least one, each of
	// WakeKinds, each once. Default DefaultWakeKinds.
	Kinds []string `toml:"kinds"`
	// Commands are the programs run to wake the agent ([[wake.command]]),
	// in file order. Never nil after Load or Default.
	Commands []WakeCommand `toml:"command"`
}

// WakeCommand is one program run to wake the agent ([[wake.command]]).
type WakeCommand struct {
	// Argv is the program and its arguments, run directly (never through
	// a shell). Argv[0] is an absolute path or a bare program name looked
	// up in PATH when the command runs (see ProgramPattern); no element is
	// empty. Required.
	Argv []string `toml:"argv"`
	// Kinds are the inbox kinds that run this command, validated like
	// Wake.Kinds. Default: the effective Wake.Kinds.
	Kinds []string `toml:"kinds"`
	// Timeout bounds one run, from MinWakeTimeout to MaxWakeTimeout.
	// Default DefaultWakeTimeout.
	Timeout time.Duration `toml:"timeout"`
}

// DefaultWake returns the [wake] settings of a file without the table.
func DefaultWake() Wake {
	return Wake{Kinds: DefaultWakeKinds(), Commands: []WakeCommand{}}
}

// Wakes reports whether an inbox item of kind wakes the agent through the
// Claude Code channel: ClaudeChannel is on and kind is one of Kinds.
func (w Wake) Wakes(kind string) bool {
	return w.ClaudeChannel && slices.Contains(w.Kinds, kind)
}

// Runs reports whether an inbox item of kind runs the command.
func (wc WakeCommand) Runs(kind string) bool { return slices.Contains(wc.Kinds, kind) }

// fileWake is [wake] as decoded.
type fileWake struct {
	ClaudeChannel *bool             `toml:"claude_channel"`
	Kinds         []string          `toml:"kinds"`
	Command       []fileWakeCommand `toml:"command"`
}

type fileWakeCommand struct {
	Argv    []string `toml:"argv"`
	Kinds   []string `toml:"kinds"`
	Timeout *string  `toml:"timeout"`
}

// effective returns the effective [wake] settings of the table (nil when
// absent), with a problem for a timeout that is not a duration.
func (fw *fileWake) effective(ps *problems) Wake {
	w := DefaultWake()
	if fw == nil {
		return w
	}
	setIf(&w.ClaudeChannel, fw.ClaudeChannel)
	if fw.Kinds != nil {
		w.Kinds = slices.Clone(fw.Kinds)
	}
	for i, fc := range fw.Command {
		wc := WakeCommand{Argv: append([]string{}, fc.Argv...), Kinds: slices.Clone(w.Kinds), Timeout: DefaultWakeTimeout}
		if fc.Kinds != nil {
			wc.Kinds = slices.Clone(fc.Kinds)
		}
		if fc.Timeout != nil {
			wc.Timeout = parseDuration(ps, fmt.Sprintf("wake.command[%d].timeout", i), *fc.Timeout, DefaultWakeTimeout)
		}
		w.Commands = append(w.Commands, wc)
	}
	return w
}

// validateWake checks [wake]: the kinds, and each command's argv, kinds
// and timeout.
func (c *Config) validateWake(ps *problems) {
	checkKinds(ps, "wake.kinds", c.Wake.Kinds)
	for i, wc := range c.Wake.Commands {
		at := fmt.Sprintf("wake.command[%d]", i)
		checkArgv(ps, at+".argv", wc.Argv)
		// Kinds inherited from [wake] were checked there.
		if !slices.Equal(wc.Kinds, c.Wake.Kinds) {
			checkKinds(ps, at+".kinds", wc.Kinds)
		}
		checkDuration(ps, at+".timeout", wc.Timeout, MinWakeTimeout, MaxWakeTimeout)
	}
}

// checkKinds checks a list of wake kinds: not empty, each known, each once.
func checkKinds(ps *problems, field string, kinds []string) {
	if len(kinds) == 0 {
		ps.add(field, "names no kind, so nothing would wake the agent: list at least one of %s, or leave the key out for the default", strings.Join(wakeKinds, ", "))
		return
	}
	first := map[string]int{}
	for j, k := range kinds {
		f := fmt.Sprintf("%s[%d]", field, j)
		if !slices.Contains(wakeKinds, k) {
			ps.add(f, "unknown inbox kind %q (known kinds: %s)", text.Truncate(k, 80), strings.Join(wakeKinds, ", "))
			continue
		}
		if n, dup := first[k]; dup {
			ps.add(f, "%q is already listed as kinds[%d]", k, n)
			continue
		}
		first[k] = j
	}
}

// checkArgv checks a command's argv: present, a program that is an
// absolute path or a bare name, no empty element and no NUL byte.
func checkArgv(ps *problems, field string, argv []string) {
	if len(argv) == 0 {
		ps.add(field, "is required: the program and its arguments as an array, such as [\"/usr/local/bin/my-agent\", \"--resume\"]; it is run directly, never through a shell")
		return
	}
	prog := argv[0]
	switch f := field + "[0]"; {
	case prog == "":
		ps.add(f, "is empty: name the program by its absolute path, or by a bare name looked up in PATH when the command runs")
	case strings.HasPrefix(prog, "~"):
		ps.add(f, "%q: '~' is not expanded; write an absolute path, or a bare name looked up in PATH", text.Truncate(prog, 80))
	case strings.ContainsRune(prog, 0):
		ps.add(f, "contains a NUL byte")
	case len(prog) > maxPathLen:
		ps.add(f, "longer than %d bytes", maxPathLen)
	case prog == "." || prog == ".." || !programRE.MatchString(prog):
		ps.add(f, "%q is a relative path: write an absolute path, or a bare program name (without '/') looked up in PATH when the command runs", text.Truncate(prog, 80))
	}
	for j, a := range argv[1:] {
		if !argRE.MatchString(a) {
			what := "is empty"
			if a != "" {
				what = "contains a NUL byte"
			}
			ps.add(fmt.Sprintf("%s[%d]", field, j+1), "%s: every argument must be a non-empty string without NUL bytes", what)
		}
	}
}

// encodedWake is [wake] as Marshal writes it: only what differs from the
// defaults, so an absent table stays absent and a command without kinds of
// its own is written without them.
type encodedWake struct {
	ClaudeChannel bool                 `toml:"claude_channel,omitempty"`
	Kinds         []string             `toml:"kinds,omitempty"`
	Command       []encodedWakeCommand `toml:"command,omitempty"`
}

type encodedWakeCommand struct {
	Argv    []string `toml:"argv"`
	Kinds   []string `toml:"kinds,omitempty"`
	Timeout string   `toml:"timeout,omitempty"`
}

func (w Wake) encoded() *encodedWake {
	e := &encodedWake{ClaudeChannel: w.ClaudeChannel}
	if !slices.Equal(w.Kinds, defaultWakeKinds) {
		e.Kinds = w.Kinds
	}
	for _, wc := range w.Commands {
		ec := encodedWakeCommand{Argv: wc.Argv}
		if !slices.Equal(wc.Kinds, w.Kinds) {
			ec.Kinds = wc.Kinds
		}
		if wc.Timeout != DefaultWakeTimeout {
			ec.Timeout = formatDuration(wc.Timeout)
		}
		e.Command = append(e.Command, ec)
	}
	if !e.ClaudeChannel && e.Kinds == nil && e.Command == nil {
		return nil
	}
	return e
}

// clone returns a deep copy.
func (w Wake) clone() Wake {
	cp := w
	cp.Kinds = slices.Clone(w.Kinds)
	cp.Commands = make([]WakeCommand, len(w.Commands))
	for i, wc := range w.Commands {
		wc.Argv = slices.Clone(wc.Argv)
		wc.Kinds = slices.Clone(wc.Kinds)
		cp.Commands[i] = wc
	}
	return cp
}
