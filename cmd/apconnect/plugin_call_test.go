package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/plugin/plugintest"
)

const (
	callSelf  = "did:agent:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
	callOther = "did:agent:Speaker-00000000000000000000000000000000000"
	callEvent = "cJg9aS9kgYX-vm1vpgdjCuaGSffm_EW5RoAJbAbk-ts"
	callRoom  = "d8ftedhpqhsusbg001tg"
)

// callCache is plugintest's on-disk compilation cache (so that a Go plugin
// is compiled once, even under -race), or a fresh directory.
func callCache(t *testing.T) string {
	if dir := plugintest.CacheDir(); dir != "" {
		return dir
	}
	return t.TempDir()
}

// TestPluginCallHello runs every operation of the three hello plugins (Go,
// Rust, C) from the shell: the same envelopes, the same answers.
func TestPluginCallHello(t *testing.T) {
	t.Parallel()
	builds := []struct {
		name  string
		build func(testing.TB, string) string
		dir   string
	}{
		{"hello", plugintest.Build, "../../examples/plugins/hello"},
		{"hello_rust", plugintest.BuildRust, "../../examples/plugins/hello_rust"},
		{"hello_c", plugintest.BuildC, "../../examples/plugins/hello_c"},
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			wasm := b.build(t, b.dir)
			cache := callCache(t)
			call := func(stdin string, args ...string) (int, map[string]any, string) {
				t.Helper()
				code, out, errOut := runCLIStdin(t, stdin, append([]string{"plugin", "call", "--cache", cache}, args...)...)
				var v map[string]any
				if out != "" {
					if err := json.Unmarshal([]byte(out), &v); err != nil {
						t.Fatalf("output is not JSON: %v\n%s", err, out)
					}
				}
				return code, v, errOut
			}
			jsonOf := func(v any) string { b, _ := json.Marshal(v); return string(b) }

			code, d, errOut := call("", wasm, "describe")
			if code != 0 || d["name"] != b.name || jsonOf(d["validates"]) != `["hello.greeting"]` {
				t.Fatalf("describe: exit %d %v %s", code, d, errOut)
			}

			proposal := func(to string) string {
				return `{"now_ms": 1779753700000, "proposal": {"type": "hello.greeting", "actor": "` + callSelf + `", "payload": {"to": "` + to + `"}},
					"room": {"room_id": "` + callRoom + `", "self": {"agent_id": "` + callSelf + `"}}}`
			}
			code, v, errOut := call(proposal(callSelf), wasm, "validate")
			if code != 0 || jsonOf(v) != `{"errors":[{"message":"do not greet yourself","path":"/payload/to","plugin":"`+b.name+`"}],"ok":false}` {
				t.Errorf("validate (refused): exit %d %v %s", code, v, errOut)
			}
			code, v, _ = call(proposal(callOther), wasm, "validate")
			if code != 0 || jsonOf(v) != `{"errors":[],"ok":true}` {
				t.Errorf("validate (fine): exit %d %v", code, v)
			}

			watch := `{"room": {"room_id": "` + callRoom + `", "self": {"agent_id": "` + callSelf + `"}}, "records": [
				{"seq": 7, "event_id": "` + callEvent + `", "type": "hello.greeting", "actor": "` + callOther + `", "accepted_at": 1779753700000, "payload": {"to": "` + callSelf + `"}}]}`
			code, v, errOut = call(watch, wasm, "watch")
			items, _ := v["items"].([]any)
			if code != 0 || len(items) != 1 {
				t.Fatalf("watch: exit %d %v %s", code, v, errOut)
			}
			it := items[0].(map[string]any)
			if it["plugin"] != b.name || it["seq"] != 7.0 || it["room_id"] != callRoom || it["event_id"] != callEvent ||
				it["summary"] != "Someone greeted you" || jsonOf(it["suggested_tools"]) != `["`+b.name+`_wave"]` {
				t.Errorf("watch item %v", it)
			}

			for _, op := range []string{"wave", "tool:wave"} {
				code, v, errOut = call(`{"arguments": {}}`, wasm, op)
				if code != 0 || jsonOf(v) != `{"content":[{"text":"👋","type":"text"}]}` {
					t.Errorf("%s: exit %d %v %s", op, code, v, errOut)
				}
			}
			code, v, _ = call(`{"name": "`+b.name+`:greetings"}`, wasm, "pack")
			if code != 0 || v["name"] != b.name+":greetings" || v["version"] != "1.0" {
				t.Errorf("pack: exit %d %v", code, v)
			}

			// Failures of the call: the error object, exit 1.
			code, v, _ = call(`{}`, wasm, "shout")
			if e, _ := v["error"].(map[string]any); code != 1 || e["code"] != "plugin_unknown" || !strings.Contains(e["message"].(string), `no tool "shout"`) {
				t.Errorf("unknown tool: exit %d %v", code, v)
			}
			code, v, _ = call(`{"arguments": {"x": 1}, "context": {}}`, wasm, "wave")
			if code != 0 {
				t.Errorf("extra arguments: exit %d %v", code, v)
			}
			// Mistakes in the envelope: usage errors, exit 2.
			for stdin, want := range map[string]string{
				`{"proposal": {}, "room": {"room_id": "r"}, "rooms": 1}`: `unknown field "rooms"`,
				`{"op": "watch", "room": {"room_id": "r"}}`:              `the envelope says op "watch"`,
				`{"room": {"room_id": "r"}}`:                             `validate needs {"proposal"`,
				`{"a": 1, "a": 2}`:                                       "not strict JSON",
				`[1]`:                                                    "one JSON object",
			} {
				code, _, errOut := call(stdin, wasm, "validate")
				if code != 2 || !strings.Contains(errOut, want) {
					t.Errorf("%s: exit %d, stderr %q does not say %q", stdin, code, errOut, want)
				}
			}
		})
	}
}

// TestPluginCallLimits: plugin call runs under the server's limits, here
// a 1 MiB memory cap, below the Rust plugin's 1 MiB stack and its data.
func TestPluginCallLimits(t *testing.T) {
	t.Parallel()
	wasm := plugintest.BuildRust(t, "../../examples/plugins/hello_rust")
	code, out, _ := runCLIStdin(t, "", "plugin", "call", "--no-cache", "--memory-mib", "1", wasm, "describe")
	if code != 1 || !strings.Contains(out, `"code": "plugin_invalid_module"`) || !strings.Contains(out, "over limit of 16 pages") {
		t.Errorf("exit %d\n%s", code, out)
	}
	// The deadline of the flag holds, and so does the memory cap: the
	// hostile C plugins' spin and allocation bomb.
	runaway := plugintest.BuildC(t, "../../host/plugin/testdata/hostile/c/runaway.c")
	bomb := plugintest.BuildC(t, "../../host/plugin/testdata/hostile/c/alloc_bomb.c")
	start := time.Now()
	code, out, _ = runCLIStdin(t, "", "plugin", "call", "--no-cache", "--tool-ms", "100", runaway, "spin")
	if code != 1 || !strings.Contains(out, `"code": "plugin_timeout"`) || !strings.Contains(out, "did not finish within 100ms") || time.Since(start) > 20*time.Second {
		t.Errorf("spin: exit %d after %v\n%s", code, time.Since(start), out)
	}
	code, out, _ = runCLIStdin(t, "", "plugin", "call", "--no-cache", "--memory-mib", "8", "--tool-ms", "30000", bomb, "hog")
	if code != 1 || !strings.Contains(out, `"code": "plugin_trap"`) {
		t.Errorf("hog: exit %d\n%s", code, out)
	}
	code, _, errOut := runCLIStdin(t, "", "plugin", "call", "--tool-ms", "0", wasm, "wave")
	if code != 2 || !strings.Contains(errOut, "deadlines must be 1 to 60000 ms") {
		t.Errorf("exit %d %s", code, errOut)
	}
	code, _, errOut = runCLIStdin(t, "", "plugin", "call", wasm)
	if code != 2 || !strings.Contains(errOut, "call needs the plugin FILE and one OP") {
		t.Errorf("exit %d %s", code, errOut)
	}
}

// commandModule is the smallest WASI command: _start and a memory.
var commandModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type () -> ()
	0x03, 0x02, 0x01, 0x00, // one function of type 0
	0x05, 0x03, 0x01, 0x00, 0x01, // one memory of one page
	0x07, 0x13, 0x02, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00,
	0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // an empty body
}

// TestPluginCommandModule: refusing a command module names the fix for
// every language, and the error code appears once.
func TestPluginCommandModule(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "command.wasm")
	if err := os.WriteFile(path, commandModule, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "plugin", "inspect", "--no-cache", path)
	if code != 1 || strings.Count(errOut, "(plugin_invalid_module)") != 1 || strings.Contains(errOut, "load: plugin:") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"WASI command", "-buildmode=c-shared", "--crate-type cdylib", "-mexec-model=reactor"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("%q lacks %q", errOut, want)
		}
	}
	code, out, _ := runCLIStdin(t, "", "plugin", "call", "--no-cache", path, "describe")
	if code != 1 || strings.Count(out, "(plugin_invalid_module)") != 1 {
		t.Errorf("call: exit %d: %s", code, out)
	}
}
