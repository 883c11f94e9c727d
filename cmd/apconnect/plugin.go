package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"apconnect/host/config"
	"apconnect/host/plugin"
	"apconnect/host/pluginhost"
	"apconnect/host/termsafe"
	"apconnect/host/text"
)

func init() {
	register(&command{
		name:    "plugin",
		summary: "inspect a WebAssembly plugin (what it does, its digest, its config entry) or call one of its operations",
		usage:   "plugin inspect [--json] [--home DIR] [--cache DIR | --no-cache] FILE\n       apconnect plugin call [--log] [--cache DIR | --no-cache] [limits] FILE OP < envelope.json",
		detail: `"apconnect plugin inspect FILE" loads a plugin file in the sandbox without
granting it anything beyond its own description, asks it to describe itself and
prints what it is (name, version, plugin ABI), the event types it validates and
watches, its tools (as MCP names, one line each) and type packs, the SHA-256
digest of the file, the grants it needs, and a ready [[plugins]] entry for
config.toml that pins that digest. Copy the entry into the config to enable the
plugin; apconnect refuses a file whose digest differs and a plugin that claims
more than its grants.

The description is checked by every rule a real load applies, so a plugin that
inspects cleanly loads with the printed entry. The compiled code goes into the
apconnect home's compilation cache (state/plugin-cache of --home, else of
$APCONNECT_HOME or the default home, when it has a config.toml), the cache
apconnect mcp and serve read: after inspecting a plugin and enabling it with
the printed entry, the first start does not compile it. Without a home the
code is cached under the user cache directory ($XDG_CACHE_HOME/apconnect/plugins
by default); --cache DIR uses DIR instead, --no-cache compiles in memory only.

` + pluginCallDetail,
		example: `apconnect plugin inspect bin/plugins/deliberation.wasm
apconnect plugin inspect --json bin/plugins/standup.wasm | jq .grants
echo '{}' | apconnect plugin call bin/plugins/hello_rust.wasm wave
apconnect plugin call bin/plugins/hello_c.wasm validate < proposal.json`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			o := &inspectOptions{}
			o.register(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 {
					return usageError{"plugin needs a subcommand: inspect FILE, or call FILE OP"}
				}
				switch args[0] {
				case "inspect":
					file, help, err := o.parse(args[1:])
					if help {
						printCommandHelp(e.stdout, commands["plugin"], nil)
						return nil
					}
					if err != nil {
						return err
					}
					return runInspect(ctx, e, o, file)
				case "call":
					co, file, op, help, err := parseCall(args[1:])
					if help {
						printCommandHelp(e.stdout, commands["plugin"], nil)
						return nil
					}
					if err != nil {
						return err
					}
					return runPluginCall(ctx, e, co, file, op)
				default:
					return usageError{fmt.Sprintf("unknown subcommand %q (want inspect or call)", args[0])}
				}
			}
		},
	})
}

// inspectOptions are the flags of "plugin inspect". They may come before
// the subcommand or anywhere after it.
type inspectOptions struct {
	json    bool
	home    string
	cache   string
	noCache bool
}

func (o *inspectOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.json, "json", o.json, "print the inspection as JSON")
	fs.StringVar(&o.home, "home", o.home, "apconnect home whose compilation cache receives the compiled code (default $APCONNECT_HOME, else the default home when it has a config)")
	fs.StringVar(&o.cache, "cache", o.cache, "compilation cache directory (default: the home's, else $XDG_CACHE_HOME/apconnect/plugins or the user cache directory)")
	fs.BoolVar(&o.noCache, "no-cache", o.noCache, "compile in memory only")
}

// parse reads the arguments after "inspect": flags and exactly one FILE.
func (o *inspectOptions) parse(args []string) (file string, help bool, err error) {
	fs := flag.NewFlagSet("apconnect plugin inspect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.register(fs)
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", true, nil
			}
			return "", false, usageError{"inspect: " + err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(files) == 0:
		return "", false, usageError{"inspect needs the plugin FILE"}
	case len(files) > 1:
		return "", false, usageError{"inspect takes one FILE"}
	case o.noCache && o.cache != "":
		return "", false, usageError{"--cache and --no-cache exclude each other"}
	case o.home != "" && (o.noCache || o.cache != ""):
		return "", false, usageError{"--home names the compilation cache; it excludes --cache and --no-cache"}
	}
	return files[0], false, nil
}

// inspection is the JSON form of "plugin inspect".
type inspection struct {
	Path        string              `json:"path"`
	Size        int                 `json:"size"`
	SHA256      string              `json:"sha256"`
	Description *plugin.Description `json:"description"`
	Grants      []string            `json:"grants"`
	Config      string              `json:"config"`
}

func runInspect(ctx context.Context, e *env, o *inspectOptions, file string) error {
	path, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	opts := plugin.Options{}
	if !o.noCache {
		opts.CacheDir = o.cache
		if opts.CacheDir == "" {
			home, err := inspectHome(e, o.home)
			if err != nil {
				return err
			}
			if home != nil {
				opts.CacheDir = pluginhost.CacheDir(home)
			} else {
				opts.CacheDir = pluginCacheDir(e)
			}
		}
	}
	rt, err := plugin.NewRuntime(ctx, opts)
	if err != nil && opts.CacheDir != "" && o.cache == "" {
		// The default cache is a convenience: without it, compile in memory.
		fmt.Fprintf(e.stderr, "apconnect plugin: no compilation cache (%v)\n", err)
		opts.CacheDir = ""
		rt, err = plugin.NewRuntime(ctx, opts)
	}
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	ins, err := rt.Inspect(ctx, path, plugin.Limits{})
	if err != nil {
		return err
	}
	out := inspection{
		Path: path, Size: ins.Size, SHA256: ins.Digest, Description: ins.Description,
		Grants: ins.Grants.Strings(), Config: configEntry(ins),
	}
	if out.Grants == nil {
		out.Grants = []string{}
	}
	if o.json {
		return writeSafeJSON(e.stdout, out)
	}
	printInspection(e.stdout, &out)
	return nil
}

// writeSafeJSON writes v as indented JSON in which no character a terminal
// acts on is left raw (termsafe.JSON): the output often goes to one.
func writeSafeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termsafe.JSON(data), '\n'))
	return err
}

// inspectHome is the home whose compilation cache "plugin inspect" fills:
// --home (which must hold a config), else the home $APCONNECT_HOME names,
// else the default one ($XDG_CONFIG_HOME/apconnect, ~/.config/apconnect),
// when its config loads; nil when there is none. The environment is read
// through e, as the rest of the command does, so tests stay hermetic.
func inspectHome(e *env, flagHome string) (*config.Config, error) {
	if flagHome != "" {
		return loadConfig(flagHome)
	}
	dir := ""
	if h := e.getenv(config.EnvHome); h != "" {
		d, err := config.ResolveHome(h)
		if err != nil {
			return nil, nil
		}
		dir = d
	} else if x := e.getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		dir = filepath.Join(x, "apconnect")
	} else if h := e.getenv("HOME"); h != "" && filepath.IsAbs(h) {
		dir = filepath.Join(h, ".config", "apconnect")
	} else {
		return nil, nil
	}
	if _, err := os.Stat(filepath.Join(dir, config.FileName)); err != nil {
		return nil, nil
	}
	cfg, err := config.Load(dir)
	if err != nil {
		return nil, nil // a home that does not load is no place for the cache
	}
	return cfg, nil
}

// pluginCacheDir is the default compilation cache: $XDG_CACHE_HOME (as the
// environment says) or the user cache directory, then apconnect/plugins;
// "" when there is none.
func pluginCacheDir(e *env) string {
	base := e.getenv("XDG_CACHE_HOME")
	if base == "" {
		var err error
		if base, err = os.UserCacheDir(); err != nil {
			return ""
		}
	}
	return filepath.Join(base, "apconnect", "plugins")
}

// printInspection prints what the plugin says about itself. All of it is
// the plugin's (or the file system's) text and is escaped for the
// terminal: a description ending in ESC [8m must not hide the grants the
// operator is about to give.
func printInspection(w io.Writer, in *inspection) {
	d := in.Description
	esc := termsafe.Escape
	list := func(l []string) string { return esc(listOrNone(l)) }
	fmt.Fprintf(w, "Plugin %s %s (plugin ABI %d)\n", esc(d.Name), esc(d.Version), d.ABIVersion)
	if d.Description != "" {
		fmt.Fprintf(w, "  %s\n", esc(d.Description))
	}
	fmt.Fprintf(w, "\nFile      %s (%s)\n", esc(in.Path), byteSize(in.Size))
	fmt.Fprintf(w, "SHA-256   %s\n\n", in.SHA256)
	fmt.Fprintf(w, "Validates %s\n", list(d.Validates))
	fmt.Fprintf(w, "Watches   %s\n", list(d.Watches))
	fmt.Fprintf(w, "Proposes  %s\n", list(d.Proposes))
	if len(d.Tools) == 0 {
		fmt.Fprintf(w, "Tools     none\n")
	} else {
		fmt.Fprintf(w, "Tools\n")
		width := 0
		for _, t := range d.Tools {
			width = max(width, len(esc(t.MCPName)))
		}
		for _, t := range d.Tools {
			fmt.Fprintf(w, "  %-*s  %s\n", width, esc(t.MCPName), esc(firstLine(t.Description, 90)))
		}
	}
	if len(d.Packs) == 0 {
		fmt.Fprintf(w, "Packs     none\n")
	} else {
		fmt.Fprintf(w, "Packs\n")
		for _, p := range d.Packs {
			var types []string
			for _, t := range p.Types {
				types = append(types, t.Type+" ("+t.Kind+")")
			}
			fmt.Fprintf(w, "  %s  %s\n", esc(p.ID()), esc(strings.Join(types, ", ")))
		}
	}
	fmt.Fprintf(w, "\nGrants it needs: %s\n", list(in.Grants))
	fmt.Fprintf(w, "\nTo enable it, add this entry to config.toml:\n\n%s", in.Config)
}

// configEntry is the [[plugins]] entry for an inspected plugin, with the
// keys of host/config and its limits as comments.
func configEntry(ins *plugin.Inspection) string {
	var b strings.Builder
	b.WriteString("[[plugins]]\n")
	b.WriteString("name = " + tomlString(ins.Description.Name) + "\n")
	b.WriteString("path = " + tomlString(ins.Path) + "\n")
	b.WriteString("sha256 = " + tomlString(ins.Digest) + "\n")
	var grants []string
	for _, g := range ins.Grants.Strings() {
		grants = append(grants, tomlString(g))
	}
	b.WriteString("grants = [" + strings.Join(grants, ", ") + "]\n")
	b.WriteString("# Optional limits; these are the defaults:\n")
	b.WriteString("# [plugins.limits]\n")
	fmt.Fprintf(&b, "# memory_mib = %d\n", config.DefaultPluginMemoryMiB)
	fmt.Fprintf(&b, "# validate_ms = %d\n", config.DefaultPluginValidateMS)
	fmt.Fprintf(&b, "# watch_ms = %d\n", config.DefaultPluginWatchMS)
	fmt.Fprintf(&b, "# tool_ms = %d\n", config.DefaultPluginToolMS)
	return b.String()
}

// tomlString quotes s as a TOML basic string. Controls and the characters
// termsafe escapes (C1 controls, bidirectional and other format
// characters) are written as TOML escapes, so the entry is safe to print
// and means the same.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r > 0xffff && termsafe.Escape(string(r)) != string(r):
			fmt.Fprintf(&b, `\U%08X`, r)
		case r < 0x20 || r == 0x7f || termsafe.Escape(string(r)) != string(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// firstLine is the first line of s, cut to n characters; "…" marks a cut
// or more lines.
func firstLine(s string, n int) string {
	s, rest, more := strings.Cut(strings.TrimSpace(s), "\n")
	if utf8.RuneCountInString(s) <= n {
		if more && strings.TrimSpace(rest) != "" {
			return strings.TrimSpace(s) + " …"
		}
		return s
	}
	return text.Truncate(strings.TrimSpace(s), n)
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
