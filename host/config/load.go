package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// MaxFileSize bounds what Load reads.
const MaxFileSize = 1 << 20

// The shape of the file as decoded. Optional settings whose default is not
// the zero value are pointers, so a value written explicitly (even 0 or "")
// is validated rather than silently replaced by the default.
type fileConfig struct {
	Identities []Identity   `toml:"identities"`
	Hosts      []Host       `toml:"hosts"`
	State      *fileState   `toml:"state"`
	HTTP       *fileHTTP    `toml:"http"`
	Limits     Limits       `toml:"limits"`
	Mail       *fileMail    `toml:"mail"`
	Wake       *fileWake    `toml:"wake"`
	Plugins    []filePlugin `toml:"plugins"`
}

type fileState struct {
	Dir            *string `toml:"dir"`
	RecordsPerRoom *int    `toml:"records_per_room"`
}

type fileHTTP struct {
	Listen    *string `toml:"listen"`
	TokenFile *string `toml:"token_file"`
}

type filePlugin struct {
	Name    string            `toml:"name"`
	Path    string            `toml:"path"`
	SHA256  string            `toml:"sha256"`
	Grants  []string          `toml:"grants"`
	Limits  *filePluginLimits `toml:"limits"`
	Enabled *bool             `toml:"enabled"`
}

type filePluginLimits struct {
	MemoryMiB  *int `toml:"memory_mib"`
	ValidateMS *int `toml:"validate_ms"`
	WatchMS    *int `toml:"watch_ms"`
	ToolMS     *int `toml:"tool_ms"`
}

// knownKeys lists the keys of each table, for "unknown key" messages.
var knownKeys = map[string][]string{
	"":               {"identities", "hosts", "state", "http", "limits", "mail", "wake", "plugins"},
	"identities":     {"name", "key_file", "profile_services", "default", "passphrase_file"},
	"hosts":          {"url", "label", "ca_file", "grants"},
	"state":          {"dir", "records_per_room"},
	"http":           {"listen", "token_file"},
	"limits":         {"room_messages", "room_signals", "room_controls", "rooms_created", "profile_updates", "mail_sends", "mail_sends_per_recipient", "mailbox_publishes", "knowledge_submits", "delegation_writes"},
	"mail":           {"blocked_senders", "sync_interval"},
	"wake":           {"claude_channel", "kinds", "command"},
	"wake.command":   {"argv", "kinds", "timeout"},
	"plugins":        {"name", "path", "sha256", "grants", "limits", "enabled"},
	"plugins.limits": {"memory_mib", "validate_ms", "watch_ms", "tool_ms"},
}

// Load reads home/config.toml, decodes it strictly, fills in defaults,
// normalizes host and profile service URLs and validates everything. A
// missing file is reported as ErrNotFound (wrapped); any other problem as an
// *Error listing every problem found.
func Load(home string) (*Config, error) {
	if home == "" {
		return nil, errors.New("config: empty home directory")
	}
	path := filepath.Join(home, FileName)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("config: %s: %w (create it with `apconnect init`)", path, ErrNotFound)
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, &Error{File: path, Problems: []Problem{{Message: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}}}
	}
	c, err := Parse(data)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = path
		}
		return nil, err
	}
	c.home = home
	return c, nil
}

// Parse decodes and validates a configuration document, like Load without
// the file. The result has no home (Home returns ""), so relative paths do
// not resolve until one is set by Load or Default.
func Parse(data []byte) (*Config, error) {
	var fc fileConfig
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return nil, decodeError(err)
	}
	c, ps := fc.effective()
	c.normalize()
	if ps = append(ps, c.problems()...); len(ps) > 0 {
		ce := &Error{Problems: ps}
		locate(ce, data)
		sortProblems(ce.Problems)
		return nil, ce
	}
	return c, nil
}

// sortProblems puts the durations that do not parse, found before
// Validate ran, in their place: problems in the order of the sections
// Validate checks, and within [limits], [mail] and [wake] (whose problems
// all have lines) in file order.
func sortProblems(ps []Problem) {
	rank := func(p Problem) int {
		top, _, _ := strings.Cut(p.Field, ".")
		top, _, _ = strings.Cut(top, "[")
		return slices.Index(knownKeys[""], top)
	}
	inFileOrder := func(p Problem) bool {
		return p.Line > 0 && slices.ContainsFunc(locatedPrefixes, func(pre string) bool { return strings.HasPrefix(p.Field, pre) })
	}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if d := rank(a) - rank(b); d != 0 || !inFileOrder(a) || !inFileOrder(b) {
			return d
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
}

// effective applies defaults to everything the file left out. Lists are
// never nil, so a Config encodes to JSON with [] rather than null. The
// problems are the durations that do not parse (they take their default,
// so Validate does not report them again).
func (fc *fileConfig) effective() (*Config, problems) {
	var ps problems
	c := &Config{
		Identities: make([]Identity, 0, len(fc.Identities)),
		Hosts:      append([]Host{}, fc.Hosts...),
		Plugins:    make([]Plugin, 0, len(fc.Plugins)),
		State:      State{Dir: DefaultStateDir, RecordsPerRoom: DefaultRecordsPerRoom},
		HTTP:       HTTP{Listen: DefaultListen, TokenFile: DefaultTokenFile},
		Limits:     fc.Limits,
		Mail:       fc.Mail.effective(&ps),
		Wake:       fc.Wake.effective(&ps),
	}
	for _, id := range fc.Identities {
		id.ProfileServices = append([]string{}, id.ProfileServices...)
		c.Identities = append(c.Identities, id)
	}
	if s := fc.State; s != nil {
		setIf(&c.State.Dir, s.Dir)
		setIf(&c.State.RecordsPerRoom, s.RecordsPerRoom)
	}
	if h := fc.HTTP; h != nil {
		setIf(&c.HTTP.Listen, h.Listen)
		setIf(&c.HTTP.TokenFile, h.TokenFile)
	}
	for _, fp := range fc.Plugins {
		p := Plugin{
			Name:    fp.Name,
			Path:    fp.Path,
			SHA256:  fp.SHA256,
			Grants:  append([]string{}, fp.Grants...),
			Limits:  DefaultPluginLimits(),
			Enabled: true,
		}
		if l := fp.Limits; l != nil {
			setIf(&p.Limits.MemoryMiB, l.MemoryMiB)
			setIf(&p.Limits.ValidateMS, l.ValidateMS)
			setIf(&p.Limits.WatchMS, l.WatchMS)
			setIf(&p.Limits.ToolMS, l.ToolMS)
		}
		setIf(&p.Enabled, fp.Enabled)
		c.Plugins = append(c.Plugins, p)
	}
	return c, ps
}

// DefaultPluginLimits returns the limits a plugin gets for every limit its
// entry leaves out.
func DefaultPluginLimits() PluginLimits {
	return PluginLimits{
		MemoryMiB:  DefaultPluginMemoryMiB,
		ValidateMS: DefaultPluginValidateMS,
		WatchMS:    DefaultPluginWatchMS,
		ToolMS:     DefaultPluginToolMS,
	}
}

func setIf[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// decodeError turns go-toml's errors into an *Error whose problems carry
// lines, columns and readable messages.
func decodeError(err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		ce := &Error{}
		for i := range strict.Errors {
			de := &strict.Errors[i]
			line, col := de.Position()
			key := strings.Join(de.Key(), ".")
			parent := ""
			if k := de.Key(); len(k) > 1 {
				parent = strings.Join(k[:len(k)-1], ".")
			}
			msg := fmt.Sprintf("unknown key %q", key)
			if known, ok := knownKeys[parent]; ok {
				where := "at the top level"
				if parent != "" {
					where = "in [" + parent + "]"
				}
				msg += fmt.Sprintf(" (known keys %s: %s)", where, strings.Join(known, ", "))
			}
			ce.Problems = append(ce.Problems, Problem{Field: key, Line: line, Column: col, Message: msg})
		}
		return ce
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		return &Error{Problems: []Problem{{
			Field:   strings.Join(de.Key(), "."),
			Line:    line,
			Column:  col,
			Message: friendlyDecodeMessage(de.Error()),
		}}}
	}
	return &Error{Problems: []Problem{{Message: err.Error()}}}
}

var typeMismatch = regexp.MustCompile(`^cannot decode TOML (\S+) into struct field \S+ of type (.+)$`)

// friendlyDecodeMessage rewrites go-toml's type mismatch messages, which
// name Go types, in the vocabulary of the file.
func friendlyDecodeMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "toml: ")
	m := typeMismatch.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	return fmt.Sprintf("expected %s, got a TOML %s", friendlyType(m[2]), m[1])
}

func friendlyType(goType string) string {
	t := strings.TrimPrefix(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean (true or false)"
	case t == "int" || t == "int64":
		return "an integer"
	case t == "[]string":
		return "an array of strings"
	case strings.HasPrefix(t, "[]"):
		return "an array of tables ([[...]])"
	default:
		return "a table"
	}
}

// Identity returns the identity called name, or the default identity when
// name is empty. The error lists the configured names.
func (c *Config) Identity(name string) (*Identity, error) {
	if len(c.Identities) == 0 {
		return nil, errors.New("config: no identities are configured (create one with `apconnect init`)")
	}
	if name == "" {
		if len(c.Identities) == 1 {
			return &c.Identities[0], nil
		}
		for i := range c.Identities {
			if c.Identities[i].Default {
				return &c.Identities[i], nil
			}
		}
		return nil, fmt.Errorf("config: no default identity; name one of: %s", strings.Join(c.identityNames(), ", "))
	}
	for i := range c.Identities {
		if c.Identities[i].Name == name {
			return &c.Identities[i], nil
		}
	}
	return nil, fmt.Errorf("config: identity %q not found; configured identities: %s", name, strings.Join(c.identityNames(), ", "))
}

func (c *Config) identityNames() []string {
	names := make([]string, len(c.Identities))
	for i, id := range c.Identities {
		names[i] = id.Name
		if id.Default || len(c.Identities) == 1 {
			names[i] += " (default)"
		}
	}
	return names
}

// Host returns the allowed host whose label is ref or whose URL is ref
// after normalization. The error lists the allowed hosts.
func (c *Config) Host(ref string) (*Host, error) {
	norm, err := NormalizeOrigin(ref)
	for i := range c.Hosts {
		if c.Hosts[i].Label == ref || (err == nil && c.Hosts[i].URL == norm) {
			return &c.Hosts[i], nil
		}
	}
	allowed := make([]string, len(c.Hosts))
	for i, h := range c.Hosts {
		allowed[i] = h.Label + " (" + h.URL + ")"
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("config: host %q is not allowed: no hosts are configured", ref)
	}
	slices.Sort(allowed)
	return nil, fmt.Errorf("config: host %q is not allowed; configured hosts: %s", ref, strings.Join(allowed, ", "))
}
