package plugin_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
)

// The hostile-plugin corpus: modules written without the guest SDK, one file
// per attack, each opening with directives (in comments) that say what it
// attacks and exactly what the host must do:
//
//	@attack  what the module does (required)
//	@host    what the host must do about it (required)
//	@build   extra flags for the builder (wat2wasm: --no-check)
//	@limits  key=value ... (memory_mib, instances, validate_ms, watch_ms,
//	         tool_ms, load_ms, stack_kib, max_output_kib)
//	@grants  validate,watch,tools,packs,propose:<type> (default: all but propose)
//	@load    ok | <code> ["fragment" ...]
//	@call    <op> <target> [<json arguments>] -> ok | <code> ["fragment" ...]
//	@rss     <concurrent calls> <op> <target> <MiB>
//	@log     "fragment" (a line of the plugin's log contains it)
//
// @call ops are validate <type>, watch <type>, tool <name> and pack <id>,
// run in order against the loaded plugin; "ok" fragments are looked for in
// the JSON of the result, error fragments in the error. A call that ends
// with plugin_timeout must also have returned within its deadline plus a
// grace period. @rss runs that many calls at once in a child process and
// bounds how far they raise its peak resident memory. After every case a
// well-behaved control plugin in the same Runtime must still answer, and
// the attacked plugin's pool must stay within its bound.
//
// hostileSources lists the directories of cases and how their files become
// modules; another language adds its directory (prebuilt or built by its
// own function) with one entry.
var hostileSources = []hostileSource{
	{Dir: "testdata/hostile/wat", Ext: ".wat", Build: buildWatCase},
	// Written with the Rust and C guest SDKs, built by their scripts.
	{Dir: "testdata/hostile/rust", Ext: ".rs", Build: func(t testing.TB, c *hostileCase) string { return plugintest.BuildRust(t, c.File) }},
	{Dir: "testdata/hostile/c", Ext: ".c", Build: func(t testing.TB, c *hostileCase) string { return plugintest.BuildC(t, c.File) }},
}

type hostileSource struct {
	Dir   string
	Ext   string
	Build func(t testing.TB, c *hostileCase) (wasmPath string)
}

// buildWatCase assembles a .wat case with wat2wasm.
func buildWatCase(t testing.TB, c *hostileCase) string {
	return plugintest.BuildWat(t, c.File, c.BuildFlags...)
}

// hostileCase is one parsed case file.
type hostileCase struct {
	File       string
	Name       string
	Attack     string
	Host       string
	BuildFlags []string
	Limits     plugin.Limits
	Grants     plugin.Grants
	Load       outcome
	Calls      []hostileCall
	RSS        []rssCheck
	Logs       []string
}

// outcome is an expected result: Code "" is success.
type outcome struct {
	Code      plugin.Code
	Fragments []string
}

type hostileCall struct {
	Line       int
	Op, Target string
	Args       string
	Want       outcome
}

type rssCheck struct {
	Line        int
	Concurrency int
	Op, Target  string
	MaxMiB      int
}

// controlWat is a well-behaved module loaded beside every case.
const controlWat = "testdata/hostile/control.wat"

func TestHostileCorpus(t *testing.T) {
	rt := plugintest.NewRuntime(t, plugin.Options{})
	control := plugintest.LoadWith(t, rt, plugintest.BuildWat(t, controlWat), plugin.AllGrants(), plugin.Limits{})
	total := 0
	for _, src := range hostileSources {
		files, err := filepath.Glob(filepath.Join(src.Dir, "*"+src.Ext))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no %s cases in %s", src.Ext, src.Dir)
		}
		for _, file := range files {
			c := parseHostileCase(t, file)
			total++
			t.Run(filepath.Base(src.Dir)+"/"+c.Name, func(t *testing.T) {
				runHostileCase(t, rt, src, c)
				res, err := control.CallTool(ctx(), "ping", nil, nil)
				if err != nil || res.Content[0].Text != "pong" {
					t.Fatalf("the control plugin stopped answering after %s: %v %+v", c.Name, err, res)
				}
			})
		}
	}
	t.Logf("%d hostile cases", total)
}

func runHostileCase(t *testing.T, rt *plugin.Runtime, src hostileSource, c *hostileCase) {
	wasm := src.Build(t, c)
	data, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Load(ctx(), wasm, plugin.Digest(data), c.Grants, c.Limits)
	if p != nil {
		t.Cleanup(func() { p.Close(ctx()) })
	}
	if !checkOutcome(t, fmt.Sprintf("%s: @load", c.Name), c.Load, err, nil) || p == nil {
		return
	}
	for _, call := range c.Calls {
		start := time.Now()
		res, err := hostileInvoke(p, call.Op, call.Target, call.Args)
		elapsed := time.Since(start)
		where := fmt.Sprintf("%s:%d: @call %s %s", c.File, call.Line, call.Op, call.Target)
		checkOutcome(t, where, call.Want, err, res)
		if plugin.CodeOf(err) == plugin.CodeTimeout {
			d := p.Limits().ValidateTimeout
			switch call.Op {
			case "watch":
				d = p.Limits().WatchTimeout
			case "tool":
				d = p.Limits().ToolTimeout
			case "pack":
				d = p.Limits().LoadTimeout
			}
			// A bound, not a speed target: the deadline must be honoured,
			// whatever the guest does, within a generous grace period.
			if grace := 2 * time.Second; elapsed > d+grace {
				t.Errorf("%s: timed out after %v with a deadline of %v", where, elapsed, d)
			}
		}
	}
	h := p.Health(-1)
	if h.Instances > p.Limits().MaxInstances {
		t.Errorf("%s: %d instances exist, the bound is %d", c.Name, h.Instances, p.Limits().MaxInstances)
	}
	for _, l := range h.Log {
		if strings.ContainsFunc(l.Text, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("%s: a log line keeps control characters: %q", c.Name, l.Text)
		}
	}
	for _, want := range c.Logs {
		if !slices.ContainsFunc(h.Log, func(l plugin.LogLine) bool { return strings.Contains(l.Text, want) }) {
			t.Errorf("%s: no log line contains %q: %+v", c.Name, want, h.Log)
		}
	}
	for _, r := range c.RSS {
		checkRSS(t, c, wasm, r)
	}
}

// hostileInvoke runs one operation of a case.
func hostileInvoke(p *plugin.Plugin, op, target, args string) (any, error) {
	switch op {
	case "validate":
		return p.ValidateEvent(ctx(), plugin.Proposal{Type: target, Payload: map[string]any{}}, room())
	case "watch":
		return p.Watch(ctx(), []plugin.Record{{Seq: 1, EventID: eventA, Type: target, Actor: otherID, AcceptedAt: 1}}, room())
	case "tool":
		var raw json.RawMessage
		if args != "" {
			raw = json.RawMessage(args)
		}
		return p.CallTool(ctx(), target, raw, nil)
	case "pack":
		return p.Pack(ctx(), target)
	}
	return nil, fmt.Errorf("unknown op %q", op)
}

// checkOutcome compares err (and the result of a success) with want.
func checkOutcome(t *testing.T, where string, want outcome, err error, res any) bool {
	t.Helper()
	if want.Code == "" {
		if err != nil {
			t.Errorf("%s: want success, got %v", where, err)
			return false
		}
		if len(want.Fragments) > 0 {
			b, _ := json.Marshal(res)
			for _, f := range want.Fragments {
				if !strings.Contains(string(b), f) {
					t.Errorf("%s: the result does not contain %q: %s", where, f, b)
				}
			}
		}
		return true
	}
	if err == nil {
		t.Errorf("%s: want %s, got success %+v", where, want.Code, res)
		return false
	}
	if got := plugin.CodeOf(err); got != want.Code {
		t.Errorf("%s: want %s, got %s: %v", where, want.Code, got, err)
		return false
	}
	for _, f := range want.Fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s: the error does not contain %q: %v", where, f, err)
		}
	}
	return false
}

// parseHostileCase reads the directives of a case file.
func parseHostileCase(t *testing.T, file string) *hostileCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &hostileCase{File: file, Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), Grants: plugin.AllGrants()}
	loadSet := false
	var last *string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		body, isComment := stripComment(line)
		if !isComment {
			last = nil
			continue
		}
		if !strings.HasPrefix(body, "@") {
			if last != nil && body != "" {
				*last += " " + body // continuation of @attack or @host
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
			c.Attack, last = rest, &c.Attack
		case "@host":
			c.Host, last = rest, &c.Host
		case "@build":
			c.BuildFlags = strings.Fields(rest)
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
					c.Limits.MemoryBytes = uint64(i) << 20
				case "instances":
					c.Limits.MaxInstances = i
				case "validate_ms":
					c.Limits.ValidateTimeout = ms
				case "watch_ms":
					c.Limits.WatchTimeout = ms
				case "tool_ms":
					c.Limits.ToolTimeout = ms
				case "load_ms":
					c.Limits.LoadTimeout = ms
				case "max_output_kib":
					c.Limits.MaxOutputBytes = i << 10
				default:
					bad("unknown limit %q", k)
				}
			}
		case "@grants":
			g, err := plugin.ParseGrants(strings.Split(rest, ","))
			if err != nil {
				bad("%v", err)
			}
			c.Grants = g
		case "@load":
			out, err := parseOutcome(rest)
			if err != nil {
				bad("%v", err)
			}
			c.Load, loadSet = out, true
		case "@call":
			lhs, rhs, ok := strings.Cut(rest, "->")
			if !ok {
				bad("want <op> <target> [args] -> outcome")
			}
			f := strings.Fields(lhs)
			if len(f) < 2 || len(f) > 3 || !slices.Contains([]string{"validate", "watch", "tool", "pack"}, f[0]) {
				bad("want validate|watch|tool|pack <target> [args]")
			}
			out, err := parseOutcome(rhs)
			if err != nil {
				bad("%v", err)
			}
			call := hostileCall{Line: n, Op: f[0], Target: f[1], Want: out}
			if len(f) == 3 {
				call.Args = f[2]
			}
			c.Calls = append(c.Calls, call)
		case "@log":
			q, err := strconv.Unquote(rest)
			if err != nil {
				bad("want a quoted fragment")
			}
			c.Logs = append(c.Logs, q)
		case "@rss":
			f := strings.Fields(rest)
			if len(f) != 4 {
				bad("want <concurrent calls> <op> <target> <MiB>")
			}
			conc, err1 := strconv.Atoi(f[0])
			mib, err2 := strconv.Atoi(strings.TrimSuffix(f[3], "MiB"))
			if err1 != nil || err2 != nil || conc < 1 || mib < 1 {
				bad("want <concurrent calls> <op> <target> <MiB>")
			}
			c.RSS = append(c.RSS, rssCheck{Line: n, Concurrency: conc, Op: f[1], Target: f[2], MaxMiB: mib})
		default:
			bad("unknown directive")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if c.Attack == "" || c.Host == "" || !loadSet {
		t.Fatalf("%s: every case says what it attacks (@attack), what the host must do (@host) and how loading ends (@load)", file)
	}
	return c
}

// stripComment returns the text of a comment line in any of the corpus's
// languages (";;" WebAssembly text, "//" Rust and C, "#").
func stripComment(line string) (string, bool) {
	for _, p := range []string{";;", "//", "#", "*"} {
		if strings.HasPrefix(line, p) {
			return strings.TrimSpace(strings.TrimLeft(line[len(p):], "/*;#")), true
		}
	}
	return "", false
}

// parseOutcome reads "ok" or "<code>", then quoted fragments.
func parseOutcome(s string) (outcome, error) {
	s = strings.TrimSpace(s)
	word, rest, _ := strings.Cut(s, " ")
	var out outcome
	if word != "ok" {
		if !strings.HasPrefix(word, "plugin_") {
			return out, fmt.Errorf("%q is not ok or a plugin_ error code", word)
		}
		out.Code = plugin.Code(word)
	}
	rest = strings.TrimSpace(rest)
	for rest != "" {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return out, fmt.Errorf("fragments must be quoted strings: %q", rest)
		}
		frag, _ := strconv.Unquote(q)
		out.Fragments = append(out.Fragments, frag)
		rest = strings.TrimSpace(rest[len(q):])
	}
	return out, nil
}

// rssChildEnv carries an @rss check to the child process.
const rssChildEnv = "APCONNECT_HOSTILE_RSS_CHILD"

type rssChildJob struct {
	Wasm        string
	Limits      plugin.Limits
	Grants      plugin.Grants
	Concurrency int
	Op, Target  string
}

// checkRSS runs r in a child process (this test binary) and bounds the
// growth of its peak resident set while the calls run.
func checkRSS(t *testing.T, c *hostileCase, wasm string, r rssCheck) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Fatalf("%s:%d: @rss measures /proc/self/status, which only Linux has", c.File, r.Line)
	}
	job, _ := json.Marshal(rssChildJob{Wasm: wasm, Limits: c.Limits, Grants: c.Grants, Concurrency: r.Concurrency, Op: r.Op, Target: r.Target})
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+string(job))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s:%d: @rss child: %v\n%s", c.File, r.Line, err, out)
	}
	var growth int64
	reported := false
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "peak_rss_growth_bytes="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			// A few pages below the start is no growth (the child's RSS
			// moves as it runs), not a missing report.
			growth, reported = max(n, 0), err == nil
		}
	}
	if !reported {
		t.Fatalf("%s:%d: @rss child reported nothing:\n%s", c.File, r.Line, out)
	}
	t.Logf("%s: %d concurrent %s %s calls raised peak RSS by %.1f MiB (bound %d MiB)", c.Name, r.Concurrency, r.Op, r.Target, float64(growth)/(1<<20), r.MaxMiB)
	if growth > int64(r.MaxMiB)<<20 {
		t.Errorf("%s:%d: %d concurrent %s %s calls raised peak RSS by %.1f MiB; the bound is %d MiB",
			c.File, r.Line, r.Concurrency, r.Op, r.Target, float64(growth)/(1<<20), r.MaxMiB)
	}
}

// TestHostileRSSChild is the child process of an @rss check; outside one
// (without its environment variable) it does nothing.
func TestHostileRSSChild(t *testing.T) {
	spec := os.Getenv(rssChildEnv)
	if spec == "" {
		return
	}
	var job rssChildJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	rt := plugintest.NewRuntime(t, plugin.Options{})
	p := plugintest.LoadWith(t, rt, job.Wasm, job.Grants, job.Limits)
	if err := p.Warm(ctx(), job.Concurrency); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	// Writing 5 to clear_refs resets the peak (VmHWM) to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("cannot reset the peak RSS: %v", err)
	}
	before := procStatus(t, "VmHWM")
	var wg sync.WaitGroup
	for range job.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := hostileInvoke(p, job.Op, job.Target, "")
			fmt.Printf("call: %v\n", err)
		}()
	}
	wg.Wait()
	after := procStatus(t, "VmHWM")
	fmt.Printf("peak_rss_growth_bytes=%d\n", after-before)
}

// procStatus reads a kB field of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
