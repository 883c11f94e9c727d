package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"apconnect/host/config"
	"apconnect/host/identity"
	"apconnect/host/plugin"
	"apconnect/host/pluginhost"
)

// pluginCallDetail is the help text of "plugin call".
const pluginCallDetail = `"apconnect plugin call FILE OP" runs one operation of a plugin file and prints
the plugin's answer as JSON, for plugin authors in any language and for
scripts. The plugin is loaded exactly as apconnect mcp loads a configured one
(the same sandbox, limits, schema and content checks, the ADP type schema
profile on its packs) with the grants "plugin inspect" prints for it.

OP is validate, watch, describe, pack, or the name of one of the plugin's
tools (tool:NAME when a tool is named like an operation). The input envelope
is read as one JSON object from stdin, as the plugin's ABI defines it
(docs/PLUGINS.md, section 4) without "op":

  validate  {"proposal": {...}, "room": {"room_id": ..., "records": [...]}}
  watch     {"room": {...}, "records": [...]}
  TOOL      {"arguments": {...}, "context": {"self": {...}, "room": {...}}}
  pack      {"name": "owner:pack"}
  describe  nothing (or {})

"now_ms" in the envelope sets the plugin's clock (default: now). The answer is
the host's checked view of the plugin's output: validate prints
{"ok", "errors"}, watch {"items"} as the agent's inbox gets them, a tool its
result, pack the pack, describe the description. A refusal or a tool's
is_error result is an answer (exit 0); a failed call prints
{"error":{"code","message"}} and exits 1.

Flags of call: --cache DIR and --no-cache as for inspect; --log prints the
plugin's log (stdout, stderr and its log import) to stderr; --memory-mib N
(default 64), --validate-ms N (250), --watch-ms N (250) and --tool-ms N
(2000) are the [plugins.limits] of a config entry.`

// callOptions are the flags of "plugin call".
type callOptions struct {
	cache      string
	noCache    bool
	log        bool
	memoryMiB  int
	validateMS int
	watchMS    int
	toolMS     int
}

func (o *callOptions) register(fs *flag.FlagSet) {
	d := config.DefaultPluginLimits()
	fs.StringVar(&o.cache, "cache", "", "compilation cache directory (default $XDG_CACHE_HOME/apconnect/plugins)")
	fs.BoolVar(&o.noCache, "no-cache", false, "compile in memory only")
	fs.BoolVar(&o.log, "log", false, "print the plugin's log lines to stderr after the call")
	fs.IntVar(&o.memoryMiB, "memory-mib", d.MemoryMiB, "memory limit of an instance in MiB, as [plugins.limits] memory_mib")
	fs.IntVar(&o.validateMS, "validate-ms", d.ValidateMS, "deadline of a validate call, as validate_ms")
	fs.IntVar(&o.watchMS, "watch-ms", d.WatchMS, "deadline of a watch call, as watch_ms")
	fs.IntVar(&o.toolMS, "tool-ms", d.ToolMS, "deadline of a tool call, as tool_ms")
}

// parseCall reads the arguments after "call": flags and FILE OP.
func parseCall(args []string) (o *callOptions, file, op string, help bool, err error) {
	o = &callOptions{}
	fs := flag.NewFlagSet("apconnect plugin call", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.register(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, "", "", true, nil
			}
			return nil, "", "", false, usageError{"call: " + err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(pos) != 2:
		return nil, "", "", false, usageError{"call needs the plugin FILE and one OP (validate, watch, describe, pack or a tool name)"}
	case o.noCache && o.cache != "":
		return nil, "", "", false, usageError{"--cache and --no-cache exclude each other"}
	case o.memoryMiB < 1 || o.memoryMiB > 1024:
		return nil, "", "", false, usageError{"--memory-mib must be 1 to 1024"}
	}
	for _, ms := range []int{o.validateMS, o.watchMS, o.toolMS} {
		if ms < 1 || ms > 60000 {
			return nil, "", "", false, usageError{"deadlines must be 1 to 60000 ms"}
		}
	}
	return o, pos[0], pos[1], false, nil
}

// Envelopes as read from stdin: the ABI's input envelopes, op optional.
type (
	callHeader struct {
		Op    string `json:"op"`
		NowMS *int64 `json:"now_ms"`
	}
	validateEnvelope struct {
		callHeader
		Proposal *plugin.Proposal    `json:"proposal"`
		Room     *plugin.RoomContext `json:"room"`
	}
	watchEnvelope struct {
		callHeader
		Room    *plugin.RoomContext `json:"room"`
		Records []plugin.Record     `json:"records"`
	}
	toolEnvelope struct {
		callHeader
		Name      string              `json:"name"`
		Arguments json.RawMessage     `json:"arguments"`
		Context   *plugin.ToolContext `json:"context"`
	}
	packEnvelope struct {
		callHeader
		Name string `json:"name"`
	}
	describeEnvelope struct {
		callHeader
		ABIVersion int `json:"abi_version"`
	}
)

func runPluginCall(ctx context.Context, e *env, o *callOptions, file, op string) error {
	path, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	input, err := io.ReadAll(io.LimitReader(e.stdin, int64(plugin.DefaultLimits().MaxInputBytes)+1))
	if err != nil {
		return fmt.Errorf("read the envelope from stdin: %w", err)
	}
	if len(input) > plugin.DefaultLimits().MaxInputBytes {
		return usageError{"the envelope on stdin is larger than the 2 MiB input cap"}
	}
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = []byte("{}")
	}
	if v, err := identity.ParseStrict(input); err != nil {
		return usageError{"the envelope on stdin is not strict JSON: " + err.Error()}
	} else if _, ok := v.(map[string]any); !ok {
		return usageError{"the envelope on stdin must be one JSON object"}
	}

	kind, tool := op, ""
	switch {
	case strings.HasPrefix(op, "tool:"):
		kind, tool = "tool", strings.TrimPrefix(op, "tool:")
	case op != "validate" && op != "watch" && op != "describe" && op != "pack":
		kind, tool = "tool", op
	}
	var env any
	var hdr *callHeader
	switch kind {
	case "validate":
		v := &validateEnvelope{}
		env, hdr = v, &v.callHeader
	case "watch":
		v := &watchEnvelope{}
		env, hdr = v, &v.callHeader
	case "tool":
		v := &toolEnvelope{}
		env, hdr = v, &v.callHeader
	case "pack":
		v := &packEnvelope{}
		env, hdr = v, &v.callHeader
	case "describe":
		v := &describeEnvelope{}
		env, hdr = v, &v.callHeader
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(env); err != nil {
		return usageError{fmt.Sprintf("the %s envelope on stdin: %v", kind, err)}
	}
	if hdr.Op != "" && hdr.Op != kind {
		return usageError{fmt.Sprintf("the envelope says op %q, the command line %s", hdr.Op, kind)}
	}
	now := time.Now
	if hdr.NowMS != nil {
		at := time.UnixMilli(*hdr.NowMS)
		now = func() time.Time { return at }
	}

	p, closeAll, err := loadForCall(ctx, e, o, path, now)
	if err != nil {
		return printCallError(e, err)
	}
	defer closeAll()
	answer, err := callOp(ctx, p, kind, tool, env)
	if o.log {
		for _, l := range p.Health(-1).Log {
			fmt.Fprintf(e.stderr, "%s %s %s: %s\n", p.Name(), l.Source, l.Level, l.Text)
		}
	}
	if err != nil {
		return printCallError(e, err)
	}
	return printJSON(e.stdout, answer)
}

// loadForCall loads the plugin at path as a config entry with the grants
// its description needs and the given limits, through pluginhost, as
// apconnect mcp does.
func loadForCall(ctx context.Context, e *env, o *callOptions, path string, now func() time.Time) (*plugin.Plugin, func(), error) {
	var cache wazero.CompilationCache
	cacheDir := ""
	if !o.noCache {
		cacheDir = o.cache
		if cacheDir == "" {
			cacheDir = pluginCacheDir(e)
		}
	}
	if cacheDir == "" {
		// Inspect and load share one in-memory cache: one compilation.
		cache = wazero.NewCompilationCache()
	}
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: cacheDir, Cache: cache, Now: now})
	if err != nil && cacheDir != "" && o.cache == "" {
		fmt.Fprintf(e.stderr, "apconnect plugin: no compilation cache (%v)\n", err)
		cacheDir, cache = "", wazero.NewCompilationCache()
		rt, err = plugin.NewRuntime(ctx, plugin.Options{Cache: cache, Now: now})
	}
	if err != nil {
		return nil, nil, err
	}
	limits := config.PluginLimits{MemoryMiB: o.memoryMiB, ValidateMS: o.validateMS, WatchMS: o.watchMS, ToolMS: o.toolMS}
	ins, err := rt.Inspect(ctx, path, pluginhost.Limits(limits))
	_ = rt.Close(context.WithoutCancel(ctx))
	if err != nil {
		return nil, nil, err
	}
	cfg := &config.Config{Plugins: []config.Plugin{{
		Name: ins.Description.Name, Path: path, SHA256: ins.Digest, Grants: ins.Grants.Strings(), Enabled: true, Limits: limits,
	}}}
	set := pluginhost.Load(ctx, cfg, pluginhost.Options{CacheDir: cacheDir, Cache: cache, Now: now})
	closeAll := func() {
		_ = set.Close(context.WithoutCancel(ctx))
		if cache != nil {
			_ = cache.Close(context.WithoutCancel(ctx))
		}
	}
	if en := set.Entries[0]; en.Err != nil {
		closeAll()
		return nil, nil, en.Err
	}
	return set.Entries[0].Plugin, closeAll, nil
}

// callOp runs one operation and returns the answer to print.
func callOp(ctx context.Context, p *plugin.Plugin, kind, tool string, env any) (any, error) {
	switch v := env.(type) {
	case *validateEnvelope:
		if v.Proposal == nil || v.Room == nil {
			return nil, usageError{`validate needs {"proposal": {...}, "room": {"room_id": ...}} on stdin`}
		}
		errs, err := p.ValidateEvent(ctx, *v.Proposal, v.Room)
		if err != nil {
			return nil, err
		}
		if errs == nil {
			errs = []plugin.FieldError{}
		}
		return struct {
			OK     bool                `json:"ok"`
			Errors []plugin.FieldError `json:"errors"`
		}{len(errs) == 0, errs}, nil
	case *watchEnvelope:
		if v.Room == nil {
			return nil, usageError{`watch needs {"room": {"room_id": ...}, "records": [...]} on stdin`}
		}
		reg := plugin.NewRegistry(nil)
		if err := reg.Add(p); err != nil {
			return nil, err
		}
		items, errs := reg.Watch(ctx, v.Records, v.Room)
		if len(errs) > 0 {
			return nil, errs[0]
		}
		if items == nil {
			items = []plugin.InboxItem{}
		}
		return map[string]any{"items": items}, nil
	case *toolEnvelope:
		if v.Name != "" && v.Name != tool {
			return nil, usageError{fmt.Sprintf("the envelope names tool %q, the command line %q", v.Name, tool)}
		}
		return p.CallTool(ctx, tool, v.Arguments, v.Context)
	case *packEnvelope:
		if v.Name == "" {
			return nil, usageError{`pack needs {"name": "owner:pack"} on stdin`}
		}
		return p.Pack(ctx, v.Name)
	case *describeEnvelope:
		return p.Description(), nil
	}
	return nil, fmt.Errorf("unknown operation %s", kind)
}

// printCallError prints a plugin failure as {"error":{"code","message"}}
// and exits 1; other errors go up as they are.
func printCallError(e *env, err error) error {
	var ue usageError
	if errors.As(err, &ue) {
		return err
	}
	var pe *plugin.Error
	if !errors.As(err, &pe) {
		return err
	}
	type failure struct {
		Code    plugin.Code `json:"code"`
		Message string      `json:"message"`
	}
	if perr := printJSON(e.stdout, map[string]failure{"error": {pe.Code, pe.Error()}}); perr != nil {
		return perr
	}
	return exitError{1}
}
