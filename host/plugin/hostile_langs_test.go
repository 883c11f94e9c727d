package plugin_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// The hostile plugins written with the Rust and C SDKs: one file per
// attack in testdata/hostile/rust and testdata/hostile/c, built with the
// SDKs' build scripts, each opening with directives (in comments) that say
// what it attacks and exactly what the host must do, in the format of the
// WebAssembly-text corpus of the hardening work:
//
//	@attack  what the module does (required)
//	@host    what the host must do about it (required)
//	@limits  key=value ... (memory_mib, instances, validate_ms, watch_ms,
//	         tool_ms, load_ms, max_output_kib)
//	@grants  validate,watch,tools,packs,propose:<type> (default: all but propose)
//	@load    ok | <code> ["fragment" ...]
//	@call    tool <name> [<json arguments without spaces>] -> ok | <code> ["fragment" ...]
//	@log     "fragment" (a line of the plugin's log contains it)
//
// "ok" fragments are looked for in the JSON of the result, error fragments
// in the error. After every case the hello plugin, loaded in the same
// Runtime, must still answer.
var langHostileSources = []struct {
	dir, ext string
	build    func(testing.TB, string) string
}{
	{"testdata/hostile/rust", ".rs", plugintest.BuildRust},
	{"testdata/hostile/c", ".c", plugintest.BuildC},
}

type langCase struct {
	file, name   string
	attack, host string
	limits       plugin.Limits
	grants       plugin.Grants
	load         langOutcome
	calls        []langCall
	logs         []string
}

type langOutcome struct {
	code      plugin.Code
	fragments []string
}

type langCall struct {
	line       int
	tool, args string
	want       langOutcome
}

func TestHostileRustAndC(t *testing.T) {
	rt := plugintest.NewRuntime(t, plugin.Options{})
	control := plugintest.LoadWith(t, rt, plugintest.Build(t, helloDir), plugin.GrantAll, plugin.Limits{})
	for _, src := range langHostileSources {
		files, err := filepath.Glob(filepath.Join(src.dir, "*"+src.ext))
		if err != nil || len(files) == 0 {
			t.Fatalf("no %s cases in %s (%v)", src.ext, src.dir, err)
		}
		for _, file := range files {
			c := parseLangCase(t, file)
			t.Run(filepath.Base(src.dir)+"/"+c.name, func(t *testing.T) {
				t.Parallel() // the builds take seconds each
				runLangCase(t, rt, src.build(t, file), c)
				if got := callText(t, control, "wave", `{}`); got != "👋" {
					t.Fatalf("the control plugin stopped answering after %s: %q", c.name, got)
				}
			})
		}
	}
}

func runLangCase(t *testing.T, rt *plugin.Runtime, wasm string, c *langCase) {
	data, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Load(ctx(), wasm, plugin.Digest(data), c.grants, c.limits)
	if p != nil {
		t.Cleanup(func() { p.Close(ctx()) })
	}
	if !checkLangOutcome(t, c.name+": @load", c.load, err, nil) || p == nil {
		return
	}
	for _, call := range c.calls {
		start := time.Now()
		var args json.RawMessage
		if call.args != "" {
			args = json.RawMessage(call.args)
		}
		res, err := p.CallTool(ctx(), call.tool, args, nil)
		where := fmt.Sprintf("%s:%d: @call tool %s", c.file, call.line, call.tool)
		checkLangOutcome(t, where, call.want, err, res)
		// A bound, not a speed target: the deadline holds whatever the guest does.
		if plugin.CodeOf(err) == plugin.CodeTimeout && time.Since(start) > p.Limits().ToolTimeout+2*time.Second {
			t.Errorf("%s: timed out after %v with a deadline of %v", where, time.Since(start), p.Limits().ToolTimeout)
		}
	}
	h := p.Health(-1)
	if h.Instances > p.Limits().MaxInstances {
		t.Errorf("%s: %d instances exist, the bound is %d", c.name, h.Instances, p.Limits().MaxInstances)
	}
	for _, l := range h.Log {
		if strings.ContainsFunc(l.Text, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("%s: a log line keeps control characters: %q", c.name, l.Text)
		}
	}
	for _, want := range c.logs {
		if !slices.ContainsFunc(h.Log, func(l plugin.LogLine) bool { return strings.Contains(l.Text, want) }) {
			t.Errorf("%s: no log line contains %q: %+v", c.name, want, h.Log)
		}
	}
}

func checkLangOutcome(t *testing.T, where string, want langOutcome, err error, res any) bool {
	t.Helper()
	if want.code == "" {
		if err != nil {
			t.Errorf("%s: want success, got %v", where, err)
			return false
		}
		b, _ := json.Marshal(res)
		for _, f := range want.fragments {
			if !strings.Contains(string(b), f) && !strings.Contains(string(b), strconv.Quote(f)[1:len(strconv.Quote(f))-1]) {
				t.Errorf("%s: the result does not contain %q: %s", where, f, b)
			}
		}
		return true
	}
	if plugin.CodeOf(err) != want.code {
		t.Errorf("%s: want %s, got %v (result %+v)", where, want.code, err, res)
		return false
	}
	for _, f := range want.fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s: the error does not contain %q: %v", where, f, err)
		}
	}
	return false
}

func parseLangCase(t *testing.T, file string) *langCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &langCase{file: file, name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), grants: plugin.GrantAll}
	loadSet := false
	var last *string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		var body string
		switch {
		case strings.HasPrefix(line, "//"):
			body = strings.TrimSpace(strings.TrimLeft(line, "/"))
		case strings.HasPrefix(line, "*") || strings.HasPrefix(line, "/*"):
			body = strings.TrimSpace(strings.TrimLeft(line, "/*"))
		default:
			last = nil
			continue
		}
		if !strings.HasPrefix(body, "@") {
			if last != nil && body != "" {
				*last += " " + body
			} else {
				last = nil
			}
			continue
		}
		last = nil
		name, rest, _ := strings.Cut(body, " ")
		rest = strings.TrimSpace(rest)
		bad := func(format string, args ...any) {
			t.Fatalf("%s:%d: %s: %s", file, n, name, fmt.Sprintf(format, args...))
		}
		switch name {
		case "@attack":
			c.attack, last = rest, &c.attack
		case "@host":
			c.host, last = rest, &c.host
		case "@limits":
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				i, err := strconv.Atoi(v)
				if err != nil || i <= 0 {
					bad("%q is not key=positive integer", kv)
				}
				ms := time.Duration(i) * time.Millisecond
				switch k {
				case "memory_mib":
					c.limits.MemoryBytes = uint64(i) << 20
				case "instances":
					c.limits.MaxInstances = i
				case "validate_ms":
					c.limits.ValidateTimeout = ms
				case "watch_ms":
					c.limits.WatchTimeout = ms
				case "tool_ms":
					c.limits.ToolTimeout = ms
				case "load_ms":
					c.limits.LoadTimeout = ms
				case "max_output_kib":
					c.limits.MaxOutputBytes = i << 10
				default:
					bad("unknown limit %q", k)
				}
			}
		case "@grants":
			g, err := plugin.ParseGrants(strings.Split(rest, ","))
			if err != nil {
				bad("%v", err)
			}
			c.grants = g
		case "@load":
			out, err := parseLangOutcome(rest)
			if err != nil {
				bad("%v", err)
			}
			c.load, loadSet = out, true
		case "@call":
			lhs, rhs, ok := strings.Cut(rest, "->")
			fields := strings.Fields(lhs)
			if !ok || len(fields) < 2 || len(fields) > 3 || fields[0] != "tool" {
				bad("want tool <name> [args] -> outcome")
			}
			out, err := parseLangOutcome(rhs)
			if err != nil {
				bad("%v", err)
			}
			call := langCall{line: n, tool: fields[1], want: out}
			if len(fields) == 3 {
				call.args = fields[2]
			}
			c.calls = append(c.calls, call)
		case "@log":
			q, err := strconv.Unquote(rest)
			if err != nil {
				bad("want a quoted fragment")
			}
			c.logs = append(c.logs, q)
		default:
			bad("unknown directive")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if c.attack == "" || c.host == "" || !loadSet {
		t.Fatalf("%s: every case says what it attacks (@attack), what the host must do (@host) and how loading ends (@load)", file)
	}
	return c
}

func parseLangOutcome(s string) (langOutcome, error) {
	word, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	var out langOutcome
	if word != "ok" {
		if !strings.HasPrefix(word, "plugin_") {
			return out, fmt.Errorf("%q is not ok or a plugin_ error code", word)
		}
		out.code = plugin.Code(word)
	}
	rest = strings.TrimSpace(rest)
	for rest != "" {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return out, fmt.Errorf("fragments must be quoted strings: %q", rest)
		}
		frag, _ := strconv.Unquote(q)
		out.fragments = append(out.fragments, frag)
		rest = strings.TrimSpace(rest[len(q):])
	}
	return out, nil
}
