package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"apconnect/host/plugin/plugintest"
)

// langPlugin builds a Rust or C plugin once per test binary, under name.
func langPlugin(t *testing.T, name string, build func(testing.TB, string) string, dir string) string {
	t.Helper()
	builtMu.Lock()
	path := built[name]
	builtMu.Unlock()
	if path != "" {
		return path
	}
	data, err := os.ReadFile(build(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), name+".wasm")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The Rust and C hello plugins and the Rust build of reactions, enabled
// in a config as an operator would (the entry inspect prints) and used
// through MCP by two agents on the real hub: the C plugin's pack expanded
// into the signed room.create, both validators refusing a self-greeting
// before anything is signed, both watchers waking the greeted agent, their
// tools, and the Rust reactions validator and tool in place of the Go one.
func TestRustAndCPluginsThroughMCP(t *testing.T) {
	t.Parallel()
	rust := langPlugin(t, "hello_rust", plugintest.BuildRust, "../../examples/plugins/hello_rust")
	c := langPlugin(t, "hello_c", plugintest.BuildC, "../../examples/plugins/hello_c")
	reactions := langPlugin(t, "reactions_rust", plugintest.BuildRust, "../../plugins/reactions")
	h := startHub(t)
	plugins := append(entries(t), pluginEntry(t, "hello_rust", rust), pluginEntry(t, "hello_c", c), pluginEntry(t, "reactions", reactions))
	alice := startWithPlugins(t, h, "alice", 0xA2, plugins)
	bob := startWithPlugins(t, h, "bob", 0xB2, plugins)

	list, err := bob.cs.ListTools(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		if strings.Contains(tl.Name, "_wave") || tl.Name == "reactions_summary" {
			names = append(names, tl.Name)
			if !tl.Annotations.ReadOnlyHint || !strings.Contains(tl.Description, "untrusted") {
				t.Errorf("tool %s: %+v", tl.Name, tl)
			}
		}
	}
	if strings.Join(names, " ") != "hello_c_wave hello_rust_wave reactions_summary" {
		t.Fatalf("plugin tools %v", names)
	}

	roomID := openRoom(t, h, alice, []any{map[string]any{"use": "hello_c:greetings/1.0"}, map[string]any{"use": "adp:reactions/1.0"}}, bob)
	state := call(t, bob.proc, "room_state", map[string]any{"room_id": roomID, "refresh": true})
	if !strings.Contains(mustJSON(t, state), `"hello.greeting"`) {
		t.Fatalf("the C plugin's pack type is not in the room: %v", state)
	}

	// Both validators refuse a self-greeting; no nonce is used.
	before := bob.lastNonce(t)
	code, data := callErr(t, bob.proc, "room_submit_event", map[string]any{"room_id": roomID, "type": "hello.greeting",
		"payload": map[string]any{"to": bob.id}})
	var by []string
	for _, e := range data["errors"].([]any) {
		if get(e, "path") == "/payload/to" && get(e, "message") == "do not greet yourself" {
			by = append(by, get(e, "plugin").(string))
		}
	}
	if code != "invalid_event" || strings.Join(by, " ") != "hello_rust hello_c" || bob.lastNonce(t) != before {
		t.Fatalf("self-greeting: %s %v", code, data)
	}

	// A greeting to alice wakes her through both watchers.
	greeting := submit(t, bob, roomID, "hello.greeting", map[string]any{"to": alice.id})
	call(t, alice.proc, "room_state", map[string]any{"room_id": roomID, "refresh": true})
	inbox := call(t, alice.proc, "inbox_next", map[string]any{"kinds": []any{"room.event.custom"}})
	var woke []string
	for _, it := range inbox["items"].([]any) {
		if get(it, "event_id") == get(greeting, "item", "event_id") && get(it, "message", "summary") == "Someone greeted you" {
			woke = append(woke, get(it, "plugin").(string)+":"+get(index(get(it, "suggested_tools"), 0)).(string))
		}
	}
	if strings.Join(woke, " ") != "hello_rust:hello_rust_wave hello_c:hello_c_wave" {
		t.Fatalf("inbox %v", inbox)
	}
	for _, tool := range []string{"hello_rust_wave", "hello_c_wave"} {
		if res := toolCall(t, alice.proc, tool, map[string]any{}); res.IsError || textOf(res) != "👋" {
			t.Errorf("%s: %s", tool, textOf(res))
		}
	}

	// The Rust reactions plugin validates and summarizes like the Go one.
	gid := get(greeting, "item", "event_id").(string)
	submit(t, alice, roomID, "reaction.create", map[string]any{"event_id": gid, "reaction": "agree"})
	missing := strings.Repeat("A", 43)
	code, data = callErr(t, alice.proc, "room_submit_event", map[string]any{"room_id": roomID, "type": "reaction.create",
		"payload": map[string]any{"event_id": missing, "reaction": "agree"}})
	if fe := index(data["errors"], 0); code != "invalid_event" || get(fe, "plugin") != "reactions" || get(fe, "message") != "this room has no event "+missing {
		t.Fatalf("reaction to a missing event: %s %v", code, data)
	}
	sum := structured(t, toolCall(t, alice.proc, "reactions_summary", map[string]any{"room_id": roomID}))
	if sum["reactions"] != float64(1) || get(index(sum["targets"], 0), "event_id") != gid || get(index(sum["targets"], 0), "reactors") != float64(1) {
		t.Fatalf("summary %v", sum)
	}
	if st := pluginState(t, alice, "hello_c"); st["state"] != "loaded" || st["failures"] != float64(0) {
		t.Errorf("hello_c state %v", st)
	}
}
