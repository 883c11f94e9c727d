package e2e

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"apconnect/host/config"
	"apconnect/host/connector"
	"apconnect/host/hub/hubtest"
	"apconnect/host/mcpserver"
	"apconnect/host/plugin"
	"apconnect/host/plugin/plugintest"
	"apconnect/host/pluginhost"
	"apconnect/host/proto/adp"
	"apconnect/host/toolcatalog"
)

// Plugins end to end: real .wasm modules (the first-party plugins, the
// standup example, a proposing test plugin and host/plugin's hostile test
// plugin) built with plugintest, loaded by host/pluginhost from a config
// exactly as `apconnect mcp` loads them, behind the MCP server, against a
// real hub. The in-process servers share plugintest's compilation cache
// (compiled once per machine, also under -race); TestPluginsMCPProcess runs
// the real binary.

// pluginDirs are the plugin modules these tests build, by plugin name.
var pluginDirs = map[string]string{
	"reactions":    "../../plugins/reactions",
	"deliberation": "../../plugins/deliberation",
	"curation":     "../../plugins/curation",
	"moderation":   "../../plugins/moderation",
	"realtime":     "../../plugins/realtime",
	"standup":      "../../examples/plugins/standup",
	"voter":        "testdata/voter",
	"full":         "../../host/plugin/testdata/full",
}

// firstParty are the five first-party plugins.
var firstParty = []string{"reactions", "deliberation", "curation", "moderation", "realtime"}

var (
	builtMu sync.Mutex
	built   = map[string]string{} // name → .wasm path, kept for the test binary
	builtIn string
)

// buildPlugins builds the named plugins in parallel (once per test binary)
// and returns their .wasm paths.
func buildPlugins(t *testing.T, names ...string) map[string]string {
	t.Helper()
	builtMu.Lock()
	if builtIn == "" {
		dir, err := os.MkdirTemp("", "apconnect-e2e-plugins-")
		if err != nil {
			builtMu.Unlock()
			t.Fatal(err)
		}
		builtIn = dir
	}
	var missing []string
	for _, n := range names {
		if built[n] == "" {
			missing = append(missing, n)
		}
	}
	builtMu.Unlock()
	if len(missing) > 0 {
		t.Run("build", func(t *testing.T) {
			for _, n := range missing {
				t.Run(n, func(t *testing.T) {
					t.Parallel()
					data, err := os.ReadFile(plugintest.Build(t, pluginDirs[n]))
					if err != nil {
						t.Fatal(err)
					}
					// Parallel tests may build the same plugin at once
					// (gobuild compiles it once): the rename keeps a
					// reader from seeing a half-written file.
					path := filepath.Join(builtIn, n+".wasm")
					tmp, err := os.CreateTemp(builtIn, n+".wasm.*")
					if err != nil {
						t.Fatal(err)
					}
					_, err = tmp.Write(data)
					if cerr := tmp.Close(); err == nil {
						err = cerr
					}
					if err == nil {
						err = os.Rename(tmp.Name(), path)
					}
					if err != nil {
						t.Fatal(err)
					}
					builtMu.Lock()
					built[n] = path
					builtMu.Unlock()
				})
			}
		})
	}
	out := map[string]string{}
	builtMu.Lock()
	defer builtMu.Unlock()
	for _, n := range names {
		if built[n] == "" {
			t.Fatalf("plugin %s was not built", n)
		}
		out[n] = built[n]
	}
	return out
}

var (
	inspectedMu sync.Mutex
	inspected   = map[string]*plugin.Inspection{} // by path
)

// pluginEntry is the [[plugins]] entry `apconnect plugin inspect` prints
// for a module: its digest and exactly the grants it needs.
func pluginEntry(t *testing.T, name, path string) config.Plugin {
	t.Helper()
	inspectedMu.Lock()
	defer inspectedMu.Unlock()
	ins := inspected[path]
	if ins == nil {
		var err error
		if ins, err = plugintest.Runtime(t).Inspect(bg, path, plugin.Limits{LoadTimeout: time.Minute}); err != nil {
			t.Fatalf("inspect %s: %v", name, err)
		}
		inspected[path] = ins
	}
	return config.Plugin{Name: name, Path: path, SHA256: ins.Digest, Grants: ins.Grants.Strings(),
		Limits: config.DefaultPluginLimits(), Enabled: true}
}

// entries returns the config entries of the named plugins.
func entries(t *testing.T, names ...string) []config.Plugin {
	t.Helper()
	paths := buildPlugins(t, names...)
	var out []config.Plugin
	for _, n := range names {
		out = append(out, pluginEntry(t, n, paths[n]))
	}
	return out
}

// inproc is a connector with plugins behind an in-process MCP server.
type inproc struct {
	*proc
	conn *connector.Connector
	set  *pluginhost.Set
	id   string
}

// startWithPlugins loads plugins from a config as `apconnect mcp` does and
// serves the connector of the agent whose seed repeats seed over in-memory
// transports. Deadlines are long (the race detector and a busy machine must
// not fail a verdict) except for the hostile plugin "full", whose
// deadlines the tests exercise: it keeps the config's.
func startWithPlugins(t *testing.T, h *hubtest.Hub, name string, seed byte, plugins []config.Plugin) *inproc {
	t.Helper()
	cfg, err := config.Default(t.TempDir(), config.DefaultOptions{HostURL: h.Origin(), HostLabel: "hub", HostCAFile: h.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins = plugins
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	set := pluginhost.Load(bg, cfg, pluginhost.Options{Cache: plugintest.CompilationCache(), Logger: logger,
		Limits: func(name string, l *plugin.Limits) {
			l.LoadTimeout = time.Minute
			if name != "full" {
				l.ValidateTimeout, l.WatchTimeout, l.ToolTimeout = 10*time.Second, 10*time.Second, 20*time.Second
			}
		}})
	t.Cleanup(func() { _ = set.Close(bg) })
	agent := hubtest.NewAgent(seed)
	conn, err := connector.New(bg, connector.Options{Config: cfg, Signer: agent.Signer, WriteLimits: &adp.Limits{}, Logger: logger,
		Plugins: set.Registry, PluginFailures: set.Failures()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	conn.Start(bg) // live sync and the outbox, as in apconnect mcp
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(conn, mcpserver.Options{StrictOutput: true, Logger: logger}).Connect(bg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-" + name, Version: "0"}, nil).Connect(bg, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &inproc{proc: &proc{t: t, name: name, cs: cs, stderr: logs, closed: true}, conn: conn, set: set, id: conn.AgentID()}
}

// toolCall calls any tool by its full name and returns the raw result.
func toolCall(t testing.TB, p *proc, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := p.cs.CallTool(bg, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", p.name, name, err, p.stderr.String())
	}
	return res
}

// structured returns a result's structured content as plain JSON values.
func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var m map[string]any
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func index(v any, i int) any {
	a, _ := v.([]any)
	if i >= len(a) {
		return nil
	}
	return a[i]
}

// lastNonce is the agent's last allocated nonce.
func (a *inproc) lastNonce(t *testing.T) int64 {
	t.Helper()
	n, err := a.conn.Store().Read().LastNonce(bg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// openRoom creates a public room with types and lets the others join it as
// speakers.
func openRoom(t *testing.T, h *hubtest.Hub, creator *inproc, types []any, joiners ...*inproc) string {
	t.Helper()
	now := time.Now().UnixMilli()
	r := call(t, creator.proc, "room_create", map[string]any{"host": h.Origin(), "topic": "plugins", "visibility": "public",
		"start_time": now - 1000, "end_time": now + 3600_000, "types": types, "policy": openRoles})
	roomID := get(r, "room", "room_id").(string)
	for _, j := range joiners {
		if r := call(t, j.proc, "room_join", map[string]any{"host": h.Origin(), "room_id": roomID, "role": "speaker"}); r["status"] != "joined" {
			t.Fatalf("join %v", r)
		}
	}
	return roomID
}

func submit(t *testing.T, a *inproc, roomID, typ string, payload map[string]any) map[string]any {
	t.Helper()
	r := call(t, a.proc, "room_submit_event", map[string]any{"room_id": roomID, "type": typ, "payload": payload, "on_head_mismatch": "send_anyway"})
	if r["status"] != "sent" {
		t.Fatalf("%s %s: %v", a.name, typ, r)
	}
	return r
}

// pluginState returns identity_current's entry of a plugin.
func pluginState(t *testing.T, a *inproc, name string) map[string]any {
	t.Helper()
	for _, p := range call(t, a.proc, "identity_current", nil)["plugins"].([]any) {
		if m := p.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("identity_current lists no plugin %s", name)
	return nil
}

// Every first-party plugin, the standup example and a proposing plugin
// through MCP: their tools listed with host-set annotations, a plugin pack
// expanded into the signed room.create, a watch-made inbox item, a
// validator refusing an invalid poll.vote before anything is signed, a
// proposing tool whose vote goes through the write path (and through the
// deliberation validator), and the tools reading the room.
func TestPluginsThroughMCP(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	names := append(slices.Clone(firstParty), "standup", "voter")
	plugins := entries(t, names...)
	alice := startWithPlugins(t, h, "alice", 0xA1, plugins)
	bob := startWithPlugins(t, h, "bob", 0xB0, plugins)

	// The tools, with the host's annotations.
	list, err := bob.cs.ListTools(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	for _, n := range []string{"reactions_summary", "deliberation_tally", "curation_graph", "moderation_active_claims", "realtime_sessions", "standup_summary"} {
		tl := tools[n]
		if tl == nil || !tl.Annotations.ReadOnlyHint || *tl.Annotations.DestructiveHint || !strings.Contains(tl.Description, "untrusted") {
			t.Fatalf("tool %s: %+v", n, tl)
		}
	}
	if tl := tools["voter_vote"]; tl == nil || tl.Annotations.ReadOnlyHint || !*tl.Annotations.DestructiveHint {
		t.Fatalf("proposing tool voter_vote: %+v", tl)
	}
	if len(list.Tools) != len(toolcatalog.Names())+7 {
		t.Fatalf("%d tools listed", len(list.Tools))
	}

	// A room importing a registered pack and the standup plugin's pack:
	// the plugin pack is expanded into an inline definition before signing.
	roomID := openRoom(t, h, alice, []any{
		map[string]any{"use": "adp:deliberation/1.0"},
		map[string]any{"use": "example:standup/1.0"},
	}, bob)
	resp := h.Do("GET", "/v1/rooms/"+roomID+"/events?after_seq=0&limit=1", nil, nil)
	var page struct {
		Items []struct {
			Envelope struct {
				Event struct {
					Payload struct {
						Types []map[string]any `json:"types"`
					} `json:"payload"`
				} `json:"event"`
			} `json:"envelope"`
		} `json:"result"`
	}
	resp.Decode(t, &page)
	if resp.Status != 200 || len(page.Items) != 1 {
		t.Fatalf("genesis record: %d %s", resp.Status, resp.Body)
	}
	decls := page.Items[0].Envelope.Event.Payload.Types
	if len(decls) != 2 || decls[0]["use"] != "adp:deliberation/1.0" || decls[1]["type"] != "standup.report" || decls[1]["kind"] != "message" ||
		decls[1]["use"] != nil || get(decls[1], "schema", "properties", "date", "type") != "string" {
		t.Fatalf("signed type declarations: %v", decls)
	}
	room := h.Do("GET", "/v1/rooms/"+roomID, nil, nil)
	if room.Status != 200 || !strings.Contains(string(room.Body), `"standup.report"`) || !strings.Contains(string(room.Body), `"poll.vote"`) {
		t.Fatalf("the hub's room resource lacks the types: %d %s", room.Status, room.Body)
	}
	state := call(t, bob.proc, "room_state", map[string]any{"room_id": roomID, "refresh": true})
	if !strings.Contains(mustJSON(t, state), `"standup.report"`) {
		t.Fatalf("bob's verified registry lacks standup.report: %v", state)
	}

	// alice opens a poll; bob's deliberation watcher wakes him.
	poll := submit(t, alice, roomID, "poll.create", map[string]any{"poll_id": "p1", "question": "Ship on Friday?",
		"options": []any{map[string]any{"id": "yes", "label": "Yes"}, map[string]any{"id": "no", "label": "No"}}})
	pollID := get(poll, "item", "event_id").(string)
	call(t, bob.proc, "room_state", map[string]any{"room_id": roomID, "refresh": true})
	inbox := call(t, bob.proc, "inbox_next", map[string]any{"kinds": []any{"room.event.custom"}})
	items, _ := inbox["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("custom inbox items %v", inbox)
	}
	it := items[0].(map[string]any)
	summary, _ := get(it, "message", "summary").(string)
	if it["plugin"] != "deliberation" || it["event_id"] != pollID || it["actor"] != alice.id || it["room_id"] != roomID ||
		it["seq"] != get(poll, "item", "seq") || !strings.HasPrefix(summary, "Poll to vote on: Ship on Friday?") || len([]rune(summary)) > 160 {
		t.Fatalf("watch item %v", it)
	}
	for _, st := range it["suggested_tools"].([]any) {
		if _, ok := tools[st.(string)]; !ok {
			t.Fatalf("suggested tool %v does not exist", st)
		}
	}

	// An invalid vote is refused by the deliberation validator before
	// anything is signed: no nonce is used.
	before := bob.lastNonce(t)
	code, data := callErr(t, bob.proc, "room_submit_event", map[string]any{"room_id": roomID, "type": "poll.vote",
		"payload": map[string]any{"poll_event_id": pollID, "option_ids": []any{"maybe"}}})
	fe := index(data["errors"], 0)
	if code != "invalid_event" || get(fe, "plugin") != "deliberation" || get(fe, "path") != "/payload/option_ids/0" {
		t.Fatalf("validator refusal: %s %v", code, data)
	}
	if after := bob.lastNonce(t); after != before {
		t.Fatalf("a refused write used a nonce: %d → %d", before, after)
	}

	// The proposing tool: an invalid vote is refused by the same
	// validator, a valid one is signed and submitted.
	res := toolCall(t, bob.proc, "voter_vote", map[string]any{"room_id": roomID, "poll_event_id": pollID, "option_ids": []any{"maybe"}})
	pr := index(structured(t, res)["proposal_results"], 0)
	if res.IsError || get(pr, "status") != "refused" || get(pr, "error", "code") != "invalid_event" ||
		get(index(get(pr, "error", "data", "errors"), 0), "plugin") != "deliberation" || bob.lastNonce(t) != before {
		t.Fatalf("refused proposal %s", textOf(res))
	}
	res = toolCall(t, bob.proc, "voter_vote", map[string]any{"room_id": roomID, "poll_event_id": pollID, "option_ids": []any{"yes"}})
	pr = index(structured(t, res)["proposal_results"], 0)
	if res.IsError || get(pr, "status") != "sent" || get(pr, "type") != "poll.vote" || get(pr, "result", "item", "type") != "poll.vote" ||
		get(pr, "result", "item", "actor") != bob.id || !strings.Contains(textOf(res), "poll.vote: sent at seq") {
		t.Fatalf("proposal %s", textOf(res))
	}

	// A first-party tool reads the room: bob's vote counts.
	call(t, alice.proc, "room_state", map[string]any{"room_id": roomID, "refresh": true})
	tally := structured(t, toolCall(t, alice.proc, "deliberation_tally", map[string]any{"room_id": roomID, "include_votes": true}))
	p0 := index(tally["polls"], 0)
	if tally["complete"] != true || get(p0, "poll_event_id") != pollID || get(p0, "voters") != float64(1) ||
		get(index(get(p0, "options"), 0), "votes") != float64(1) || get(index(get(p0, "votes"), 0), "actor") != bob.id {
		t.Fatalf("tally %v", tally)
	}

	// The standup pack's type in use, its validator and its tool.
	today := time.Now().UTC().Format("2006-01-02")
	submit(t, bob, roomID, "standup.report", map[string]any{"date": today, "done": []any{"wired the plugins"},
		"blockers": []any{map[string]any{"summary": "review please", "waiting_on": alice.id}}})
	if code, data := callErr(t, bob.proc, "room_submit_event", map[string]any{"room_id": roomID, "type": "standup.report",
		"payload": map[string]any{"date": today, "done": []any{"again"}}}); code != "invalid_event" || get(index(data["errors"], 0), "plugin") != "standup" {
		t.Fatalf("second report: %s %v", code, data)
	}
	call(t, alice.proc, "room_state", map[string]any{"room_id": roomID, "refresh": true})
	sum := structured(t, toolCall(t, alice.proc, "standup_summary", map[string]any{"room_id": roomID}))
	if !strings.Contains(mustJSON(t, sum), "review please") {
		t.Fatalf("standup summary %v", sum)
	}

	// type.define may import the plugin pack too: expanded into the one
	// inline definition it brings, with the override applied.
	def := submit(t, alice, roomID, "type.define", map[string]any{"use": "example:standup/1.0",
		"overrides": map[string]any{"standup.report": map[string]any{"instructions": "Be brief."}}})
	rec := h.Do("GET", fmt.Sprintf("/v1/rooms/%s/events?after_seq=%d&limit=1", roomID, int64(get(def, "item", "seq").(float64))-1), nil, nil)
	if !strings.Contains(string(rec.Body), `"payload":{"description":"What an agent did`) || !strings.Contains(string(rec.Body), `"instructions":"Be brief."`) ||
		strings.Contains(string(rec.Body), `"use"`) {
		t.Fatalf("signed type.define: %s", rec.Body)
	}

	// identity_current reports every plugin.
	st := pluginState(t, bob, "deliberation")
	if st["state"] != "loaded" || st["loaded"] != true || st["version"] != "1.0.0" || st["failures"] != float64(0) || st["calls"].(float64) < 3 ||
		!slices.Contains(st["tools"].([]any), any("deliberation_tally")) || !slices.Contains(st["grants"].([]any), any("validate")) {
		t.Fatalf("deliberation state %v", st)
	}
	if st := pluginState(t, bob, "voter"); !slices.Contains(st["grants"].([]any), any("propose:poll.vote")) {
		t.Fatalf("voter state %v", st)
	}
}

// A hostile plugin and a refused one do not stop the host: the hostile
// validator's type fails closed (nothing signed) while other types and
// plugins work, its failing watcher is skipped and reported, and a plugin
// whose digest does not match the config is reported as failed.
func TestPluginFailuresThroughMCP(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	plugins := entries(t, "deliberation", "full", "reactions")
	plugins[2].SHA256 = strings.Repeat("0", 64) // not the file: refused at load
	carol := startWithPlugins(t, h, "carol", 0xC0, plugins)
	alice := startWithPlugins(t, h, "alice", 0xA1, nil)

	if st := pluginState(t, carol, "reactions"); st["state"] != "failed" || st["loaded"] != false || st["last_error_code"] != "plugin_digest_mismatch" {
		t.Fatalf("refused plugin %v", st)
	}
	roomID := openRoom(t, h, alice, []any{
		map[string]any{"use": "adp:deliberation/1.0"},
		map[string]any{"type": "demo.loop", "kind": "signal", "title": "Loop", "schema": map[string]any{"type": "object"}},
	}, carol)

	// full's demo.loop validator never returns: the write is refused at
	// the deadline, with the reason, and nothing is signed.
	before := carol.lastNonce(t)
	code, data := callErr(t, carol.proc, "room_submit_event", map[string]any{"room_id": roomID, "type": "demo.loop", "payload": map[string]any{}})
	if code != "invalid_event" || data["fail_closed"] != true || data["plugin_code"] != "plugin_timeout" || get(index(data["errors"], 0), "plugin") != "full" {
		t.Fatalf("failing validator: %s %v", code, data)
	}
	if carol.lastNonce(t) != before {
		t.Fatal("a write refused by a failing validator used a nonce")
	}
	// Other types, and other plugins' types, still work.
	submit(t, carol, roomID, "poll.create", map[string]any{"poll_id": "c1", "question": "Still working?",
		"options": []any{map[string]any{"id": "y", "label": "Yes"}}})
	if r := call(t, carol.proc, "room_send_message", map[string]any{"room_id": roomID, "content": "still here", "on_head_mismatch": "send_anyway"}); r["status"] != "sent" {
		t.Fatalf("message %v", r)
	}

	// alice (no plugins) writes a demo.loop and a poll: carol's sync runs
	// full's watcher, which never returns and is skipped; deliberation's
	// watch item still arrives.
	submit(t, alice, roomID, "demo.loop", map[string]any{})
	poll := submit(t, alice, roomID, "poll.create", map[string]any{"poll_id": "a1", "question": "Lunch?",
		"options": []any{map[string]any{"id": "y", "label": "Yes"}}})
	call(t, carol.proc, "room_state", map[string]any{"room_id": roomID, "refresh": true})
	items, _ := call(t, carol.proc, "inbox_next", map[string]any{"kinds": []any{"room.event.custom"}})["items"].([]any)
	if len(items) != 1 || get(items[0], "plugin") != "deliberation" || get(items[0], "event_id") != get(poll, "item", "event_id") {
		t.Fatalf("custom items %v", items)
	}
	st := pluginState(t, carol, "full")
	if st["state"] != "loaded" || st["failures"].(float64) < 2 || get(st, "failures_by_code", "plugin_timeout").(float64) < 2 ||
		!strings.Contains(st["last_error"].(string), "watch") || st["last_error_at"] == nil {
		t.Fatalf("hostile plugin state %v", st)
	}
	if st := pluginState(t, carol, "deliberation"); st["failures"] != float64(0) {
		t.Fatalf("deliberation state %v", st)
	}
	// Registered packs still go to the host as imports, and an unknown
	// plugin pack is refused before signing.
	before = carol.lastNonce(t)
	now := time.Now().UnixMilli()
	code, _ = callErr(t, carol.proc, "room_create", map[string]any{"host": h.Origin(), "topic": "x", "visibility": "public",
		"start_time": now - 1000, "end_time": now + 3600_000, "types": []any{map[string]any{"use": "example:nothing/1.0"}}})
	if code != adp.CodePackUnavailable || carol.lastNonce(t) != before {
		t.Fatalf("unknown plugin pack: %s", code)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// warmPluginCache compiles modules into a home's plugin compilation cache
// with host/plugin's precompile helper built without the race detector:
// under -race the binary under test compiles a Go plugin in over 15 s
// (wazero's compiler is instrumented too), and reading the cache is what
// every later start of apconnect does anyway. The helper reports the
// binary's wazero version, which keys the cache. Without -race the binary
// compiles the modules itself.
func warmPluginCache(t *testing.T, dir string, wasm ...string) {
	t.Helper()
	if !raceEnabled {
		return
	}
	out, err := exec.Command(goTool(), "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	version := ""
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "dep" && f[1] == "github.com/tetratelabs/wazero" {
			version = f[2]
		}
	}
	if version == "" {
		t.Fatalf("the binary does not say which wazero it has:\n%s", out)
	}
	helper := filepath.Join(t.TempDir(), "precompile")
	build := exec.Command(goTool(), "build", "-o", helper, "-ldflags=-X=github.com/tetratelabs/wazero/internal/version.version="+version,
		"apconnect/host/plugin/internal/precompile")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the precompile helper: %v\n%s", err, out)
	}
	if out, err := exec.Command(helper, append([]string{"-cache", dir}, wasm...)...).CombinedOutput(); err != nil {
		t.Fatalf("precompile: %v\n%s", err, out)
	}
}

// The real binary with plugins: `apconnect doctor` reports a loaded plugin
// and a digest mismatch (FAIL), and `apconnect mcp` serves the loaded
// plugin's tool and validator and reports the refused one, without
// stopping.
func TestPluginsMCPProcess(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	paths := buildPlugins(t, "deliberation", "reactions")
	delib := pluginEntry(t, "deliberation", paths["deliberation"])
	home := newHome(t, h, "alice")
	// The operator's edit: the empty plugins list init wrote gives way to
	// two [[plugins]] entries.
	cfgFile := filepath.Join(home, config.FileName)
	text, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	grants, _ := json.Marshal(delib.Grants)
	wrong := strings.Repeat("0", 64)
	cfgText := strings.Replace(string(text), "plugins = []\n", "", 1) +
		fmt.Sprintf("\n[[plugins]]\nname = \"deliberation\"\npath = %q\nsha256 = %q\ngrants = %s\n", delib.Path, delib.SHA256, grants) +
		fmt.Sprintf("\n[[plugins]]\nname = \"reactions\"\npath = %q\nsha256 = %q\ngrants = [\"validate\", \"tools\"]\n", paths["reactions"], wrong)
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	warmPluginCache(t, filepath.Join(home, config.DefaultStateDir, pluginhost.CacheDirName), delib.Path)

	code, out, errOut := apconnect(t, "doctor", "--home", home)
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "plugin" {
			rows[f[1]] = strings.Join(f[2:], " ")
		}
	}
	if code != 1 || !strings.HasPrefix(rows["deliberation"], "ok deliberation 1.0.0 loaded") ||
		!strings.Contains(rows["deliberation"], "sha256 "+delib.SHA256+" matches the config") ||
		!strings.Contains(rows["deliberation"], "tools: deliberation_tally") ||
		!strings.HasPrefix(rows["reactions"], "FAIL ") || !strings.Contains(rows["reactions"], "config pins "+wrong) ||
		!strings.Contains(rows["reactions"], "plugin_digest_mismatch") {
		t.Fatalf("doctor: exit %d\n%s\n%s", code, out, errOut)
	}

	alice := startMCP(t, home, "alice", procOptions{})
	list, err := alice.cs.ListTools(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "deliberation_tally") || slices.Contains(names, "reactions_summary") {
		t.Fatalf("tools %v", names)
	}
	states := map[string]any{}
	for _, p := range call(t, alice, "identity_current", nil)["plugins"].([]any) {
		states[get(p, "name").(string)] = p
	}
	if get(states["deliberation"], "state") != "loaded" || get(states["reactions"], "state") != "failed" ||
		get(states["reactions"], "last_error_code") != "plugin_digest_mismatch" {
		t.Fatalf("identity_current plugins %v", states)
	}
	roomID := createRoomWith(t, alice, h.Origin(), []any{map[string]any{"use": "adp:deliberation/1.0"}})
	poll := call(t, alice, "room_submit_event", map[string]any{"room_id": roomID, "type": "poll.create", "payload": map[string]any{
		"poll_id": "p", "question": "Process?", "options": []any{map[string]any{"id": "a", "label": "A"}}}})
	pollID := get(poll, "item", "event_id")
	code2, data := callErr(t, alice, "room_submit_event", map[string]any{"room_id": roomID, "type": "poll.vote",
		"payload": map[string]any{"poll_event_id": pollID, "option_ids": []any{"b"}}})
	if code2 != "invalid_event" || get(index(data["errors"], 0), "plugin") != "deliberation" {
		t.Fatalf("validator: %s %v", code2, data)
	}
	call(t, alice, "room_submit_event", map[string]any{"room_id": roomID, "type": "poll.vote",
		"payload": map[string]any{"poll_event_id": pollID, "option_ids": []any{"a"}}})
	tally := structured(t, toolCall(t, alice, "deliberation_tally", map[string]any{"room_id": roomID}))
	if get(index(tally["polls"], 0), "voters") != float64(1) {
		t.Fatalf("tally %v", tally)
	}
	alice.stop()
	if !strings.Contains(alice.stderr.String(), "plugin refused") {
		t.Fatalf("the refused plugin was not logged:\n%s", alice.stderr.String())
	}
}

func createRoomWith(t testing.TB, p *proc, host string, types []any) string {
	t.Helper()
	now := time.Now().UnixMilli()
	r := call(t, p, "room_create", map[string]any{"host": host, "topic": "e2e", "visibility": "public",
		"start_time": now - 1000, "end_time": now + 3600_000, "types": types, "policy": openRoles})
	return get(r, "room", "room_id").(string)
}
